#!/usr/bin/env node
/**
 * Webhook delivery benchmark (issue 10): the webhook-dispatcher as a real process (its own fresh
 * database, real Kafka topics), events produced onto request.lifecycle as the orchestrator does,
 * deliveries to a local receiver on 127.0.0.1. Beside it, in the same run, a bare loop posting the
 * same kind of signed payloads (Standard Webhooks HMAC per message) to the same receiver with the
 * same number of requests in flight. See bench/README.md.
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   npm run bench:webhooks
 *   BENCH_EVENTS=1000 BENCH_ENDPOINTS=4 BENCH_RATE=100 npm run bench:webhooks
 *
 * Phases:
 *   throughput  BENCH_EVENTS events at once, each to BENCH_ENDPOINTS endpoints: deliveries/s from
 *               the first produce to the last delivery received
 *   latency     BENCH_RATE events/s for BENCH_LATENCY_S seconds (a load the dispatcher keeps up
 *               with): event-to-delivery p50/p99, from the produce call to the receiver's arrival
 *   idle tenant the same burst for a tenant without endpoints: dispatcher CPU per event (the
 *               fan-out should skip them without a transaction)
 *   bare loop   the throughput phase's deliveries posted directly, signed, same concurrency
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { webhooksApi } from '@wdr/contracts';
import { createServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { KafkaBus, makeEnvelope } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import { createTestDatabase, KAFKA_BROKERS, startServiceProcess, uniqueTopicPrefix } from '@wdr/testkit';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 4);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const LATENCY_S = Number(process.env.BENCH_LATENCY_S ?? 10);
const ENDPOINT_CONCURRENCY = Number(process.env.BENCH_ENDPOINT_CONCURRENCY ?? 16);
const CONCURRENCY = ENDPOINTS * ENDPOINT_CONCURRENCY;
/** Write a V8 CPU profile of the dispatcher to this directory (read with bench/profile-top.mjs). */
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;

// ---------------------------------------------------------------------------- the receiver
/** Arrival time of every delivery, by request id, and the webhook-ids seen (duplicates counted). */
const arrivals = [];
const seenIds = new Set();
let duplicates = 0;
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    const id = String(req.headers['webhook-id']);
    if (seenIds.has(id)) duplicates += 1;
    seenIds.add(id);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    arrivals.push({ at, requestId: body.data?.request_id });
    res.writeHead(204).end();
  });
});
receiver.keepAliveTimeout = 30_000;
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

// ---------------------------------------------------------------------------- the dispatcher
const database = await createTestDatabase('webhook-dispatcher');
const prefix = uniqueTopicPrefix();
const bus = new KafkaBus({ clientId: 'bench-webhooks', brokers: KAFKA_BROKERS, prefix, log: createLogger('bench', 'silent') });
await bus.ensureTopics(['requestLifecycle', 'billingEvents']);
await bus.connect();
const dispatcher = await startServiceProcess('webhook-dispatcher', {
  DATABASE_URL: database.url,
  KAFKA_TOPIC_PREFIX: prefix,
  KAFKA_TOPICS_MODE: 'create',
  LOG_LEVEL: 'warn',
  TARGET_ALLOWLIST: '127.0.0.1',
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  WEBHOOK_CONCURRENCY: String(CONCURRENCY),
  WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
  ...(CPU_PROF_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${CPU_PROF_DIR}` } : {}),
});
// A failed run (a thrown phase) must not leave the dispatcher running: kill it as the bench exits.
process.on('exit', () => dispatcher.proc()?.kill('SIGKILL'));
const client = createServiceClient({ name: 'webhook-dispatcher', baseUrl: dispatcher.url });

const tenantId = randomUUID();
const secrets = [];
for (let i = 0; i < ENDPOINTS; i += 1) {
  const created = await callInternal(client, webhooksApi.createEndpoint, {
    body: { tenant_id: tenantId, url: `${receiverUrl}/hooks/${i}`, event_types: ['request.completed'] },
  });
  secrets.push(created.secret);
}

function cpuSeconds() {
  const stat = readFileSync(`/proc/${dispatcher.proc().pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, clock ticks of 10 ms
}

/** `count` request.completed events of `tenant`, produced in batches; answers the produce time of each request id. */
async function produce(tenant, count) {
  const sentAt = new Map();
  for (let i = 0; i < count; i += 200) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + 200); j += 1) {
      const requestId = randomUUID();
      const envelope = makeEnvelope('requestLifecycle', 'request.event_appended', tenant, {
        request_id: requestId,
        event_id: 4,
        kind: 'request.completed',
        status: 'completed',
        payload: { result: { stage: 'http', status_code: 200, content_type: 'text/html', bytes: 5120, redirects: 0, elapsed_ms: 80 } },
        created_at: new Date().toISOString(),
      });
      batch.push({ key: requestId, envelope });
      sentAt.set(requestId, performance.now());
    }
    await bus.send(bus.topic('requestLifecycle'), batch);
  }
  return sentAt;
}

async function untilArrived(n, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (arrivals.length < n) {
    if (Date.now() > deadline) throw new Error(`only ${arrivals.length} of ${n} deliveries arrived:\n${dispatcher.logs()}`);
    await sleep(20);
  }
}

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

