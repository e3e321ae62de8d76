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
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { KAFKA_BROKERS, PG_ADMIN_URL, SERVICE_NAMES, adminCommand, startFixtureSite, startFleet } from '@wdr/testkit';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 12);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/** `http` runs the whole pipeline (fetch, settle); `residential_browser` is admitted, then failed and refunded at once while no residential route exists (admission cost only); `browser` renders every page. */
const MODE = process.env.BENCH_MODE ?? 'http';

/**
 * Closed-loop load: CONCURRENCY workers on keep-alive connections, each sending the next request
 * as soon as the previous answer arrived, for `seconds`. Latency is measured per request from
 * write to the end of the response body.
 */
async function load({ url, headers, body, seconds, acceptedStatus }) {
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
          headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
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
  if (WARMUP_S > 0) await load({ ...opts, seconds: WARMUP_S });
  const before = cpuOf ? await cpuOf() : undefined;
  const r = await load({ ...opts, seconds: DURATION_S });
  const after = cpuOf ? await cpuOf() : undefined;
  console.error(`  ${name}: ${r.accepted} accepted in ${DURATION_S} s`);
  const cpu = before && Object.fromEntries(Object.keys(after).map((s) => [s, ((after[s] - before[s]) * 1000) / Math.max(1, r.accepted)]));
  return { name, ...r, cpu };
}

/** process_cpu_seconds_total of every service of the fleet, from its /metrics. */
async function fleetCpu(fleet) {
  const out = {};
  for (const s of SERVICE_NAMES) {
    const text = await (await fetch(`${fleet.url(s)}/metrics`)).text();
    out[s] = Number(/^process_cpu_seconds_total(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text)?.[1] ?? NaN);
  }
  return out;
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
  await pool.query('CREATE TABLE submissions (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), url text NOT NULL, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');

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
      const { rows } = await pool.query('INSERT INTO submissions (url, body) VALUES ($1, $2) RETURNING id, created_at', [req.body.url, req.body]);
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
  results.push(await measure('baseline: express + 1 pg insert + 1 kafka produce', { url: baseline.url, headers: {}, body: { url: 'http://127.0.0.1:1/page', mode: 'http' }, acceptedStatus: 202 }));
} finally {
  await baseline.stop();
}

const site = await startFixtureSite();
const fleet = await startFleet({
  env: {
    gateway: { REDIS_KEY_PREFIX: `wdr:bench:${randomBytes(4).toString('hex')}:`, RATE_LIMIT_SUBMISSIONS: '10000000', CONCURRENCY_LIMIT: '10000000', LOG_LEVEL: 'error' },
    all: { LOG_LEVEL: 'error' },
  },
});
try {
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'bench', '--credits', '100000000']);
  results.push(
    await measure(
      `fleet: POST /api/v1/data/requests (${MODE} mode)`,
      {
        url: `${fleet.url('gateway')}/api/v1/data/requests`,
        headers: { 'x-api-key': tenant.api_key },
        body: { url: `${site.url}/page`, mode: MODE },
        acceptedStatus: 202,
      },
      () => fleetCpu(fleet),
    ),
  );
} finally {
  await fleet.stop();
  await site.close();
}

console.log(table(results));
const [base, full] = results;
console.log(`\nfleet / baseline throughput: ${((full.perSecond / base.perSecond) * 100).toFixed(1)} %`);
console.log(
  `CPU per accepted submission (ms, all work it causes during the run): ${Object.entries(full.cpu)
    .map(([s, ms]) => `${s} ${ms.toFixed(1)}`)
    .join(', ')}`,
);
