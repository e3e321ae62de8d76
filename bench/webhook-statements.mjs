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
import pg from 'pg';
import { createTestDatabase, PG_ADMIN_URL, withDatabase } from '@wdr/testkit';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DIST = resolve(arg('--dist') ?? 'apps/webhook-dispatcher/dist');
const TEMPLATE = arg('--template');
const PER_ENDPOINT = Number(process.env.BENCH_MESSAGES ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 4);
const GROUP = Number(process.env.BENCH_GROUP ?? 16);
const CONCURRENCY = 64;
const PER_ENDPOINT_CONCURRENCY = 16;
const LEASE_MS = 40_000;
const EXPLAIN_AT = Number(process.env.BENCH_EXPLAIN ?? 0);

function printPlan(n, depth = 0) {
  const name = [n['Node Type'], n['Subplan Name'] && `[${n['Subplan Name']}]`, n['Index Name']].filter(Boolean).join(' ');
  const removed = n['Rows Removed by Filter'] ? ` removed=${n['Rows Removed by Filter']}` : '';
  console.log(
    `${'  '.repeat(depth)}${name} rows=${n['Actual Rows']} loops=${n['Actual Loops']} buffers=${n['Shared Hit Blocks']}${removed}`,
  );
  for (const k of n.Plans ?? []) printPlan(k, depth + 1);
}

const { claimTail } = await import(pathToFileURL(`${DIST}/domain/claim.js`).href);
const { RECORD_AND_CLAIM } = await import(pathToFileURL(`${DIST}/domain/delivered-batch.js`).href);

// A database of this build's migrations, or a copy of the given template (another build's).
let database;
if (TEMPLATE) {
  const name = `t_webhook_statements_${Date.now().toString(36)}`;
  await withDatabase(PG_ADMIN_URL, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE}"`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  database = { name, url: `${url}?schema=webhooks`, drop: () => withDatabase(PG_ADMIN_URL, (c) => c.query(`DROP DATABASE "${name}"`)) };
} else database = await createTestDatabase('webhook-dispatcher');

const schema = new URL(database.url).searchParams.get('schema') ?? 'public';
const url = new URL(database.url);
url.searchParams.delete('schema');
// As the dispatcher's delivery pool plans (kit PgSql: customPlans, indexPlans).
const client = new pg.Client({
  connectionString: url.toString(),
  options: `-c search_path=${schema} -c plan_cache_mode=force_custom_plan -c enable_bitmapscan=off -c enable_sort=off -c enable_hashjoin=off`,
});
await client.connect();
const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
await admin.connect();
const buffers = async () => {
  await client.query('SELECT pg_stat_force_next_flush()');
  await client.query('SELECT 1');
  const { rows } = await admin.query('SELECT (blks_hit + blks_read)::bigint AS b FROM pg_stat_database WHERE datname = $1', [
    database.name,
  ]);
  return Number(rows[0].b);
};

try {
  const endpoints = Array.from({ length: ENDPOINTS }, () => randomUUID());
  for (const id of endpoints)
    await client.query(
      `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, updated_at)
       VALUES ($1, gen_random_uuid(), 'sealed', 'http://127.0.0.1', ARRAY['request.completed'], 'sealed', now())`,
      [id],
    );
  // Statistics from a near-empty table, as after a quiet spell (the bench's warm-up does the same).
  await client.query('ANALYZE');
  for (const id of endpoints)
    await client.query(
      `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), gen_random_uuid(), 'request.completed', repeat('x', 300), now()
       FROM generate_series(1, $2)`,
      [id, PER_ENDPOINT],
    );
  const claim = `WITH ${claimTail({ limit: '$1', perEndpoint: '$2', leaseMs: '$3', token: '$4' })}`;
  const before = await buffers();
  const started = process.hrtime.bigint();
  let held = (await client.query(claim, [CONCURRENCY, PER_ENDPOINT_CONCURRENCY, LEASE_MS, randomUUID()])).rows;
  let statements = 1;
  let delivered = 0;
  while (held.length > 0) {
    const group = held.splice(0, GROUP);
    const explain = statements === EXPLAIN_AT;
    const { rows } = await client.query((explain ? 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' : '') + RECORD_AND_CLAIM, [
      group.map((g) => g.id),
      group.map((g) => g.claim_token),
      group.map((g) => g.endpoint_id),
      group.map(() => 1),
      group.map(() => 200),
      group.map(() => 3),
      group.map(() => null),
      group.length,
      PER_ENDPOINT_CONCURRENCY,
      LEASE_MS,
      randomUUID(),
    ]);
    statements++;
    delivered += group.length;
    if (explain) {
      printPlan(rows[0]['QUERY PLAN'][0].Plan);
      // What it claimed is held now, not returned: take it from the table.
      const taken = await client.query(
        `SELECT id::text, claim_token::text, endpoint_id::text FROM webhook_messages
         WHERE claim_token IS NOT NULL AND claimed_until > now() AND status = 'pending' AND id <> ALL($1::uuid[])`,
        [held.map((h) => h.id)],
      );
      held.push(...taken.rows);
    } else held.push(...rows);
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const touched = (await buffers()) - before;
  const { rows: left } = await client.query(`SELECT count(*)::int AS n FROM webhook_messages WHERE status <> 'delivered'`);
  console.log(
    `${DIST}: ${delivered} of ${ENDPOINTS * PER_ENDPOINT} delivered in ${statements} statements, ${ms.toFixed(0)} ms ` +
      `(${((ms * 1000) / delivered).toFixed(1)} us per delivery), ${(touched / delivered).toFixed(1)} buffers per delivery`,
  );
  if (delivered !== ENDPOINTS * PER_ENDPOINT || left[0].n !== 0) {
    console.error(`CHECK FAILED: ${delivered} delivered, ${left[0].n} messages not delivered`);
    process.exitCode = 1;
  }
} finally {
  await client.end();
  await admin.end();
  await database.drop();
}
