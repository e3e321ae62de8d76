#!/usr/bin/env node
/**
 * Load benchmark of POST /api/v1/data/requests with the whole fleet running, beside a baseline
 * measured in the same run: a bare Express handler doing one Postgres INSERT and one Kafka produce
 * (idempotent producer, acks=all, like the fleet's outbox relay). See bench/README.md.
 *
 *   npm run bench:submissions            # build first: npx turbo run build
 *   BENCH_DURATION_S=10 BENCH_CONCURRENCY=32 npm run bench:submissions
 *
 * Only loopback traffic: the fleet fetches the local fixture site.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { Kafka, logLevel } from 'kafkajs';
import { applyKafkajsIdleLoopFix } from '@wdr/kit/kafka';
import pg from 'pg';
import { KAFKA_BROKERS, PG_ADMIN_URL, SERVICE_NAMES, adminCommand, startFixtureSite, startFleet, withDatabase } from '@wdr/testkit';
import { cpuOfPid } from './lib/cpu.mjs';
import { CPU_PROF_DIR, benchGatewayEnv, nodeOptionsEnv, productionEnv, recordProfiledFleet } from './lib/fleet.mjs';
import { BENCH_LEASES, leaseEnv, leaseRestOf } from './lib/leases.mjs';
import { benchReport } from './lib/report.mjs';

// Kit's kafkajs fixes, as in the fleet's services: without them the baseline's producer spins a
// 1 ms timer per broker connection (kafkajs-idle-fix.ts) in this process while the fleet is measured.
applyKafkajsIdleLoopFix();

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 12);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const MODES = (process.env.BENCH_RUNS ?? 'pipeline,admission,hot').split(',');
/** Tenants the spread admission load goes round (the hot-tenant run puts the same load on one). */
const TENANTS = Number(process.env.BENCH_TENANTS ?? 64);
/** Seconds of an idle fleet measured before the load (0 skips it). */
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 60);
/** Credit leases as in production (on; `BENCH_LEASES=false`: every admission reserves; bench/lib/leases.mjs). */
const LEASES = BENCH_LEASES;
/** BENCH_FLEET_ENV: more settings for the fleet, as JSON `{"all": {...}, "<service>": {...}}` (an experiment's knobs). */
const EXTRA_ENV = JSON.parse(process.env.BENCH_FLEET_ENV ?? '{}');

/**
 * Closed-loop load: CONCURRENCY workers on keep-alive connections, each sending the next request
 * as soon as the previous answer arrived, for `seconds`. Latency is measured per request from
 * write to the end of the response body.
 */
async function load({ url, headers, body, seconds, acceptedStatus }) {
  // `headers` may be a function: each request asks it (the spread load goes round its tenants).
  const headersOf = typeof headers === 'function' ? headers : () => headers;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const target = new URL(url);
  const payload = Buffer.from(JSON.stringify(body));
  const latencies = [];
  const statuses = new Map();
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;

  const once = () =>
    new Promise((resolve) => {
      const started = performance.now();
      const req = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headersOf() },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            if (res.statusCode === acceptedStatus) latencies.push(performance.now() - started);
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(payload);
    });

  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  const elapsed = (performance.now() - startedAt) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] : NaN);
  return {
    accepted: latencies.length,
    perSecond: latencies.length / elapsed,
    p50: pct(50),
    p99: pct(99),
    statuses: Object.fromEntries(statuses),
    errors,
  };
}

async function measure(name, opts, cpuOf) {
  const warm = WARMUP_S > 0 ? await load({ ...opts, seconds: WARMUP_S }) : { accepted: 0, statuses: {}, errors: 0 };
  const before = cpuOf ? cpuOf() : undefined;
  const r = await load({ ...opts, seconds: DURATION_S });
  const drainedIn = opts.drained ? await waitUntil(opts.drained) : 0;
  const after = cpuOf ? cpuOf() : undefined;
  console.error(
    `  ${name}: ${r.accepted} accepted in ${DURATION_S} s${opts.drained ? `, all terminal and settled ${drainedIn.toFixed(1)} s later` : ''}`,
  );
  const cpu = before && Object.fromEntries(Object.keys(after).map((s) => [s, ((after[s] - before[s]) * 1000) / Math.max(1, r.accepted)]));
  // With a drain, throughput counts the time until the last accepted request was finished too.
  const completedPerSecond = opts.drained ? r.accepted / (DURATION_S + drainedIn) : undefined;
  // Every answer of the warm-up and the run, for the checks (all accepted, every accepted one stored).
  const answers = { accepted: warm.accepted + r.accepted, other: { ...warm.statuses }, errors: warm.errors + r.errors };
  for (const [status, n] of Object.entries(r.statuses)) answers.other[status] = (answers.other[status] ?? 0) + n;
  delete answers.other[opts.acceptedStatus];
  return { name, ...r, cpu, completedPerSecond, answers };
}

