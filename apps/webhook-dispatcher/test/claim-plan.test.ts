import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { PgSql } from '@wdr/kit/pg-sql';
import { createTestDatabase, identityEnvOf, type TestDatabase } from '@wdr/testkit';
import { createDispatcherDeps, type DispatcherDeps } from '../src/deps.js';
import { loadDispatcherEnv } from '../src/env.js';
import { claimDue, claimTail } from '../src/domain/claim.js';
import { RECORD_AND_CLAIM } from '../src/domain/delivered-batch.js';

/**
 * What a claim costs with a backlog: the claim reads the due messages it takes, not every due
 * message of the endpoint (bench/README.md, "Webhooks": with a tie-break on the id, every claim of
 * a 32,000-delivery burst read and sorted all of its endpoint's due messages).
 */
let db: TestDatabase;
let deps: DispatcherDeps;
/** The dispatcher's own delivery pool (deps.sql), as the sender claims on it. */
let sql: PgSql;
const endpoint = randomUUID();
const tenant = randomUUID();
const BACKLOG = 3_000;
/** Messages sharing one `next_attempt_at`, as one fan-out statement's share of `now()`. */
const GROUP = 60;

beforeAll(async () => {
  db = await createTestDatabase('webhook-dispatcher');
  deps = createDispatcherDeps(
    loadDispatcherEnv({
      ...identityEnvOf('webhook-dispatcher'),
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      WEBHOOK_SECRET_KEY: Buffer.alloc(32, 11).toString('base64'),
    }),
  );
  sql = deps.sql;
  await sql.$executeRawUnsafe(
    `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, updated_at)
     VALUES ($1::uuid, $2::uuid, 'sealed', 'http://127.0.0.1', ARRAY['request.completed'], 'sealed', now())`,
    endpoint,
    tenant,
  );
  // A burst's fan-out: groups of messages sharing their statement's now(), a millisecond apart.
  for (let g = 0; g < BACKLOG / GROUP; g++)
    await sql.$executeRawUnsafe(
      `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, gen_random_uuid(), 'request.completed', '{}', now() - interval '1 minute' + $3 * interval '1 millisecond'
       FROM generate_series(1, $4)`,
      endpoint,
      tenant,
      g,
      GROUP,
    );
  await sql.$executeRawUnsafe('ANALYZE webhook_messages');
}, 60_000);

afterAll(async () => {
  await deps?.sql.end();
  await deps?.db.$disconnect();
  await db?.drop();
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

it('takes due messages in the due index order: no sort, and no more rows read than it claims', async () => {
  const limit = 16;
  const statement = `EXPLAIN (ANALYZE, FORMAT JSON) WITH ${claimTail({ limit: '$1', perEndpoint: '$2', leaseMs: '$3', token: '$4' })}`;
  const [row] = await sql.$queryRawUnsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(statement, limit, limit, 30_000, randomUUID());
  const all = nodes(row!['QUERY PLAN'][0].Plan);
  expect(all.filter((n) => /Sort/.test(n['Node Type'])).map((n) => n['Node Type'])).toEqual([]);
  // The scan under the row locks: the claimed messages, not the endpoint's 3,000 due ones.
  const lockRows = all.find((n) => n['Node Type'] === 'LockRows')!;
  const scanned = nodes(lockRows).filter((n) => n['Index Name'] === 'webhook_messages_due_idx');
  expect(scanned.length).toBeGreaterThan(0);
  for (const n of scanned) expect(n['Actual Rows']! * n['Actual Loops']!).toBeLessThanOrEqual(limit);
  // EXPLAIN ANALYZE ran the claim: its leases are taken (which ones: the next test).
  const held = await sql.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM webhook_messages WHERE claimed_until > now()`);
  expect(held[0]!.n).toBe(limit);
});

it('claims the oldest due messages first', async () => {
  // The oldest group still due and unclaimed (the first test took 16 of the first group).
  const oldest = await sql.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id::text FROM webhook_messages
     WHERE status = 'pending' AND claimed_until IS NULL
       AND next_attempt_at = (SELECT min(next_attempt_at) FROM webhook_messages WHERE status = 'pending' AND claimed_until IS NULL)`,
  );
  expect(oldest).toHaveLength(GROUP - 16);
  const claims = await claimDue(sql, { limit: 8, perEndpoint: 64, leaseMs: 30_000, token: randomUUID() });
  expect(claims).toHaveLength(8);
  const group = new Set(oldest.map((o) => o.id));
  expect(claims.filter((c) => !group.has(c.id))).toEqual([]);
});

it('records a group of deliveries by primary key, whatever the statistics say: it reads the rows it marks delivered, not every pending message', async () => {
  // Statistics taken while the queue was empty, then a burst's backlog (a fresh deployment's first
  // burst, as the webhooks bench): the planner believes the pending messages are a handful.
  await sql.$executeRawUnsafe('DELETE FROM webhook_messages');
  await sql.$executeRawUnsafe('ANALYZE webhook_messages');
  await sql.$executeRawUnsafe(
    `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, gen_random_uuid(), 'request.completed', '{}', now() - interval '1 minute'
     FROM generate_series(1, $3)`,
    endpoint,
    tenant,
    BACKLOG,
  );
  const claims = await claimDue(sql, { limit: 8, perEndpoint: 64, leaseMs: 30_000, token: randomUUID() });
  expect(claims).toHaveLength(8);
  const statement = `EXPLAIN (ANALYZE, FORMAT JSON) ${RECORD_AND_CLAIM}`;
  const [row] = await sql.$queryRawUnsafe<{ 'QUERY PLAN': [{ Plan: PlanNode & { 'Subplan Name'?: string } }] }[]>(
    statement,
    claims.map((c) => c.id),
    claims.map((c) => c.claim_token),
    claims.map((c) => c.endpoint_id),
    claims.map(() => 1),
    claims.map(() => 200),
    claims.map(() => 5),
    claims.map(() => null),
    0, // claim nothing in the same statement: this test is about the record
    64,
    30_000,
    randomUUID(),
  );
  const done = nodes(row!['QUERY PLAN'][0].Plan).find((n) => (n as { 'Subplan Name'?: string })['Subplan Name'] === 'CTE done')!;
  expect(done).toBeDefined();
  const scans = nodes(done).filter((n) => n['Index Name'] !== undefined || /Scan/.test(n['Node Type']));
  const read = scans.filter((n) => n['Node Type'] !== 'Function Scan' && n['Node Type'] !== 'CTE Scan');
  expect(read.length).toBeGreaterThan(0);
  // The backlog holds 3,000 pending messages; the record reads its 8 by primary key (a join alone
  // hashed every pending one, read through the due index). Each claimed message has two entries in
  // the key until vacuum: the version before its claim and the claimed one.
  expect(read.filter((n) => n['Index Name'] === 'webhook_messages_due_idx')).toEqual([]);
  expect(read.some((n) => n['Index Name'] === 'webhook_messages_pkey')).toBe(true);
  for (const n of read) expect(n['Actual Rows']! * n['Actual Loops']!).toBeLessThanOrEqual(2 * claims.length);
  const delivered = await sql.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM webhook_messages WHERE status = 'delivered' AND id = ANY($1::uuid[])`,
    claims.map((c) => c.id),
  );
  expect(delivered[0]!.n).toBe(claims.length);
});

it('runs on connections that plan each execution (a plan kept from the empty queue read every pending message)', async () => {
  expect(await sql.$queryRawUnsafe('SHOW plan_cache_mode')).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
});
