import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import type { PgSql } from '@wdr/kit/pg-sql';
import { createTestDatabase, identityEnvOf, type TestDatabase } from '@wdr/testkit';
import { createDispatcherDeps, type DispatcherDeps } from '../src/deps.js';
import { loadDispatcherEnv } from '../src/env.js';
import { claimDue, claimTail, NEXT_DUE, nextDue, SWEEP_LAPSED_LEASES, sweepLapsedLeases } from '../src/domain/claim.js';
import { RECORD_AND_CLAIM, recordAndClaimParams } from '../src/domain/delivered-batch.js';
import { messageIdFor, queueMessages, recordDirectDelivered, TARGETS, type NewMessage } from '../src/domain/direct.js';
import { redeliver } from '../src/domain/redeliver.js';
import { webhookIdOf } from '../src/domain/signing.js';

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
  await addEndpoint(endpoint);
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
  'Rows Removed by Filter'?: number;
  'Subplan Name'?: string;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
/** Rows a node returned over all its loops. */
const rowsOut = (n: PlanNode) => n['Actual Rows']! * n['Actual Loops']!;
/** Rows a scan looked at over all its loops, those its filter dropped included. */
const looked = (n: PlanNode) => (n['Actual Rows']! + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops']!;

/** EXPLAIN ANALYZE of a statement (which runs it): the plan's root and every node under it. */
async function explain(statement: string, ...params: unknown[]): Promise<{ root: PlanNode; all: PlanNode[] }> {
  const [row] = await sql.$queryRawUnsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`,
    ...params,
  );
  const root = row!['QUERY PLAN'][0].Plan;
  return { root, all: nodes(root) };
}

/** A claim on its own, its parameters in claimTail's order: limit, perEndpoint, leaseMs, token. */
const CLAIM = `WITH ${claimTail({ limit: '$1', perEndpoint: '$2', leaseMs: '$3', token: '$4' })}`;

/** An enabled endpoint of the tenant, for request.completed. */
const addEndpoint = (id: string) =>
  sql.$executeRawUnsafe(
    `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, updated_at)
     VALUES ($1::uuid, $2::uuid, 'sealed', 'http://127.0.0.1', ARRAY['request.completed'], 'sealed', now())`,
    id,
    tenant,
  );

/** `n` messages of the endpoint, due a second ago. */
const dueNow = (n: number, endpointId = endpoint) =>
  sql.$executeRawUnsafe(
    `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, gen_random_uuid(), 'request.completed', '{}', now() - interval '1 second'
     FROM generate_series(1, $3)`,
    endpointId,
    tenant,
    n,
  );

/** The sender holding the message died: its lease ran out a second ago, its token still on the row. */
const lapse = (id: string) =>
  sql.$executeRawUnsafe(
    `UPDATE webhook_messages SET claimed_until = now() - interval '1 second', next_attempt_at = now() - interval '1 second' WHERE id = $1::uuid`,
    id,
  );

it('takes due messages in the due index order: no sort, and no more rows read than it claims', async () => {
  const limit = 16;
  const { all } = await explain(CLAIM, limit, limit, 30_000, randomUUID());
  expect(all.filter((n) => /Sort/.test(n['Node Type'])).map((n) => n['Node Type'])).toEqual([]);
  // The scan under the row locks: the claimed messages, not the endpoint's 3,000 due ones.
  const lockRows = all.find((n) => n['Node Type'] === 'LockRows')!;
  const scanned = nodes(lockRows).filter((n) => n['Index Name'] === 'webhook_messages_due_idx');
  expect(scanned.length).toBeGreaterThan(0);
  for (const n of scanned) expect(rowsOut(n)).toBeLessThanOrEqual(limit);
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

it('records a group and claims the next through the indexes, whatever the statistics say: it reads the rows it writes, not every pending message', async () => {
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
  const group = claims.map((c) => ({
    messageId: c.id,
    claimToken: c.claim_token,
    endpointId: c.endpoint_id,
    attempt: 1,
    statusCode: 200,
    latencyMs: 5,
    excerpt: null,
  }));
  const { root, all } = await explain(
    RECORD_AND_CLAIM,
    ...recordAndClaimParams(group, { limit: 8, perEndpoint: 64, leaseMs: 30_000, token: randomUUID() }),
  );
  const done = all.find((n) => n['Subplan Name'] === 'CTE done')!;
  expect(done).toBeDefined();
  // The record reads its 8 by primary key (a join alone hashed every pending message, read through
  // the due index).
  expect(nodes(done).filter((n) => n['Index Name'] === 'webhook_messages_due_idx')).toEqual([]);
  expect(nodes(done).some((n) => n['Index Name'] === 'webhook_messages_pkey')).toBe(true);
  // The whole statement, its claim of 8 more included, reads about the rows it deals with: it read
  // all 3,000 pending messages through a bitmap and sorted them to take the first few, and walked
  // the whole key in a nested loop to update the 8 it picked. Each claimed message has two entries
  // in the key until vacuum (the version before its claim and the claimed one); no sort at all.
  const reads = (n: PlanNode) => n['Index Name'] !== undefined || /^(Seq|Bitmap Heap|Index|Index Only) Scan$/.test(n['Node Type']);
  expect(all.filter((n) => /Sort/.test(n['Node Type'])).map((n) => n['Node Type'])).toEqual([]);
  for (const n of all.filter(reads)) expect(rowsOut(n)).toBeLessThanOrEqual(4 * claims.length);
  expect(root['Actual Rows']).toBe(8); // the 8 claimed, returned
  const delivered = await sql.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM webhook_messages WHERE status = 'delivered' AND id = ANY($1::uuid[])`,
    claims.map((c) => c.id),
  );
  expect(delivered[0]!.n).toBe(claims.length);
});