// Warm-up: connections, prepared statements, consumer assignment.
await produce(tenantId, 20);
await untilArrived(20 * ENDPOINTS, 60_000);
arrivals.length = 0;

// ---------------------------------------------------------------------------- throughput
const cpu0 = cpuSeconds();
const t0 = performance.now();
await produce(tenantId, EVENTS);
await untilArrived(EVENTS * ENDPOINTS, 300_000);
const burstS = (arrivals[arrivals.length - 1].at - t0) / 1000;
const burstCpu = cpuSeconds() - cpu0;
const dispatcherRate = (EVENTS * ENDPOINTS) / burstS;
arrivals.length = 0;

// ---------------------------------------------------------------------------- latency at a steady rate
const steadyEvents = RATE * LATENCY_S;
const produced = new Map();
const tick = 100;
const perTick = Math.max(1, Math.round((RATE * tick) / 1000));
const steadyStart = performance.now();
for (let sent = 0; sent < steadyEvents; sent += perTick) {
  for (const [k, v] of await produce(tenantId, Math.min(perTick, steadyEvents - sent))) produced.set(k, v);
  const next = steadyStart + ((sent + perTick) / RATE) * 1000;
  const wait = next - performance.now();
  if (wait > 0) await sleep(wait);
}
await untilArrived(steadyEvents * ENDPOINTS, 120_000);
const latencies = arrivals.map((a) => a.at - produced.get(a.requestId)).sort((x, y) => x - y);
arrivals.length = 0;

// ---------------------------------------------------------------------------- a tenant without endpoints
const idleCpu0 = cpuSeconds();
await produce(randomUUID(), EVENTS);
// The consumer's progress is not visible from outside without endpoints: wait until its lag is gone.
const admin = bus.kafka.admin();
await admin.connect();
const lagOf = async () => {
  const offsets = await admin.fetchOffsets({ groupId: `${prefix}webhook-dispatcher`, topics: [bus.topic('requestLifecycle')] });
  const ends = await admin.fetchTopicOffsets(bus.topic('requestLifecycle'));
  let lag = 0;
  for (const p of ends) {
    const committed = Number(offsets[0].partitions.find((x) => x.partition === p.partition)?.offset ?? -1);
    lag += Math.max(0, Number(p.offset) - Math.max(0, committed));
  }
  return lag;
};
const idleStart = performance.now();
while ((await lagOf()) > 0) {
  if (performance.now() - idleStart > 120_000) throw new Error('the dispatcher did not consume the idle tenant\'s events');
  await sleep(100);
}
const idleCpu = cpuSeconds() - idleCpu0;
await admin.disconnect();

// ---------------------------------------------------------------------------- bare loop
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const bareBodies = Array.from({ length: EVENTS * ENDPOINTS }, (_, i) => ({
  i,
  body: JSON.stringify({ type: 'request.completed', timestamp: new Date().toISOString(), data: { request_id: randomUUID(), event: { type: 'request.completed' } } }),
}));
function signed(secret, id, body) {
  const ts = Math.floor(Date.now() / 1000);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}` };
}
const post = (path, body, headers) =>
  new Promise((resolve, reject) => {
    const req = http.request(`${receiverUrl}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
let next = 0;
const bareStart = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < bareBodies.length) {
      const { i, body } = bareBodies[next++];
      const id = `msg_bare${i}`;
      await post(`/hooks/${i % ENDPOINTS}`, body, signed(secrets[i % ENDPOINTS], id, body));
    }
  }),
);
const bareRate = bareBodies.length / ((performance.now() - bareStart) / 1000);
agent.destroy();

// ---------------------------------------------------------------------------- report
console.log(`\n${EVENTS} events x ${ENDPOINTS} endpoints, ${CONCURRENCY} deliveries in flight at most (${ENDPOINT_CONCURRENCY} per endpoint); ${cpus().length} CPUs, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| | deliveries/s | notes |');
console.log('|---|---|---|');
console.log(`| dispatcher (Kafka event -> durable message -> signed POST -> attempt recorded) | ${dispatcherRate.toFixed(0)} | ${(EVENTS * ENDPOINTS)} deliveries in ${burstS.toFixed(2)} s, dispatcher CPU ${((burstCpu * 1e6) / (EVENTS * ENDPOINTS)).toFixed(0)} us/delivery |`);
console.log(`| bare loop (signed POST only) | ${bareRate.toFixed(0)} | same receiver, same concurrency |`);
console.log(`ratio dispatcher/bare: ${(dispatcherRate / bareRate).toFixed(2)}x (target >= 0.5x); dispatcher ${dispatcherRate.toFixed(0)}/s (target >= 1000/s)`);
console.log(`event-to-delivery at ${RATE} events/s (${RATE * ENDPOINTS} deliveries/s) for ${LATENCY_S} s: p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms (target p99 < 1000 ms)`);
console.log(`events of a tenant without endpoints: dispatcher CPU ${((idleCpu * 1e6) / EVENTS).toFixed(0)} us/event (${EVENTS} events)`);
console.log(`duplicate webhook-ids received: ${duplicates}`);

if (process.env.BENCH_SHOW_LOGS) console.log(dispatcher.logs().slice(-3000));
await dispatcher.kill('SIGTERM');
await bus.disconnect();
receiver.closeAllConnections();
receiver.close();
await database.drop();
