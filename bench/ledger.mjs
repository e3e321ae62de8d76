#!/usr/bin/env node
/**
 * Ledger benchmark: reservations and settlements per second against the real Postgres, with p50 and
 * p99 latency, beside a baseline of bare single-row Postgres INSERTs measured in the same run on
 * the same database (so the ratios say what the ledger's bookkeeping costs on this machine).
 *
 *   node bench/ledger.mjs [--ops 2000] [--concurrency 16] [--tenants 64] [--kafka]
 *
 * Needs: a build (`npx turbo run build`), the ledger's template database (`node
 * packages/testkit/dist/prepare-templates.js`), Postgres on 127.0.0.1:5432; `--kafka` also
 * measures settlement end to end through billing.commands and the real consumer (needs Kafka).
 * Each scenario runs `ops` operations from `concurrency` workers on a pool of 10 connections.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase, eventually, identityEnvOf, uniqueTopicPrefix } from '@wdr/testkit';
import { makeEnvelope } from '@wdr/kit/kafka';
import { createLedgerService } from '../apps/billing-ledger/dist/app.js';
import { createLedgerDeps } from '../apps/billing-ledger/dist/deps.js';
import { loadLedgerEnv } from '../apps/billing-ledger/dist/env.js';
import { fund } from '../apps/billing-ledger/dist/domain/funding.js';
import { reserve, reserveBatch, reservePaths } from '../apps/billing-ledger/dist/domain/reservations.js';
import { settle } from '../apps/billing-ledger/dist/domain/settlement.js';
import { benchReport } from './lib/report.mjs';

const report = benchReport('ledger');

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '16' },
    tenants: { type: 'string', default: '64' },
    kafka: { type: 'boolean', default: false },
  },
});
const OPS = Number(values.ops);
const CONCURRENCY = Number(values.concurrency);
const TENANTS = Number(values.tenants);

/** Run `ops` calls of `fn(i)` from `concurrency` workers; per-call latency and overall throughput. */
async function measure(name, ops, fn) {
  const latencies = new Array(ops);
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < ops; i = next++) {
        const s = process.hrtime.bigint();
        await fn(i);
        latencies[i] = Number(process.hrtime.bigint() - s) / 1e6;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { name, ops, perSecond: ops / seconds, p50: q(0.5), p99: q(0.99) };
}