/** Seconds until `check()` resolves true (polled every 250 ms, at most 10 minutes). */
async function waitUntil(check) {
  const t0 = performance.now();
  while (!(await check())) {
    if (performance.now() - t0 > 600_000) throw new Error('the fleet did not drain within 10 minutes');
    await new Promise((r) => setTimeout(r, 250));
  }
  return (performance.now() - t0) / 1000;
}

/** CPU seconds (user + system) of each service's process, from /proc: no request to the service. */
const fleetCpu = (fleet) => Object.fromEntries(SERVICE_NAMES.map((s) => [s, cpuOfPid(fleet.pid(s))]));

/** Resident set size of each service's node process (MB); Chromium children are separate processes. */
function fleetRss(fleet) {
  const out = {};
  for (const s of SERVICE_NAMES) {
    const status = readFileSync(`/proc/${fleet.pid(s)}/status`, 'utf8');
    out[s] = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) / 1024;
  }
  return out;
}

/** A fleet with no traffic: CPU share of one core per service over `seconds`, and RSS at the end. */
async function idle(fleet, seconds) {
  const before = fleetCpu(fleet);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = fleetCpu(fleet);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = Object.fromEntries(SERVICE_NAMES.map((s) => [s, ((after[s] - before[s]) / elapsed) * 100]));
  return { cpu, rss: fleetRss(fleet) };
}

/** The baseline: what one insert and one produce per request cost on this machine. */
async function startBaseline() {
  const suffix = randomBytes(4).toString('hex');
  const database = `wdr_bench_${suffix}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10 });
  // The database is dropped WITH (FORCE) at the end: a connection the pool still holds then must not end the bench.
  pool.on('error', () => undefined);
  await pool.query(
    'CREATE TABLE submissions (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), url text NOT NULL, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );

  const topic = `bench.baseline.${suffix}`;
  const kafka = new Kafka({ clientId: 'bench-baseline', brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });
  const kafkaAdmin = kafka.admin();
  await kafkaAdmin.connect();
  await kafkaAdmin.createTopics({ topics: [{ topic, numPartitions: 6, replicationFactor: 1 }], waitForLeaders: true });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();

  const app = express();
  app.use(express.json());
  app.post('/submit', async (req, res) => {
    try {
      const { rows } = await pool.query('INSERT INTO submissions (url, body) VALUES ($1, $2) RETURNING id, created_at', [
        req.body.url,
        req.body,
      ]);
      await producer.send({ topic, acks: -1, messages: [{ key: rows[0].id, value: JSON.stringify({ id: rows[0].id }) }] });
      res.status(202).json({ id: rows[0].id, created_at: rows[0].created_at });
    } catch {
      res.status(500).end();
    }
  });
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });

  return {
    url: `http://127.0.0.1:${server.address().port}/submit`,
    stop: async () => {
      await new Promise((r) => server.close(r));
      await producer.disconnect();
      await kafkaAdmin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await kafkaAdmin.disconnect();
      await pool.end();
      const a = new pg.Client({ connectionString: PG_ADMIN_URL });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await a.end();
    },
  };
}