it('runs on connections that plan each execution (a plan kept from the empty queue read every pending message), for index walks, without JIT', async () => {
  expect(await sql.$queryRawUnsafe('SHOW plan_cache_mode')).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
  for (const setting of ['enable_bitmapscan', 'enable_sort', 'enable_hashjoin', 'jit'])
    expect(await sql.$queryRawUnsafe(`SHOW ${setting}`)).toEqual([{ [setting]: 'off' }]);
});

it("counts an endpoint's held leases without reading the messages waiting for a retry", async () => {
  // A receiver that has been failing for a while: thousands of messages wait for their next attempt
  // minutes from now, beside a few due ones and the leases senders hold. Only this endpoint's
  // messages from here on.
  await sql.$executeRawUnsafe('DELETE FROM webhook_messages');
  await sql.$executeRawUnsafe(
    `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, attempts, schedule_step, first_attempt_at, next_attempt_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, gen_random_uuid(), 'request.completed', '{}', 1, 1, now() - interval '1 minute',
            now() + interval '5 minutes' + g * interval '1 millisecond'
     FROM generate_series(1, $3) g`,
    endpoint,
    tenant,
    BACKLOG,
  );
  await dueNow(20);
  await sql.$executeRawUnsafe('ANALYZE webhook_messages');
  const perEndpoint = 8;
  const first = await claimDue(sql, { limit: 6, perEndpoint, leaseMs: 30_000, token: randomUUID() });
  expect(first).toHaveLength(6);

  const { root, all } = await explain(CLAIM, 16, perEndpoint, 30_000, randomUUID());
  // The per-endpoint bound still holds: 6 held, 2 more taken.
  expect(root['Actual Rows']).toBe(perEndpoint - first.length);
  expect(all.some((n) => n['Index Name'] === 'webhook_messages_leased_idx')).toBe(true);
  // Rows each scan looked at, those its filter dropped included: about the leases and the due
  // messages, never the 3,000 waiting for a retry (the count read them all through the due index).
  const scans = all.filter((n) => n['Index Name'] !== undefined || /Scan$/.test(n['Node Type']));
  expect(scans.length).toBeGreaterThan(0);
  expect(scans.filter((n) => looked(n) > 64).map((n) => [n['Node Type'], n['Index Name'], looked(n)])).toEqual([]);
});