const database = await createTestDatabase('billing-ledger');
const results = [];
let service;
const deps = createLedgerDeps(
  loadLedgerEnv({
    ...identityEnvOf('billing-ledger'),
    DATABASE_URL: database.url,
    KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
    LOG_LEVEL: 'silent',
    OUTBOX_POLL_MS: '50',
  }),
);
try {
  // Baseline: one autocommitted single-row INSERT per operation, same database, same pool size.
  const u = new URL(database.url);
  u.searchParams.delete('schema');
  const pool = new pg.Pool({ connectionString: u.toString(), max: 10, options: '-c search_path=ledger' });
  await pool.query(
    'CREATE TABLE bench_rows (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );
  const tenant = randomUUID();
  results.push(
    await measure('baseline: bare INSERT (1 row)', OPS, () =>
      pool.query('INSERT INTO bench_rows (id, tenant_id, amount) VALUES ($1, $2, 1)', [randomUUID(), tenant]),
    ),
  );
  await pool.end();

  const db = deps.db;
  const tenants = Array.from({ length: TENANTS }, () => randomUUID());
  for (const t of [...tenants, tenant]) await fund(db, 'top_up', { tenant_id: t, amount: 1_000_000_000, reference: `bench-${t}` });
  const body = (i, t) => ({
    request_id: randomUUID(),
    tenant_id: t,
    route_mode: i % 4 === 0 ? 'browser' : 'http',
    proxy_type: null,
    max_credits: null,
  });

  const reserved = [];
  results.push(
    await measure(`reserve (${TENANTS} tenants)`, OPS, async (i) => {
      const b = body(i, tenants[i % TENANTS]);
      await reserve(db, 2, b);
      reserved.push(b);
    }),
  );
  results.push(await measure('reserve (1 tenant: one hot account row)', OPS, (i) => reserve(db, 2, body(i, tenant))));
  const BATCH = 100;
  const batch = await measure(`reserve batch of ${BATCH} (${TENANTS} tenants)`, Math.max(1, Math.floor(OPS / BATCH)), (i) =>
    reserveBatch(db, 2, {
      tenant_id: tenants[i % TENANTS],
      items: Array.from({ length: BATCH }, (_, k) => {
        const { tenant_id: _t, ...item } = body(k, tenant);
        return item;
      }),
    }),
  );
  results.push({ ...batch, name: `${batch.name} (per job)`, perSecond: batch.perSecond * BATCH });

  // Settlement as the consumer runs it: record the command as processed and resolve, in one transaction.
  results.push(
    await measure('settle (consumer transaction)', reserved.length, async (i) => {
      const r = reserved[i];
      await db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe("INSERT INTO processed_messages (consumer, event_id) VALUES ('bench', $1::uuid)", randomUUID());
        await settle(tx, {
          request_id: r.request_id,
          outcome: i % 5 === 0 ? 'failed' : 'completed',
          route_mode: r.route_mode,
          captcha_tokens: 0,
          captcha_solves: i % 7 === 0 ? 1 : 0,
        });
      });
    }),
  );

  // What was measured: every reservation made, and every one of them settled (none left held).
  const states = await db.$queryRawUnsafe(
    'SELECT state, count(*)::int AS n FROM reservations WHERE request_id = ANY($1::uuid[]) GROUP BY state',
    reserved.map((r) => r.request_id),
  );
  const left = states.filter((x) => x.state === 'reserved').reduce((n, x) => n + x.n, 0);
  const resolved = states.filter((x) => x.state !== 'reserved').reduce((n, x) => n + x.n, 0);
  report.check(
    'every reservation of the reserve run stored',
    reserved.length === OPS && left + resolved === OPS,
    `${left + resolved} of ${OPS}`,
  );
  report.check('every one of them settled', resolved === OPS, `${resolved} resolved, ${left} still reserved`);

  if (values.kafka) {
    // End to end: reserve, then N commands on billing.commands, timed until the consumer resolved them all.
    service = createLedgerService(deps);
    await service.start();
    const batchItems = Array.from({ length: OPS }, (_, i) => body(i, tenant));
    for (let k = 0; k < OPS; k += 1000) {
      await reserveBatch(db, 2, { tenant_id: tenant, items: batchItems.slice(k, k + 1000).map(({ tenant_id: _t, ...item }) => item) });
    }
    const envelopes = batchItems.map((b) =>
      makeEnvelope('billingCommands', 'billing.settlement_requested', tenant, {
        request_id: b.request_id,
        outcome: 'completed',
        route_mode: b.route_mode,
        captcha_tokens: 0,
      }),
    );
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < envelopes.length; k += 500) {
      await deps.bus.send(
        deps.bus.topic('billingCommands'),
        // Keyed as the orchestrator keys them (the catalog's billing.commands key): by tenant.
        envelopes.slice(k, k + 500).map((envelope) => ({ key: envelope.tenant_id, envelope })),
      );
    }
    const ids = batchItems.map((b) => b.request_id);
    await eventually(
      async () =>
        Number(
          (
            await db.$queryRawUnsafe(
              "SELECT count(*)::int AS n FROM reservations WHERE state <> 'reserved' AND request_id = ANY($1::uuid[])",
              ids,
            )
          )[0].n,
        ),
      (n) => n === OPS,
      600_000,
      100,
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    results.push({
      name: 'settle via Kafka (consumer; one tenant: one partition)',
      ops: OPS,
      perSecond: OPS / seconds,
      p50: NaN,
      p99: NaN,
    });
    // What was measured: every command settled (charged, not refunded or left held), each once.
    const settled = await db.$queryRawUnsafe(
      "SELECT count(*) FILTER (WHERE state = 'settled')::int AS settled, count(*)::int AS n FROM reservations WHERE request_id = ANY($1::uuid[])",
      ids,
    );
    report.check(
      'via Kafka: every command settled, once',
      settled[0].settled === OPS && settled[0].n === OPS,
      `${settled[0].settled} settled of ${settled[0].n} reservations, ${OPS} commands`,
    );
  }
} finally {
  if (service) await service.stop();
  else await deps.db.$disconnect();
  await database.drop();
}

const baseline = results[0].perSecond;
const pad = (s, n) => String(s).padEnd(n);
const num = (x, d = 1) => (Number.isNaN(x) ? '-' : x.toFixed(d));
console.log(
  `\nledger benchmark: ${OPS} ops per scenario, ${CONCURRENCY} workers, pool of 10 connections, Postgres ${await serverVersion()}\n`,
);
console.log(`${pad('scenario', 52)}${pad('ops/s', 10)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}vs baseline`);
for (const r of results) {
  console.log(
    `${pad(r.name, 52)}${pad(num(r.perSecond, 0), 10)}${pad(num(r.p50, 2), 9)}${pad(num(r.p99, 2), 9)}${(r.perSecond / baseline).toFixed(2)}x`,
  );
}
const find = (prefix) => results.find((r) => r.name.startsWith(prefix));
report.figure(`ledger: reserve (${TENANTS} tenants) ops/s`, find('reserve (').perSecond, {
  reference: baseline,
  referenceName: 'bare INSERT',
});
report.figure('ledger: reserve (1 hot tenant) ops/s', find('reserve (1 tenant').perSecond, {
  reference: baseline,
  referenceName: 'bare INSERT',
});
// One command per transaction: the expiry sweep's path, not the consumer's (informational).
report.figure('ledger: settle, one command per transaction, ops/s', find('settle (consumer').perSecond, {
  reference: baseline,
  referenceName: 'bare INSERT',
});
// Settlement as the product runs it (issue 24, item 3): the consumer settles each Kafka batch in one transaction.
if (find('settle via Kafka'))
  report.figure('ledger: settle through the consumer (Kafka batches) ops/s', find('settle via Kafka').perSecond, {
    reference: baseline,
    referenceName: 'bare INSERT',
    target: { op: '>=', value: 0.3, of: 'ratio' },
  });
// Which way the single reservations went (one statement for a known account, or the transaction).
console.log(`\nreservations: ${reservePaths.oneStatement} in one statement, ${reservePaths.transaction} through the transaction`);

report.finish();

async function serverVersion() {
  const c = new pg.Client({ connectionString: 'postgresql://postgres@127.0.0.1:5432/postgres' });
  await c.connect();
  const v = (await c.query('SHOW server_version')).rows[0].server_version;
  await c.end();
  return v;
}