function table(rows) {
  const fmt = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const lines = [
    ['run', 'accepted/s', 'p50 ms', 'p99 ms', 'accepted', 'other answers'],
    ...rows.map((r) => [
      r.name,
      fmt(r.perSecond),
      fmt(r.p50),
      fmt(r.p99),
      String(r.accepted),
      Object.entries(r.statuses)
        .filter(([s]) => s !== '202')
        .map(([s, n]) => `${s}x${n}`)
        .concat(r.errors ? [`errors x${r.errors}`] : [])
        .join(' ') || '-',
    ]),
  ];
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  return lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

const results = [];
console.error(`bench: ${CONCURRENCY} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per run`);

const baseline = await startBaseline();
try {
  results.push(
    await measure('baseline: express + 1 pg insert + 1 kafka produce', {
      url: baseline.url,
      headers: {},
      body: { url: 'http://127.0.0.1:1/page', mode: 'http' },
      acceptedStatus: 202,
    }),
  );
} finally {
  await baseline.stop();
}

const report = benchReport('submissions');
/** Every answer was the accepted status (limits are lifted: anything else is a fault of the run). */
const checkAnswers = (r) =>
  report.check(
    `${r.name}: every submission answered 202`,
    r.errors === 0 && Object.keys(r.answers.other).length === 0,
    `${r.answers.accepted} accepted; other answers ${JSON.stringify(r.answers.other)}, connection errors ${r.answers.errors}`,
  );
checkAnswers(results[0]);

const site = await startFixtureSite();
const fleetEnv = {
  gateway: benchGatewayEnv(),
  'fetch-orchestrator': leaseEnv(),
  all: { ...productionEnv(), ...nodeOptionsEnv() },
};
// BENCH_FLEET_ENV's settings on top, service by service.
for (const [service, settings] of Object.entries(EXTRA_ENV)) fleetEnv[service] = { ...fleetEnv[service], ...settings };
const fleet = await startFleet({ env: fleetEnv });
let idleFigures;
recordProfiledFleet(fleet);
const CREDITS = 100_000_000;
/** A tenant with CREDITS credits (an admin command, as an operator makes one). */
const newTenant = async (name) => {
  const t = await adminCommand(fleet, ['create-tenant', '--name', name, '--credits', String(CREDITS)]);
  return { id: t.tenant_id, key: t.api_key };
};
const balanceOf = async (tenant) => {
  const res = await fetch(`${fleet.url('gateway')}/api/v1/data/balance`, { headers: { 'x-api-key': tenant.key } });
  if (res.status !== 200) throw new Error(`balance answered ${res.status}`);
  return res.json();
};
/** The orchestrator's rows of these tenants: count, states, cache answers and the base price summed. */
const requestsOf = async (tenants) =>
  (
    await withDatabase(fleet.databases['fetch-orchestrator'].url, (c) =>
      c.query(
        `SELECT count(*)::int AS n,
                count(*) FILTER (WHERE status = 'completed' AND token_state = 'settled')::int AS settled,
                count(*) FILTER (WHERE status = 'pending' AND token_state = 'reserved')::int AS queued,
                count(*) FILTER (WHERE cached)::int AS cached,
                coalesce(sum(base_tokens), 0)::bigint AS base_tokens,
                count(*) FILTER (WHERE lease_id IS NOT NULL)::int AS leased,
                coalesce(sum(base_tokens) FILTER (WHERE lease_id IS NOT NULL), 0)::bigint AS leased_tokens
         FROM data_requests WHERE tenant_id = ANY($1::uuid[])`,
        [tenants.map((t) => t.id)],
      ),
    )
  ).rows[0];
try {
  const tenant = await newTenant('bench');
  const hot = await newTenant('bench-hot');
  // The spread load's tenants, created a few at a time (each is an admin process).
  const spread = [];
  for (let i = 0; i < TENANTS; i += 8) {
    spread.push(...(await Promise.all(Array.from({ length: Math.min(8, TENANTS - i) }, (_, k) => newTenant(`bench-spread-${i + k}`)))));
  }
  if (IDLE_S > 0) {
    console.error(`  idle: ${IDLE_S} s with no traffic`);
    await new Promise((r) => setTimeout(r, 5_000)); // let start-up work (joins, first polls) pass
    idleFigures = await idle(fleet, IDLE_S);
  }
  // Drained: no request queued or running, none whose tokens are not settled or refunded yet.
  const open = async () =>
    (
      await withDatabase(fleet.databases['fetch-orchestrator'].url, (c) =>
        c.query(
          `SELECT count(*)::int AS n FROM data_requests WHERE status NOT IN ('completed', 'failed', 'cancelled') OR token_state NOT IN ('settled', 'refunded')`,
        ),
      )
    ).rows[0].n;
  const submit = (mode, tenants) => {
    let next = 0;
    return {
      url: `${fleet.url('gateway')}/api/v1/data/requests`,
      headers: () => ({ 'x-api-key': tenants[next++ % tenants.length].key }),
      // The cache is not the subject: skip_cache (never answered from the cache) and
      // cache_ttl_seconds 0 (no entry written either), so every submission really runs.
      body: { url: `${site.url}/page`, mode, skip_cache: true, cache_ttl_seconds: 0 },
      acceptedStatus: 202,
    };
  };
  if (MODES.includes('pipeline')) {
    const r = await measure(
      'fleet: full pipeline (http mode: accepted, fetched, settled)',
      { ...submit('http', [tenant]), drained: async () => (await open()) === 0 },
      () => fleetCpu(fleet),
    );
    results.push(r);
    checkAnswers(r);
    const rows = await requestsOf([tenant]);
    const b = await balanceOf(tenant);
    report.check(
      `${r.name}: every accepted request stored`,
      rows.n === r.answers.accepted,
      `${rows.n} rows, ${r.answers.accepted} accepted`,
    );
    report.check(`${r.name}: every request completed and settled`, rows.settled === rows.n, `${rows.settled} of ${rows.n}`);
    report.check(`${r.name}: no result from the cache`, rows.cached === 0, `${rows.cached} cached: true`);
    // Leases: a block leaves the balance and counts as reserved until used (bench/lib/leases.mjs).
    const charged = CREDITS - Number(b.balance_tokens) - Number(b.reserved_tokens);
    const held = Number(b.reserved_tokens) - (await leaseRestOf(fleet, [tenant.id]));
    report.check(
      `${r.name}: charge equal to the price, nothing held`,
      charged === Number(rows.base_tokens) && held === 0,
      `balance + reserved down by ${charged}, base price of the requests ${rows.base_tokens}, ${held} still held beyond the open leases`,
    );
  }
  const admissionRun = async (name, tenants) => {
    const cpu = () => ({ ...fleetCpu(fleet), 'browser-renderer': 0 });
    const r = await measure(name, submit('browser', tenants), cpu);
    results.push(r);
    checkAnswers(r);
    // Nothing runs (the renderer is stopped): every accepted request is stored, queued, its base price held.
    const rows = await requestsOf(tenants);
    const balances = await Promise.all(tenants.map(balanceOf));
    const held = balances.reduce((n, b) => n + Number(b.reserved_tokens), 0);
    const spent = balances.reduce((n, b) => n + CREDITS - Number(b.balance_tokens) - Number(b.reserved_tokens), 0);
    report.check(
      `${r.name}: every accepted request stored and queued`,
      rows.n === r.answers.accepted && rows.queued === rows.n,
      `${rows.n} rows (${rows.queued} queued), ${r.answers.accepted} accepted`,
    );
    if (LEASES) {
      // Leased tokens show as reserved whether used or not: the leases hold at least every leased
      // request's price, the rest is reserved one by one, and nothing is charged before it runs.
      report.check(
        `${r.name}: the price of every admitted request held (${rows.leased} of ${rows.n} from a lease)`,
        held >= Number(rows.base_tokens) && spent === 0,
        `${held} held (leases included), base price ${rows.base_tokens} (${rows.leased_tokens} leased), ${spent} charged`,
      );
      r.leased = rows.leased;
    } else {
      report.check(
        `${r.name}: the price of every admitted request held`,
        held === Number(rows.base_tokens),
        `${held} held, base price ${rows.base_tokens}`,
      );
    }
    return r;
  };
  let spreadRun;
  let hotRun;
  if (MODES.includes('admission') || MODES.includes('hot')) {
    // Admission alone: browser-mode requests whose render jobs nobody takes (the renderer is
    // stopped), so each is authenticated, limited, reserved, stored and announced, not executed.
    process.kill(fleet.pid('browser-renderer'), 'SIGSTOP');
    try {
      if (MODES.includes('admission'))
        spreadRun = await admissionRun(`fleet: admission alone (${TENANTS} tenants, renderer paused)`, spread);
      if (MODES.includes('hot')) hotRun = await admissionRun('fleet: admission alone (one hot tenant, renderer paused)', [hot]);
    } finally {
      process.kill(fleet.pid('browser-renderer'), 'SIGCONT');
    }
  }
  results.spreadRun = spreadRun;
  results.hotRun = hotRun;
} finally {
  // The renderer would render the admission run's backlog on the way out: it is stopped hard.
  await fleet.kill('browser-renderer', 'SIGKILL');
  await fleet.stop();
  await site.close();
}

console.log(table(results));
const base = results[0];
console.log('');
for (const r of results.slice(1)) {
  console.log(`${r.name}`);
  console.log(
    `  accepted/s vs baseline: ${(r.perSecond / base.perSecond).toFixed(2)}x${r.completedPerSecond !== undefined ? `; completed/s (until the last was settled) ${r.completedPerSecond.toFixed(1)} = ${(r.completedPerSecond / base.perSecond).toFixed(2)}x` : ''}; p99 ${(r.p99 / base.p99).toFixed(1)}x the baseline's`,
  );
  const total = Object.values(r.cpu).reduce((a, b) => a + b, 0);
  r.cpuTotal = total;
  console.log(
    `  CPU per accepted submission: ${total.toFixed(1)} ms (${Object.entries(r.cpu)
      .map(([s, ms]) => `${s} ${ms.toFixed(1)}`)
      .join(', ')})`,
  );
}
const pipeline = results.find((r) => r.completedPerSecond !== undefined);
if (pipeline) {
  report.figure('submissions: full pipeline accepted/s', pipeline.perSecond, {
    reference: base.perSecond,
    referenceName: 'bare express + insert + produce',
    target: { op: '>=', value: 0.25, of: 'ratio' },
  });
  report.figure('submissions: full pipeline completed/s', pipeline.completedPerSecond, {
    reference: base.perSecond,
    referenceName: 'bare accepted/s',
  });
  report.figure('submissions: full pipeline p99 ms', pipeline.p99, { unit: 'ms', reference: base.p99, referenceName: 'bare p99' });
  report.figure('submissions: fleet CPU per submission', pipeline.cpuTotal, { unit: 'ms', target: { op: '<=', value: 6, of: 'value' } });
}
const { spreadRun, hotRun } = results;
if (spreadRun) {
  report.figure(`submissions: admission alone (${TENANTS} tenants) accepted/s`, spreadRun.perSecond, {
    reference: base.perSecond,
    referenceName: 'bare express + insert + produce',
    target: { op: '>=', value: 0.4, of: 'ratio' },
  });
  report.figure('submissions: admission alone CPU per submission', spreadRun.cpuTotal, { unit: 'ms' });
}
if (hotRun && spreadRun) {
  console.log(
    `\none hot tenant: ${hotRun.perSecond.toFixed(1)} accepted/s against ${spreadRun.perSecond.toFixed(1)} spread over ${TENANTS} tenants = ${(hotRun.perSecond / spreadRun.perSecond).toFixed(2)}x (target >= 0.8x)`,
  );
  report.figure('submissions: one hot tenant accepted/s', hotRun.perSecond, {
    reference: spreadRun.perSecond,
    referenceName: `spread over ${TENANTS} tenants`,
    target: { op: '>=', value: 0.8, of: 'ratio' },
  });
}
if (idleFigures) {
  const total = Object.values(idleFigures.cpu).reduce((a, b) => a + b, 0);
  console.log(
    `\nidle over ${IDLE_S} s: ${total.toFixed(2)} % of one core for the fleet (${SERVICE_NAMES.map((s) => `${s} ${idleFigures.cpu[s].toFixed(2)}`).join(', ')})`,
  );
  console.log(`idle RSS (MB, node process): ${SERVICE_NAMES.map((s) => `${s} ${idleFigures.rss[s].toFixed(0)}`).join(', ')}`);
  report.figure(`idle fleet CPU over ${IDLE_S} s (% of a core)`, total, { unit: '%', target: { op: '<', value: 1, of: 'value' } });
  report.figure('idle webhook-dispatcher CPU (% of a core)', idleFigures.cpu['webhook-dispatcher'], { unit: '%' });
  const [biggest, mb] = Object.entries(idleFigures.rss).sort((a, b) => b[1] - a[1])[0];
  report.figure(`idle RSS, largest service (${biggest})`, mb, { unit: 'MB', target: { op: '<', value: 150, of: 'value' } });
}
if (CPU_PROF_DIR) console.log(`\nCPU profiles: ${CPU_PROF_DIR} (summarise with: node bench/profile-top.mjs ${CPU_PROF_DIR})`);
report.finish();