it('a manual redelivery refuses a held lease and clears one that ran out', async () => {
  const [held, lapsed] = await claimDue(sql, { limit: 2, perEndpoint: 64, leaseMs: 30_000, token: randomUUID() });
  // The second's sender died: its lease ran out, its token is still on the row.
  await lapse(lapsed!.id);
  await expect(redeliver(deps.db, tenant, endpoint, webhookIdOf(held!.id))).rejects.toMatchObject({ code: 'CONFLICT' });
  expect(await redeliver(deps.db, tenant, endpoint, webhookIdOf(lapsed!.id))).toMatchObject({ status: 'pending', attempts: 0 });
  const rows = await sql.$queryRawUnsafe<{ id: string; token: string | null; until: Date | null }[]>(
    `SELECT id::text, claim_token::text AS token, claimed_until AS until FROM webhook_messages WHERE id = ANY($1::uuid[]) ORDER BY id`,
    [held!.id, lapsed!.id],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  expect(byId.get(lapsed!.id)).toEqual({ id: lapsed!.id, token: null, until: null });
  expect(byId.get(held!.id)?.token).toBe(held!.claim_token);
});

it('a lease that ran out is claimed again only once swept; a sender wakes for retries and lapsed leases, not for what waits on held ones', async () => {
  await sql.$executeRawUnsafe('DELETE FROM webhook_messages');
  await dueNow(3);
  const limits = { limit: 8, leaseMs: 30_000 };
  const [a, b] = await claimDue(sql, { ...limits, perEndpoint: 2, token: randomUUID() });
  expect([a, b].every(Boolean)).toBe(true);
  // The third is due but waits for the endpoint's two leases: nothing to wake for (a delivery's end
  // wakes its sender), not "due now" (a sender woken for it finds it waiting still, and spins).
  expect(await nextDue(sql)).toEqual({ ms: null, lapsed: false });
  // A retry scheduled 20 s from now is.
  await sql.$executeRawUnsafe(
    `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, attempts, schedule_step, next_attempt_at)
     VALUES (gen_random_uuid(), $1::uuid, $2::uuid, gen_random_uuid(), 'request.completed', '{}', 1, 1, now() + interval '20 seconds')`,
    endpoint,
    tenant,
  );
  const first = await nextDue(sql);
  expect(first.lapsed).toBe(false);
  expect(first.ms).toBeGreaterThan(15_000);
  expect(first.ms).toBeLessThanOrEqual(20_000);
  // The sender of the first died: its lease ran out. It holds no place any more (the third takes
  // it), and its message is not claimable while its token is on it...
  await lapse(a!.id);
  const third = await claimDue(sql, { ...limits, perEndpoint: 2, token: randomUUID() });
  expect(third.map((c) => c.id).filter((id) => id === a!.id || id === b!.id)).toEqual([]);
  expect(third).toHaveLength(1);
  expect(await claimDue(sql, { ...limits, perEndpoint: 3, token: randomUUID() })).toEqual([]);
  // ...the sender is told a lease ran out (the next retry is still 20 s away)...
  const second = await nextDue(sql);
  expect(second.lapsed).toBe(true);
  expect(second.ms).toBeGreaterThan(15_000);
  // ...and once the sweep gives it up (the held ones stay held), it is due at once, under a new token.
  expect(await sweepLapsedLeases(sql)).toBe(1);
  const again = await claimDue(sql, { ...limits, perEndpoint: 3, token: randomUUID() });
  expect(again.map((c) => c.id)).toEqual([a!.id]);
  expect(again[0]!.claim_token).not.toBe(a!.claim_token);
  expect(await sweepLapsedLeases(sql)).toBe(0);
  expect((await nextDue(sql)).lapsed).toBe(false);
});

it('finds the endpoints with something due by one probe each, with statistics taken while the queue was empty', async () => {
  const others = [randomUUID(), randomUUID(), randomUUID()];
  for (const id of others) await addEndpoint(id);
  await sql.$executeRawUnsafe('DELETE FROM webhook_messages');
  await sql.$executeRawUnsafe('ANALYZE webhook_messages');
  for (const id of [endpoint, ...others]) await dueNow(500, id);
  const { root, all } = await explain(CLAIM, 16, 4, 30_000, randomUUID());
  expect(root['Actual Rows']).toBe(16);
  // As EXISTS, Postgres read all 2,000 due messages once (a semi-join over the due index) to find 4 endpoints.
  const scans = all.filter((n) => n['Index Name'] !== undefined);
  expect(scans.filter((n) => rowsOut(n) > 32).map((n) => [n['Node Type'], n['Index Name'], rowsOut(n)])).toEqual([]);
});

it('the lease sweep and the idle probe read the leases and the retries, not the delivered history', async () => {
  // Retention keeps a month of delivered messages beside the few pending ones; the sweep runs every
  // poll interval on every replica, the probe whenever a claim finds nothing.
  await sql.$executeRawUnsafe('DELETE FROM webhook_messages');
  await sql.$executeRawUnsafe(
    `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, status, attempts, delivered_at, created_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, gen_random_uuid(), 'request.completed', '{}', 'delivered', 1, now(), now() - interval '1 day'
     FROM generate_series(1, $3)`,
    endpoint,
    tenant,
    BACKLOG,
  );
  await dueNow(3);
  const [a] = await claimDue(sql, { limit: 2, perEndpoint: 8, leaseMs: 30_000, token: randomUUID() });
  await lapse(a!.id);
  await sql.$executeRawUnsafe('ANALYZE webhook_messages');
  const scansOf = async (statement: string) => {
    const { all } = await explain(statement);
    return all.filter((n) => /Scan$/.test(n['Node Type']) && looked(n) > 16).map((n) => [n['Node Type'], n['Index Name'], looked(n)]);
  };
  expect(await scansOf(NEXT_DUE)).toEqual([]);
  expect(await scansOf(SWEEP_LAPSED_LEASES)).toEqual([]);
  // EXPLAIN ANALYZE ran the sweep: the lapsed lease is given up, the other still held.
  const held = await sql.$queryRawUnsafe<{ id: string }[]>(`SELECT id::text FROM webhook_messages WHERE claim_token IS NOT NULL`);
  expect(held.map((h) => h.id)).not.toContain(a!.id);
  expect(held).toHaveLength(1);
});

it("counts this process's direct POSTs of an endpoint (not in the table) as taken slots, as held leases are", async () => {
  await sql.$executeRawUnsafe('DELETE FROM webhook_messages');
  await dueNow(4);
  const limits = { limit: 8, perEndpoint: 3, leaseMs: 30_000 };
  const local = (n: number, endpointId = endpoint) => ({ endpointIds: [endpointId], counts: [n] });
  // Two direct POSTs to the endpoint under way: one slot of three left.
  expect(await claimDue(sql, { ...limits, token: randomUUID(), local: local(2) })).toHaveLength(1);
  // One lease held now, and one direct POST: one more.
  expect(await claimDue(sql, { ...limits, token: randomUUID(), local: local(1) })).toHaveLength(1);
  // Another endpoint's POSTs take nothing of this one's: the third slot.
  expect(await claimDue(sql, { ...limits, token: randomUUID(), local: local(3, randomUUID()) })).toHaveLength(1);
  expect(await claimDue(sql, { ...limits, token: randomUUID() })).toHaveLength(0);
});

it('wakes the senders for messages inserted due, not for messages stored delivered or held', async () => {
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.channel));
  await listener.query('LISTEN wdr_webhooks');
  try {
    const message = (): NewMessage => {
      const eventId = randomUUID();
      return {
        id: messageIdFor(eventId, endpoint),
        endpointId: endpoint,
        tenantId: tenant,
        eventId,
        eventType: 'request.completed',
        body: '{}',
      };
    };
    const quiet = async () => {
      await sleep(300);
      return heard.splice(0).length;
    };
    await recordDirectDelivered(sql, [{ message: message(), firstAttemptAt: new Date(), statusCode: 200, latencyMs: 5, excerpt: null }]);
    expect(await quiet()).toBe(0);
    const held = message();
    await sql.$executeRawUnsafe(
      `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at, claimed_until, claim_token)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, 'request.completed', '{}', now() + interval '1 minute', now() + interval '1 minute', gen_random_uuid())`,
      held.id,
      endpoint,
      tenant,
      held.eventId,
    );
    expect(await quiet()).toBe(0);
    await queueMessages(sql, [message()]);
    expect(await quiet()).toBe(1);
  } finally {
    await listener.end();
  }
});

