#!/usr/bin/env node
/**
 * What the webhook sender's statements cost Postgres, alone: one connection replays a burst as the
 * sender runs it (a claim of WEBHOOK_CONCURRENCY, then each group of successes recorded with the
 * claim of what it frees, until every message is delivered) on a fresh database of the dispatcher,
 * and reads the buffers the database touched (`pg_stat_database`) and the wall time. No HTTP, no
 * Kafka, no other process: a figure that moves with the statements and the indexes, little with
 * the machine's load (bench/README.md, "held webhook leases").
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   node bench/webhook-statements.mjs
 *   node bench/webhook-statements.mjs --dist /tmp/before/apps/webhook-dispatcher/dist --template <its template database>
 *
 * BENCH_MESSAGES (per endpoint, 1000), BENCH_ENDPOINTS (4), BENCH_GROUP (16); BENCH_EXPLAIN=N prints the
 * plan of the Nth record statement, with the buffers of each step (it is then run by EXPLAIN ANALYZE).
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PgSql } from '@wdr/kit/pg-sql';
import { createTestDatabase, PG_ADMIN_URL, queryRows } from '@wdr/testkit';
import { benchReport } from './lib/report.mjs';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DIST = resolve(arg('--dist') ?? 'apps/webhook-dispatcher/dist');
const TEMPLATE = arg('--template');
const PER_ENDPOINT = Number(process.env.BENCH_MESSAGES ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 4);
const GROUP = Number(process.env.BENCH_GROUP ?? 16);
const EXPLAIN_AT = Number(process.env.BENCH_EXPLAIN ?? 0);
/** As the sender claims: WEBHOOK_CONCURRENCY 64, 16 per endpoint (bench/webhooks.mjs's), a lease of 40 s. */
const limits = () => ({ limit: 64, perEndpoint: 16, leaseMs: 40_000, token: randomUUID() });

// The sender's own calls, from the build measured.
const { claimDue } = await import(pathToFileURL(`${DIST}/domain/claim.js`).href);
const { RECORD_AND_CLAIM, recordDelivered, recordAndClaimParams } = await import(pathToFileURL(`${DIST}/domain/delivered-batch.js`).href);
if (EXPLAIN_AT && !recordAndClaimParams) throw new Error(`BENCH_EXPLAIN: ${DIST} does not export recordAndClaimParams`);

function printPlan(n, depth = 0) {
  const name = [n['Node Type'], n['Subplan Name'] && `[${n['Subplan Name']}]`, n['Index Name']].filter(Boolean).join(' ');
  const removed = n['Rows Removed by Filter'] ? ` removed=${n['Rows Removed by Filter']}` : '';
  console.log(
    `${'  '.repeat(depth)}${name} rows=${n['Actual Rows']} loops=${n['Actual Loops']} buffers=${n['Shared Hit Blocks']}${removed}`,
  );
  for (const k of n.Plans ?? []) printPlan(k, depth + 1);
}

const report = benchReport('webhook-statements');
const database = await createTestDatabase('webhook-dispatcher', TEMPLATE ? { template: TEMPLATE } : {});
// One connection planned as the dispatcher's delivery pool plans (deps.ts: customPlans, indexPlans),
// so the statistics flushed below are all of this replay's.
const sql = new PgSql(database.url, { max: 1, customPlans: true, indexPlans: true });
const buffers = async () => {
  await sql.rows('SELECT pg_stat_force_next_flush()', []);
  await sql.rows('SELECT 1', []);
  const [row] = await queryRows(PG_ADMIN_URL, 'SELECT (blks_hit + blks_read)::bigint AS b FROM pg_stat_database WHERE datname = $1', [
    database.name,
  ]);
  return Number(row.b);
};

try {
  const endpoints = Array.from({ length: ENDPOINTS }, () => randomUUID());
  for (const id of endpoints)
    await sql.$executeRawUnsafe(
      `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, updated_at)
       VALUES ($1::uuid, gen_random_uuid(), 'sealed', 'http://127.0.0.1', ARRAY['request.completed'], 'sealed', now())`,
      id,
    );
  // Statistics from a near-empty table, as after a quiet spell.
  await sql.$executeRawUnsafe('ANALYZE');
  for (const id of endpoints)
    await sql.$executeRawUnsafe(
      `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
       SELECT gen_random_uuid(), $1::uuid, gen_random_uuid(), gen_random_uuid(), 'request.completed', repeat('x', 300), now()
       FROM generate_series(1, $2)`,
      id,
      PER_ENDPOINT,
    );
  const before = await buffers();
  const started = process.hrtime.bigint();
  const held = await claimDue(sql, limits());
  let statements = 1;
  let delivered = 0;
  while (held.length > 0) {
    const group = held.splice(0, GROUP).map((c) => ({
      messageId: c.id,
      claimToken: c.claim_token,
      endpointId: c.endpoint_id,
      attempt: 1,
      statusCode: 200,
      latencyMs: 3,
      excerpt: null,
    }));
    statements++;
    delivered += group.length;
    if (statements === EXPLAIN_AT) {
      const [row] = await sql.rows(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${RECORD_AND_CLAIM}`, recordAndClaimParams(group, limits()));
      printPlan(row['QUERY PLAN'][0].Plan);
      // What it claimed is held now, not returned: take it from the table.
      const taken = await sql.rows(
        `SELECT id::text, claim_token::text, endpoint_id::text FROM webhook_messages
         WHERE claim_token IS NOT NULL AND claimed_until > now() AND status = 'pending' AND id <> ALL($1::uuid[])`,
        [held.map((h) => h.id)],
      );
      held.push(...taken);
    } else held.push(...(await recordDelivered(sql, group, limits())));
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const touched = (await buffers()) - before;
  const [left] = await sql.rows(`SELECT count(*)::int AS n FROM webhook_messages WHERE status <> 'delivered'`, []);
  console.log(
    `${DIST}: ${delivered} of ${ENDPOINTS * PER_ENDPOINT} delivered in ${statements} statements, ${ms.toFixed(0)} ms ` +
      `(${((ms * 1000) / delivered).toFixed(1)} us per delivery), ${(touched / delivered).toFixed(1)} buffers per delivery`,
  );
  report.figure('buffers per delivery', touched / delivered);
  report.check(
    'every message recorded delivered, none left',
    delivered === ENDPOINTS * PER_ENDPOINT && left.n === 0,
    `${delivered} delivered, ${left.n} not`,
  );
  report.finish();
} finally {
  await sql.end();
  await database.drop();
}
