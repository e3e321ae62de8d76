#!/usr/bin/env node
/**
 * Webhook delivery benchmark (issue 10): the webhook-dispatcher as a real process (its own fresh
 * database, real Kafka topics), events produced onto request.lifecycle as the orchestrator does,
 * deliveries to a local receiver on 127.0.0.1. Beside it, in the same run, bare loops posting the
 * very payloads the dispatcher delivered in the throughput phase (same bodies, same paths, same
 * webhook-ids, signed again with the endpoints' secrets at send time, the same header set) to the
 * same receiver with the same number of requests in flight. See bench/README.md.
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   npm run bench:webhooks
 *   BENCH_EVENTS=1000 BENCH_ENDPOINTS=4 BENCH_RATES=100,250 npm run bench:webhooks
 *
 * Phases:
 *   throughput  BENCH_EVENTS events at once, each to BENCH_ENDPOINTS endpoints: deliveries/s from
 *               the first produce to the last delivery received
 *   latency     for each rate of BENCH_RATES (events/s; each event is BENCH_ENDPOINTS deliveries),
 *               BENCH_LATENCY_S seconds at that steady rate: event-to-delivery p50/p99, from the
 *               produce call to the receiver's arrival, and the delivery rate actually reached
 *   idle tenant the same burst for a tenant without endpoints: dispatcher CPU per event (the
 *               fan-out should skip them without a transaction)
 *   bare loops  the throughput phase's deliveries posted again directly (see above), same
 *               concurrency, after 200 of them as warm-up: from a worker thread (its own event loop,
 *               as the dispatcher has its own process) with node:http and with undici (the
 *               dispatcher's client), and, as the earlier runs did, from the receiver's own thread
 *               with node:http. The ratio is taken against the fastest of them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { webhooksApi } from '@wdr/contracts';
import { createServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { KafkaBus, makeEnvelope } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import {
  createTestDatabase,
  KAFKA_BROKERS,
  PG_ADMIN_URL,
  startServiceProcess,
  testCallerCredentials,
  uniqueTopicPrefix,
  withDatabase,
} from '@wdr/testkit';
import { backendsCpuSince as cpuSince, cpuOfPid, postgresBackendsCpu } from './lib/cpu.mjs';
import { benchReport } from './lib/report.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 4);
/** Steady rates of the latency phases, events/s (BENCH_RATE, a single rate, is still read). */
const RATES = (process.env.BENCH_RATES ?? process.env.BENCH_RATE ?? '100,250').split(',').map(Number);
const LATENCY_S = Number(process.env.BENCH_LATENCY_S ?? 10);
const ENDPOINT_CONCURRENCY = Number(process.env.BENCH_ENDPOINT_CONCURRENCY ?? 16);
const CONCURRENCY = ENDPOINTS * ENDPOINT_CONCURRENCY;
/**
 * The dispatcher build to run: this checkout's (default), or another checkout's app directory,
 * e.g. `BENCH_DISPATCHER_APP=/tmp/before/apps/webhook-dispatcher` to measure the code before a
 * change with this very bench. Its database still comes from this checkout's migrations: move
 * the migrations that build does not know aside (and prepare the templates again) for the run, or
 * it runs on indexes its statements were not written for (the held_leases migration's due index
 * cannot serve an older claim: 4,480 of 10,000 deliveries in the time allowed).
 */
const DISPATCHER_APP = process.env.BENCH_DISPATCHER_APP;
/** Write a V8 CPU profile of the dispatcher to this directory (read with bench/profile-top.mjs). */
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;

// ---------------------------------------------------------------------------- the receiver
/**
 * Arrival time of every delivery, by request id, and the webhook-ids seen (duplicates counted while
 * the dispatcher delivers; the bare loops repeat its ids on purpose). While `captured` is set, each
 * delivery's path, webhook-id, body and header names are kept for the bare loops to post again.
 */
const arrivals = [];
const seenIds = new Set();
let duplicates = 0;
let countDuplicates = true;
let captured;
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    const id = String(req.headers['webhook-id']);
    if (countDuplicates) {
      if (seenIds.has(id)) duplicates += 1;
      seenIds.add(id);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const body = JSON.parse(text);
    arrivals.push({ at, requestId: body.data?.request_id });
    captured?.push({ path: req.url, id, body: text, headerNames: headerNamesOf(req) });
    res.writeHead(204).end();
  });
});
const headerNamesOf = (req) =>
  req.rawHeaders
    .filter((_, i) => i % 2 === 0)
    .map((h) => h.toLowerCase())
    .sort()
    .join(',');