it("reads a fan-out's endpoints with one probe of each index per endpoint, however long its queue", async () => {
  await sql.$executeRawUnsafe('DELETE FROM webhook_messages');
  await dueNow(BACKLOG);
  const events = Array.from({ length: 64 }, () => randomUUID());
  const { root, all } = await explain(
    TARGETS,
    events.map(() => tenant),
    events,
    events.map(() => 'request.completed'),
    events.map(() => false),
    events.map(() => null),
    events.map(() => null),
  );
  // A row per endpoint of the tenant (the other tests add some), each with its 64 events.
  const [{ n: endpoints }] = (await sql.$queryRawUnsafe<{ n: number }[]>(
    "SELECT count(*)::int AS n FROM webhook_endpoints WHERE tenant_id = $1::uuid AND status = 'enabled'",
    tenant,
  )) as [{ n: number }];
  expect(rowsOut(root)).toBe(endpoints);
  const scans = all.filter((n) => n['Node Type'].includes('Scan') && n['Node Type'] !== 'Function Scan');
  expect(scans.filter((n) => n['Node Type'] === 'Seq Scan' && rowsOut(n) > 10)).toEqual([]);
  // The due probe stops at the first due message; the held count and the per-event probes read none
  // of the backlog: no scan reads more than an endpoint row per event.
  expect(Math.max(...scans.map(looked))).toBeLessThanOrEqual(64 * endpoints);
});

it('an endpoint deleted while its direct delivery is being stored leaves the rest of the group stored', async () => {
  const [gone, kept] = [randomUUID(), randomUUID()];
  await addEndpoint(gone);
  await addEndpoint(kept);
  const delivered = (endpointId: string) => {
    const eventId = randomUUID();
    const message: NewMessage = {
      id: messageIdFor(eventId, endpointId),
      endpointId,
      tenantId: tenant,
      eventId,
      eventType: 'request.completed',
      body: '{}',
    };
    return { message, firstAttemptAt: new Date(), statusCode: 200, latencyMs: 5, excerpt: null };
  };
  // The deletion holds its row while the group's statement reads the endpoint as present, and
  // commits while the statement waits for it: the statement's foreign-key check then finds it gone.
  const deleting = new pg.Client({ connectionString: db.url });
  await deleting.connect();
  try {
    const schema = new URL(db.url).searchParams.get('schema') ?? 'public';
    await deleting.query('BEGIN');
    await deleting.query(`DELETE FROM "${schema}".webhook_endpoints WHERE id = $1::uuid`, [gone]);
    const group = [delivered(gone), delivered(kept)];
    const storing = recordDirectDelivered(sql, group);
    await sleep(300);
    await deleting.query('COMMIT');
    await storing;
    const stored = await sql.$queryRawUnsafe<{ endpoint_id: string }[]>(
      'SELECT endpoint_id::text FROM webhook_messages WHERE id = ANY($1::uuid[])',
      group.map((d) => d.message.id),
    );
    expect(stored).toEqual([{ endpoint_id: kept }]);
  } finally {
    await deleting.end();
  }
});