receiver.keepAliveTimeout = 30_000;
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

// ---------------------------------------------------------------------------- the dispatcher
const database = await createTestDatabase('webhook-dispatcher');
const prefix = uniqueTopicPrefix();
const bus = new KafkaBus({ clientId: 'bench-webhooks', brokers: KAFKA_BROKERS, prefix, log: createLogger('bench', 'silent') });
await bus.ensureTopics(['requestLifecycle', 'billingEvents']);
await bus.connect();
const dispatcher = await startServiceProcess(
  'webhook-dispatcher',
  {
    DATABASE_URL: database.url,
    KAFKA_TOPIC_PREFIX: prefix,
    KAFKA_TOPICS_MODE: 'create',
    LOG_LEVEL: process.env.BENCH_DISPATCHER_LOG_LEVEL ?? 'warn',
    TARGET_ALLOWLIST: '127.0.0.1',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
    // 0: every message through the durable queue (the path before direct delivery), for a same-build comparison.
    ...(process.env.WEBHOOK_DIRECT_WAIT_MS ? { WEBHOOK_DIRECT_WAIT_MS: process.env.WEBHOOK_DIRECT_WAIT_MS } : {}),
    ...(CPU_PROF_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${CPU_PROF_DIR}` } : {}),
  },
  DISPATCHER_APP ? { appDir: resolve(DISPATCHER_APP) } : {},
);
// A failed run (a thrown phase) must not leave the dispatcher running: kill it as the bench exits.
process.on('exit', () => dispatcher.proc()?.kill('SIGKILL'));
const client = createServiceClient({ name: 'webhook-dispatcher', baseUrl: dispatcher.url, identity: testCallerCredentials('gateway') });

const tenantId = randomUUID();
const secrets = [];
for (let i = 0; i < ENDPOINTS; i += 1) {
  const created = await callInternal(client, webhooksApi.createEndpoint, {
    body: { tenant_id: tenantId, url: `${receiverUrl}/hooks/${i}`, event_types: ['request.completed'] },
  });
  secrets.push(created.secret);
}

const cpuSeconds = () => cpuOfPid(dispatcher.proc().pid);
/** CPU seconds of each Postgres backend connected to the dispatcher's database, by pid. */
const postgresCpu = () => postgresBackendsCpu(PG_ADMIN_URL, [database.name]);

/**
 * `count` request.completed events of `tenant`, produced in batches of 200 sent at once (one after
 * the other, the bench's own producer took longer than the dispatcher's first delivery); answers the
 * produce time of each request id.
 */
async function produce(tenant, count) {
  const sentAt = new Map();
  const sends = [];
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
    sends.push(bus.send(bus.topic('requestLifecycle'), batch));
  }
  await Promise.all(sends);
  return sentAt;
}

async function untilArrived(n, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (arrivals.length < n) {
    if (Date.now() > deadline) throw new Error(`only ${arrivals.length} of ${n} deliveries arrived:\n${dispatcher.logs()}`);
    await sleep(20);
  }
}

/** Deliveries each side makes untimed before its timed run: the dispatcher's warm-up burst, the bare loops' first posts. */
const WARM_DELIVERIES = 200;
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

// Warm-up: connections, prepared statements, consumer assignment, and as many deliveries as the
// bare loops post untimed before theirs (WARM_DELIVERIES), produced at once so that the dispatcher
// opens its connections to the receiver as the bare loops do in theirs.
const WARM_EVENTS = Math.ceil(WARM_DELIVERIES / ENDPOINTS);
await produce(tenantId, WARM_EVENTS);
await untilArrived(WARM_EVENTS * ENDPOINTS, 60_000);
arrivals.length = 0;

// ---------------------------------------------------------------------------- throughput
captured = [];
const cpu0 = cpuSeconds();
const pg0 = await postgresCpu();
const t0 = performance.now();
await produce(tenantId, EVENTS);
const producedMs = performance.now() - t0;
await untilArrived(EVENTS * ENDPOINTS, 300_000);
const burstS = (arrivals[arrivals.length - 1].at - t0) / 1000;
const burstCpu = cpuSeconds() - cpu0;
const burstPgCpu = cpuSince(pg0, await postgresCpu());
/** Milliseconds from the first produce to the arrival of each tenth of the burst's deliveries. */
const burstDeciles = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((d) => Math.round(arrivals[Math.floor((d / 10) * arrivals.length)].at - t0));
const dispatcherRate = (EVENTS * ENDPOINTS) / burstS;
arrivals.length = 0;
const delivered = captured;
captured = undefined;

// ---------------------------------------------------------------------------- latency at steady rates
async function steady(rate) {
  const events = rate * LATENCY_S;
  const produced = new Map();
  const tick = 100;
  const perTick = Math.max(1, Math.round((rate * tick) / 1000));
  const cpuStart = cpuSeconds();
  const start = performance.now();
  for (let sent = 0; sent < events; sent += perTick) {
    for (const [k, v] of await produce(tenantId, Math.min(perTick, events - sent))) produced.set(k, v);
    const next = start + ((sent + perTick) / rate) * 1000;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await untilArrived(events * ENDPOINTS, 120_000);
  const cpu = cpuSeconds() - cpuStart;
  const latencies = arrivals.map((a) => a.at - produced.get(a.requestId)).sort((x, y) => x - y);
  const reached = arrivals.length / ((arrivals[arrivals.length - 1].at - start) / 1000);
  arrivals.length = 0;
  return { rate, deliveriesPerS: rate * ENDPOINTS, reached, latencies, cpuPerDelivery: cpu / (events * ENDPOINTS) };
}
const steadyResults = [];
for (const rate of RATES) steadyResults.push(await steady(rate));

// ---------------------------------------------------------------------------- a tenant without endpoints
const idleCpu0 = cpuSeconds();
const idleTenant = randomUUID();
await produce(idleTenant, EVENTS);
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
  if (performance.now() - idleStart > 120_000)
    throw new Error(`the dispatcher did not consume the idle tenant's events (lag ${await lagOf()}):\n${dispatcher.logs()}`);
  await sleep(100);
}
const idleCpu = cpuSeconds() - idleCpu0;
await admin.disconnect();
const messageCount = async (tenant) =>
  (await withDatabase(database.url, (c) => c.query('SELECT count(*)::int AS n FROM webhook_messages WHERE tenant_id = $1::uuid', [tenant])))
    .rows[0].n;
const idleMessages = await messageCount(idleTenant);
const tenantMessages = await messageCount(tenantId);
/**
 * The tenant's messages recorded delivered, and their delivered attempts: a delivery counted by the
 * receiver is only a delivery once stored (direct delivery stores it after the answer). Read until
 * they stop changing, a few seconds at most after the last phase.
 */
const storedOf = async (tenant) =>
  (
    await withDatabase(database.url, (c) =>
      c.query(
        `SELECT (SELECT count(*)::int FROM webhook_messages WHERE tenant_id = $1::uuid AND status = 'delivered') AS delivered,
                (SELECT count(*)::int FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id
                  WHERE m.tenant_id = $1::uuid AND a.outcome = 'delivered') AS attempts`,
        [tenant],
      ),
    )
  ).rows[0];
let stored = await storedOf(tenantId);
for (let i = 0; i < 50 && stored.delivered < tenantMessages; i += 1) {
  await sleep(100);
  stored = await storedOf(tenantId);
}

// ---------------------------------------------------------------------------- bare loops
/**
 * The bare sender, run in a worker thread or inline: posts `items` (the dispatcher's own deliveries)
 * with `concurrency` requests in flight, signing each at send time as the dispatcher does, with the
 * dispatcher's headers; the first `warm` of them untimed. Answers deliveries/s and the busy time of
 * its event loop per delivery (its CPU, as near as a thread can tell).
 */
const bareSource = `
const { createHmac, createSecretKey } = require('node:crypto');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
async function bare({ receiverUrl, items, secrets, concurrency, client, undiciPath, warm }) {
  const origin = new URL(receiverUrl).origin;
  // Each secret imported once, as the dispatcher does (kit's secretKeyOf).
  const keys = new Map();
  const sign = (secret, id, body) => {
    const ts = Math.floor(Date.now() / 1000);
    let key = keys.get(secret);
    if (!key) keys.set(secret, (key = createSecretKey(Buffer.from(secret.slice('whsec_'.length), 'base64'))));
    return {
      'content-type': 'application/json',
      'user-agent': 'wdr-webhooks/1',
      'accept-encoding': 'identity',
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': 'v1,' + createHmac('sha256', key).update(id + '.' + ts + '.' + body).digest('base64'),
    };
  };
  let post, close;
  if (client === 'undici') {
    const { Agent } = require(undiciPath);
    const agent = new Agent({ connections: concurrency, pipelining: 1 });
    post = (path, body, headers) =>
      new Promise((resolve, reject) => {
        agent.dispatch({ origin, path, method: 'POST', headers, body }, {
          onRequestStart() {}, onResponseStart() {}, onResponseData() {}, onResponseEnd: () => resolve(), onResponseError: (_c, err) => reject(err),
        });
      });
    close = () => agent.close();
  } else {
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    post = (path, body, headers) =>
      new Promise((resolve, reject) => {
        const req = http.request(origin + path, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end(body);
      });
    close = () => agent.destroy();
  }
  const run = async (list) => {
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < list.length) {
        const { path, id, body, endpoint } = list[next++];
        await post(path, body, sign(secrets[endpoint], id, body));
      }
    }));
  };
  await run(items.slice(0, warm));
  const elu0 = performance.eventLoopUtilization();
  const start = performance.now();
  await run(items);
  const seconds = (performance.now() - start) / 1000;
  const busyMs = performance.eventLoopUtilization(elu0).active;
  await close();
  return { rate: items.length / seconds, busyUsPerDelivery: (busyMs * 1000) / items.length };
}
`;
const undiciPath = createRequire(import.meta.url).resolve('undici');
const bareItems = delivered.map((d) => ({ path: d.path, id: d.id, body: d.body, endpoint: Number(/\/hooks\/(\d+)/.exec(d.path)[1]) }));
const bareData = { receiverUrl, items: bareItems, secrets, concurrency: CONCURRENCY, undiciPath, warm: WARM_DELIVERIES };
function bareInWorker(client) {
  const worker = new Worker(
    `${bareSource}; require('node:worker_threads').parentPort.postMessage(null); bare(require('node:worker_threads').workerData).then((r) => require('node:worker_threads').parentPort.postMessage(r));`,
    {
      eval: true,
      workerData: { ...bareData, client },
    },
  );
  return new Promise((resolve, reject) => {
    worker.on('message', (m) => m && (resolve(m), void worker.terminate()));
    worker.on('error', reject);
  });
}
countDuplicates = false;
captured = [];
const bare = {
  'worker thread, undici': await bareInWorker('undici'),
  'worker thread, node:http': await bareInWorker('http'),
  // eslint-disable-next-line no-new-func, typescript/no-implied-eval -- the receiver's own source, run on this thread as the comparison point
  "receiver's thread, node:http": await new Function('require', `${bareSource}; return bare;`)(createRequire(import.meta.url))({
    ...bareData,
    client: 'http',
  }),
};
// The bare loops post what the dispatcher posted: the same header names (a check, not a claim).
const bareHeaders = new Set(captured.map((c) => c.headerNames));
const dispatcherHeaders = new Set(delivered.map((c) => c.headerNames));
captured = undefined;
const bareRate = Math.max(...Object.values(bare).map((b) => b.rate));

// ---------------------------------------------------------------------------- report
const bodyBytes = delivered.map((d) => Buffer.byteLength(d.body)).sort((x, y) => x - y);
console.log(
  `\ndispatcher: ${DISPATCHER_APP ?? 'apps/webhook-dispatcher'}; ${EVENTS} events x ${ENDPOINTS} endpoints, ${CONCURRENCY} deliveries in flight at most (${ENDPOINT_CONCURRENCY} per endpoint); bodies ${bodyBytes[0]}-${bodyBytes[bodyBytes.length - 1]} bytes; ${cpus().length} CPUs, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log('| | deliveries/s | notes |');
console.log('|---|---|---|');
console.log(
  `| dispatcher (Kafka event -> signed POST -> message and attempt stored; the queue for what waits or fails) | ${dispatcherRate.toFixed(0)} | ${EVENTS * ENDPOINTS} deliveries in ${burstS.toFixed(2)} s, dispatcher CPU ${((burstCpu * 1e6) / (EVENTS * ENDPOINTS)).toFixed(0)} us/delivery, its Postgres backends ${((burstPgCpu * 1e6) / (EVENTS * ENDPOINTS)).toFixed(0)} us/delivery |`,
);
console.log(
  `burst: produced in ${producedMs.toFixed(0)} ms; ms from the first produce to each tenth of the deliveries: ${burstDeciles.join(' ')} (last ${(burstS * 1000).toFixed(0)})`,
);
for (const [name, b] of Object.entries(bare)) {
  const busy = name.startsWith('receiver') ? 'thread (sender and receiver) busy' : 'sender thread busy';
  console.log(
    `| bare loop (${name}): the same ${bareItems.length} payloads re-signed and posted | ${b.rate.toFixed(0)} | ${busy} ${b.busyUsPerDelivery.toFixed(0)} us/delivery |`,
  );
}
console.log(
  `header names: dispatcher ${[...dispatcherHeaders].join(' | ')}; bare ${[...bareHeaders].join(' | ')}${bareHeaders.size === dispatcherHeaders.size && [...bareHeaders].every((h) => dispatcherHeaders.has(h)) ? ' (same)' : ' (DIFFERENT)'}`,
);
console.log(
  `ratio dispatcher/fastest bare loop: ${(dispatcherRate / bareRate).toFixed(2)}x (target >= 0.5x); dispatcher ${dispatcherRate.toFixed(0)}/s (target >= 1000/s)`,
);
for (const r of steadyResults) {
  const l = r.latencies;
  console.log(
    `event-to-delivery at ${r.rate} events/s (${r.deliveriesPerS} deliveries/s offered, ${r.reached.toFixed(0)}/s reached) for ${LATENCY_S} s: p50 ${pct(l, 50).toFixed(1)} ms, p99 ${pct(l, 99).toFixed(1)} ms, max ${l[l.length - 1].toFixed(1)} ms (target p99 < 1000 ms); dispatcher CPU ${(r.cpuPerDelivery * 1e6).toFixed(0)} us/delivery`,
  );
}
console.log(`events of a tenant without endpoints: dispatcher CPU ${((idleCpu * 1e6) / EVENTS).toFixed(0)} us/event (${EVENTS} events)`);
console.log(`duplicate webhook-ids received from the dispatcher: ${duplicates}`);

const report = benchReport('webhooks');
const expected = (WARM_EVENTS + EVENTS + RATES.reduce((n, r) => n + r * LATENCY_S, 0)) * ENDPOINTS;
report.check(
  'one message per event and endpoint, nothing more',
  tenantMessages === expected,
  `${tenantMessages} messages, ${expected} expected`,
);
report.check(
  'every message recorded delivered, with one delivered attempt',
  stored.delivered === expected && stored.attempts === expected,
  `${stored.delivered} delivered, ${stored.attempts} delivered attempts, ${expected} expected`,
);
report.check('no duplicate webhook-id received', duplicates === 0, `${duplicates} duplicates`);
report.check(
  'bare loops post the same header names',
  bareHeaders.size === dispatcherHeaders.size && [...bareHeaders].every((h) => dispatcherHeaders.has(h)),
);
report.check(
  "bare loops post the dispatcher's own deliveries",
  bareItems.length === EVENTS * ENDPOINTS,
  `${bareItems.length} of ${EVENTS * ENDPOINTS}`,
);
report.check('no message for the tenant without endpoints', idleMessages === 0, `${idleMessages} messages`);
report.figure('webhooks: deliveries/s', dispatcherRate, {
  reference: bareRate,
  referenceName: 'fastest bare signed-post loop',
  target: { op: '>=', value: 0.5, of: 'ratio' },
});
for (const r of steadyResults) {
  report.figure(`webhooks: p99 ms at ${r.deliveriesPerS} deliveries/s offered`, pct(r.latencies, 99), {
    unit: 'ms',
    target: { op: '<', value: 1000, of: 'value' },
  });
}
report.figure('webhooks: Postgres CPU per delivery (burst)', (burstPgCpu * 1e6) / (EVENTS * ENDPOINTS), { unit: 'us' });
report.figure('webhooks: dispatcher CPU per event of a tenant without endpoints', (idleCpu * 1e6) / EVENTS, { unit: 'us' });

if (process.env.BENCH_SHOW_LOGS) console.log(dispatcher.logs().slice(-3000));
await dispatcher.kill('SIGTERM');
await bus.disconnect();
receiver.closeAllConnections();
receiver.close();
await database.drop();
report.finish();
