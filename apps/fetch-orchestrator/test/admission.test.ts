import { randomUUID } from 'node:crypto';
import { PgSql } from '@wdr/kit/pg-sql';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ledgerApi, REQUEST_STATUSES, TERMINAL_REQUEST_STATUSES } from '@wdr/contracts';
import {
  createTestDatabase,
  startServiceProcess,
  testCallerCredentials,
  uniqueTopicPrefix,
  withDatabase,
  type ServiceProcess,
  type TestDatabase,
} from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { createServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { Sealer } from '@wdr/kit/sealing';
import { PrismaClient, type DataRequest } from '../src/generated/prisma/client.js';
import { LocalHttpRuns, type LocalRunsOptions } from '../src/domain/local-runs.js';
import { CreditLeases } from '../src/domain/leases.js';
import { createRequest, type AdmissionDeps, type CreateCommand } from '../src/domain/requests/create.js';
import { appendEvent } from '../src/domain/requests/events.js';
import { readEvents } from '../src/domain/request-reads.js';
import { admissionSnapshot, countActiveRequests } from '../src/domain/admission.js';
import { addExit } from '../src/domain/proxies/exits.js';
import { ProxyPool } from '../src/domain/proxies/pool.js';
import { createLogger } from '@wdr/kit/log';

/**
 * Admission against the real Postgres and the real billing-ledger process: the request, its first
 * event and its outbox messages land together or not at all, concurrent creates of one id make one
 * request and one reservation, and a refusal for concurrency reserves nothing.
 */
let database: TestDatabase;
let ledgerDb: TestDatabase;
let ledgerProcess: ServiceProcess;
let db: PrismaClient;
let sql: PgSql;
let deps: AdmissionDeps;
/** A tenant with tokens enough for every test that does not name its own. */
let TENANT: string;

/** A tenant whose ledger account holds `credits` tokens. */
async function fundedTenant(credits = 1_000_000): Promise<string> {
  const tenant = randomUUID();
  // Funded by a grant, as the gateway (the route's one caller; no service may call the top-up route).
  const asGateway = createServiceClient({ name: 'billing-ledger', baseUrl: ledgerProcess.url, identity: testCallerCredentials('gateway') });
  await callInternal(asGateway, ledgerApi.grant, {
    params: { tenantId: tenant },
    body: { amount: credits, reference: `admission-test-${tenant}` },
  });
  return tenant;
}

/** Reservations the ledger holds for a tenant. */
const reservationsOf = (tenant: string) =>
  withDatabase(
    ledgerDb.url,
    async (c) => (await c.query('SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1', [tenant])).rows[0].n as number,
  );

beforeAll(async () => {
  [database, ledgerDb] = await Promise.all([createTestDatabase('fetch-orchestrator'), createTestDatabase('billing-ledger')]);
  ledgerProcess = await startServiceProcess('billing-ledger', {
    DATABASE_URL: ledgerDb.url,
    KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
    LOG_LEVEL: 'warn',
  });
  db = new PrismaClient({ adapter: pgAdapterFor(database.url) });
  sql = new PgSql(database.url, { max: 2 });
  const sealer = Sealer.fromBase64(Buffer.alloc(32, 3).toString('base64'));
  deps = {
    db,
    sql,
    ledger: createServiceClient({
      name: 'billing-ledger',
      baseUrl: ledgerProcess.url,
      identity: testCallerCredentials('fetch-orchestrator'),
    }),
    sealer,
    sealRequestInputs: true,
    targetRetentionHours: 24,
    pool: new ProxyPool(db, sealer, createLogger('test', 'silent')),
  };
  TENANT = await fundedTenant();
}, 120_000);

afterAll(async () => {
  await db?.$disconnect();
  await sql?.end();
  await ledgerProcess?.kill('SIGTERM');
  await Promise.all([database?.drop(), ledgerDb?.drop()]);
}, 60_000);

const command = (over: Partial<CreateCommand> = {}): CreateCommand => ({
  request_id: randomUUID(),
  tenant_id: TENANT,
  url: 'http://127.0.0.1:9/page?secret=1',
  route_mode: 'http',
  proxy_type: null,
  max_credits: null,
  options: { timeout_ms: 45_000 },
  input_hash: 'a'.repeat(64),
  ...over,
});

const outboxOf = (id: string) =>
  db.$queryRawUnsafe<{ topic: string; envelope: { type: string; data: Record<string, unknown> } }[]>(
    `SELECT topic, envelope FROM outbox_messages WHERE envelope->'data'->>'request_id' = $1 ORDER BY id`,
    id,
  );

describe('createRequest', () => {
  it('stores the request, its accepted event and both outbox messages (event mirror, then the job) together', async () => {
    const cmd = command();
    const view = await createRequest(deps, cmd);
    expect(view).toMatchObject({
      id: cmd.request_id,
      status: 'pending',
      route_mode: 'http',
      base_tokens: 1,
      charged_tokens: 1,
      idempotent_replay: false,
    });

    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } });
    expect(row).toMatchObject({
      tenantId: cmd.tenant_id,
      urlOrigin: 'http://127.0.0.1:9',
      status: 'pending',
      tokenState: 'reserved',
      lastEventSeq: 1,
      proxyType: 'datacenter',
    });
    expect(row.targetSealed).not.toContain('secret');
    expect(deps.sealer.open(row.targetSealed!, row.id)).toBe(cmd.url);
    expect(row.options).toMatchObject({
      timeout_ms: 45_000,
      input_hash: cmd.input_hash,
      max_credits_per_request: null,
      admission_quote: null,
    });
    expect(row.createdAt.toISOString()).toBe(view.created_at);

    const history = await readEvents(db, cmd.tenant_id, cmd.request_id);
    expect(history.events.map((e) => [e.event_id, e.kind, e.status])).toEqual([[1, 'request.accepted', 'pending']]);

    const out = await outboxOf(cmd.request_id);
    expect(out.map((m) => [m.topic, m.envelope.type])).toEqual([
      ['requestLifecycle', 'request.event_appended'],
      ['fetchJobs', 'fetch.job_requested'],
    ]);
    expect(out[0]!.envelope.data).toMatchObject({
      request_id: cmd.request_id,
      event_id: 1,
      kind: 'request.accepted',
      created_at: view.created_at,
    });

    // The next event continues the sequence.
    expect(await db.$transaction((tx) => appendEvent(tx, row, 'request.running', 'running', {}))).toBe(2);
  });

  it('events appended at once take consecutive numbers, each stored and mirrored once under its number', async () => {
    const cmd = command();
    await createRequest(deps, cmd);
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } });
    const seqs = await Promise.all(
      // They queue on the request's row: on a loaded machine ten of them outlast Prisma's default 2 s wait.
      Array.from({ length: 10 }, (_, i) =>
        db.$transaction((tx) => appendEvent(tx, row, `request.note_${i}`, 'running', { i }), { maxWait: 30_000, timeout: 30_000 }),
      ),
    );
    expect([...seqs].sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const history = await readEvents(db, cmd.tenant_id, cmd.request_id);
    const mirrors = (await outboxOf(cmd.request_id)).filter((m) => m.topic === 'requestLifecycle').map((m) => m.envelope.data);
    expect(mirrors.map((d) => d['event_id'])).toEqual(history.events.map((e) => e.event_id));
    for (const e of history.events.slice(1)) {
      expect(mirrors.find((d) => d['event_id'] === e.event_id)).toMatchObject({
        kind: e.kind,
        payload: e.payload,
        created_at: e.created_at,
      });
    }
  });

  it('browser routes start with a render job', async () => {
    const cmd = command({ route_mode: 'browser' });
    await createRequest(deps, cmd);
    expect((await outboxOf(cmd.request_id)).map((m) => m.topic)).toEqual(['requestLifecycle', 'renderJobs']);
  });

  it('concurrent creates of one id make one request and answer the others as replays', async () => {
    const cmd = command();
    const answers = await Promise.all(Array.from({ length: 12 }, () => createRequest(deps, cmd)));
    expect(answers.filter((a) => !a.idempotent_replay)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.id))).toEqual(new Set([cmd.request_id]));
    expect(await db.requestEvent.count({ where: { requestId: cmd.request_id } })).toBe(1);
    expect(await outboxOf(cmd.request_id)).toHaveLength(2);
    // One reservation, one charge: the ledger answered the others as replays.
    const held = await withDatabase(
      ledgerDb.url,
      async (c) => (await c.query('SELECT count(*)::int AS n FROM reservations WHERE request_id = $1', [cmd.request_id])).rows[0].n,
    );
    expect(held).toBe(1);
    expect(answers.reduce((n, a) => n + a.charged_tokens, 0)).toBe(1);
  });

  it('the create that stores the request reports its price as charged even when a racing create reserved first', async () => {
    // The racing create that reserved first and then lost the insert: its ledger call came first,
    // so the storing create's own ledger call is the ledger's replay (charged 0 in that answer).
    const cmd = command();
    const first = await callInternal(deps.ledger, ledgerApi.reserve, {
      body: { request_id: cmd.request_id, tenant_id: cmd.tenant_id, route_mode: 'http', proxy_type: null, max_credits: null },
    });
    expect(first.charged_tokens).toBe(1);
    const answer = await createRequest(deps, cmd);
    expect(answer).toMatchObject({ idempotent_replay: false, charged_tokens: 1 });
    expect((await createRequest(deps, cmd)).charged_tokens).toBe(0);
  });

  it('the same id with another body is an IDEMPOTENCY_CONFLICT and changes nothing', async () => {
    const cmd = command();
    const results = await Promise.allSettled([createRequest(deps, cmd), createRequest(deps, { ...cmd, input_hash: 'b'.repeat(64) })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
    expect(await outboxOf(cmd.request_id)).toHaveLength(2);
  });

  it('refuses a create past the concurrency ceiling before reserving, never a replay, and keeps the previous count for old gateways', async () => {
    const tenant_id = await fundedTenant();
    const ceiling = { limit: 2, others_in_flight: 0 };
    const first = command({ tenant_id, concurrency: ceiling });
    await createRequest(deps, first);
    await createRequest(deps, command({ tenant_id, concurrency: ceiling }));
    expect(await reservationsOf(tenant_id)).toBe(2);
    await expect(createRequest(deps, command({ tenant_id, concurrency: ceiling }))).rejects.toMatchObject({
      code: 'CONCURRENCY_LIMITED',
      retryAfterSeconds: 1,
    });
    // Admissions the gateway holds elsewhere count too.
    await expect(createRequest(deps, command({ tenant_id, concurrency: { limit: 3, others_in_flight: 1 } }))).rejects.toMatchObject({
      code: 'CONCURRENCY_LIMITED',
    });
    expect(await reservationsOf(tenant_id)).toBe(2);
    // A replay at the ceiling is answered.
    expect(await createRequest(deps, first)).toMatchObject({ id: first.request_id, idempotent_replay: true });
    expect(await admissionSnapshot(db, first.request_id, tenant_id, ceiling)).toEqual({ exists: true, active: 2 });
    expect(await countActiveRequests(db, tenant_id, 10)).toBe(2);
  });

  it('admits residential_browser with a render job: its residential route is chosen when the browser stage starts', async () => {
    const cmd = command({ route_mode: 'residential_browser' });
    const view = await createRequest(deps, cmd);
    expect([view.status, view.proxy_type, view.base_tokens]).toEqual(['pending', 'residential', 25]);
    expect((await outboxOf(cmd.request_id)).map((m) => m.envelope.type)).toEqual(['request.event_appended', 'render.job_requested']);
  });

  it('refuses premium before anything is reserved while no premium exit is configured, then leaves the price to the ledger', async () => {
    const tenant_id = await fundedTenant();
    const premium = () => command({ tenant_id, proxy_type: 'premium' });
    await expect(createRequest(deps, premium())).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'The premium network has no available connection.',
    });
    expect(await reservationsOf(tenant_id)).toBe(0);
    await addExit(db, deps.sealer, { label: `premium-${tenant_id}`, networkClass: 'premium', url: 'http://u:p@127.0.0.9:3128' });
    await deps.pool.reload();
    // Connected now; the standard plan does not price premium, which the ledger says.
    await expect(createRequest(deps, premium())).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'The premium network is not priced for this plan.',
    });
    expect(await reservationsOf(tenant_id)).toBe(0);
  });
});

/**
 * The ceiling's count (`tenant_active`, migration 20261127130000_tenant_active): kept by triggers on
 * every statement that stores, moves or removes requests, so it always equals the count of the
 * tenant's requests that have not ended.
 */
describe('tenant_active', () => {
  const counted = async (tenant: string) => {
    const [row] = await db.$queryRawUnsafe<{ kept: bigint | null; actual: bigint }[]>(
      `SELECT (SELECT sum(n) FROM tenant_active WHERE tenant_id = $1::uuid)::bigint AS kept,
              (SELECT count(*) FROM data_requests WHERE tenant_id = $1::uuid AND status NOT IN ('completed', 'failed', 'cancelled'))::bigint AS actual`,
      tenant,
    );
    return { kept: Number(row!.kept ?? 0), actual: Number(row!.actual) };
  };
  const setStatus = (status: string, ids: string[]) =>
    db.$executeRawUnsafe('UPDATE data_requests SET status = $1 WHERE id = ANY($2::uuid[])', status, ids);

  it("its terminal statuses are the contracts' terminal statuses", async () => {
    const rows = await db.$queryRawUnsafe<{ s: string; active: boolean }[]>(
      'SELECT s, wdr_is_active(s) AS active FROM unnest($1::text[]) AS s',
      [...REQUEST_STATUSES],
    );
    expect(rows.map((r) => [r.s, r.active])).toEqual(
      REQUEST_STATUSES.map((s) => [s, !(TERMINAL_REQUEST_STATUSES as readonly string[]).includes(s)]),
    );
  });

  it('follows creates, moves, ends, multi-row statements and deletes, and answers the ceiling from it', async () => {
    const tenant = await fundedTenant();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createRequest(deps, command({ tenant_id: tenant }))).id);
    expect(await counted(tenant)).toEqual({ kept: 4, actual: 4 });
    expect(await admissionSnapshot(sql, randomUUID(), tenant, { limit: 100, others_in_flight: 0 })).toEqual({ exists: false, active: 4 });
    // Capped at the limit, as the count was.
    expect(await admissionSnapshot(sql, randomUUID(), tenant, { limit: 3, others_in_flight: 0 })).toEqual({ exists: false, active: 3 });
    await setStatus('running', ids.slice(0, 2));
    expect(await counted(tenant)).toEqual({ kept: 4, actual: 4 });
    await setStatus('completed', ids.slice(0, 1));
    expect(await counted(tenant)).toEqual({ kept: 3, actual: 3 });
    // Ending again changes nothing; one statement ending several, in several stripes.
    await setStatus('failed', ids.slice(0, 1));
    await setStatus('cancelled', ids.slice(1));
    expect(await counted(tenant)).toEqual({ kept: 0, actual: 0 });
    await expect(
      createRequest(deps, command({ tenant_id: tenant, concurrency: { limit: 1, others_in_flight: 0 } })),
    ).resolves.toMatchObject({
      status: 'pending',
    });
    await expect(createRequest(deps, command({ tenant_id: tenant, concurrency: { limit: 1, others_in_flight: 0 } }))).rejects.toMatchObject(
      {
        code: 'CONCURRENCY_LIMITED',
      },
    );
    // Many rows of two tenants in one statement (as a batch admission writes them), then removed.
    const other = randomUUID();
    const copies = await db.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO data_requests (id, tenant_id, url_origin, target_purge_at, status, route_mode, pricing_version, base_tokens, token_state, options, created_at)
       SELECT gen_random_uuid(), CASE WHEN g % 2 = 0 THEN $1::uuid ELSE $2::uuid END, 'http://127.0.0.1:9', now() + interval '1 day', 'pending', 'http', 2, 1, 'reserved', '{}'::jsonb, now()
         FROM generate_series(1, 20) g RETURNING id::text`,
      tenant,
      other,
    );
    expect(await counted(tenant)).toEqual({ kept: 11, actual: 11 });
    expect(await counted(other)).toEqual({ kept: 10, actual: 10 });
    await db.$executeRawUnsafe(
      'DELETE FROM data_requests WHERE id = ANY($1::uuid[])',
      copies.map((c) => c.id),
    );
    expect(await counted(tenant)).toEqual({ kept: 1, actual: 1 });
    expect(await counted(other)).toEqual({ kept: 0, actual: 0 });
  });
});

/**
 * A request a credit lease serves is checked (replay, ceiling) and stored in one statement with its
 * hold (requests/create.ts insertLeased), against the real ledger's grant: nothing of it is written
 * for a replay or past the ceiling.
 */
describe('leased admission', () => {
  const heldOf = async (tenant: string) =>
    Number(
      (
        await db.$queryRawUnsafe<{ held: bigint }[]>(
          'SELECT coalesce(sum(held), 0)::bigint AS held FROM tenant_leases WHERE tenant_id = $1::uuid',
          tenant,
        )
      )[0]!.held,
    );

  it('stores a leased request with its hold in one statement; a replay and a create past the ceiling write nothing', async () => {
    const tenant = await fundedTenant(10_000);
    const leases = new CreditLeases(db, deps.ledger, { enabled: true, blockTokens: 100, slots: 1 }, createLogger('test', 'silent'));
    const leased = { ...deps, leases } as AdmissionDeps;
    // The first create finds no terms yet: it reserves with the ledger and the slot is granted meanwhile.
    const first = command({ tenant_id: tenant });
    await createRequest(leased, first);
    await leases.topUp(tenant, 0, 'http', null);
    expect(leases.quote(command({ tenant_id: tenant }))).not.toBeNull();
    expect(await reservationsOf(tenant)).toBe(1);

    const cmd = command({ tenant_id: tenant, concurrency: { limit: 3, others_in_flight: 0 } });
    expect(await createRequest(leased, cmd)).toMatchObject({
      id: cmd.request_id,
      status: 'pending',
      charged_tokens: 1,
      idempotent_replay: false,
    });
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } });
    expect(row.leaseId).not.toBeNull();
    expect(await heldOf(tenant)).toBe(1);
    // No reservation of its own: the lease's grant holds it.
    expect(await reservationsOf(tenant)).toBe(1);
    expect((await outboxOf(cmd.request_id)).map((m) => m.topic)).toEqual(['requestLifecycle', 'fetchJobs']);

    // The same id again: a replay, never refused for concurrency, nothing taken from the slot.
    expect(await createRequest(leased, { ...cmd, concurrency: { limit: 1, others_in_flight: 5 } })).toMatchObject({
      idempotent_replay: true,
    });
    await expect(createRequest(leased, { ...cmd, input_hash: 'c'.repeat(64) })).rejects.toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
    expect(await heldOf(tenant)).toBe(1);

    // Two of the tenant's requests are pending: a third with two more in flight at the gateway is past 3.
    const over = command({ tenant_id: tenant, concurrency: { limit: 3, others_in_flight: 2 } });
    await expect(createRequest(leased, over)).rejects.toMatchObject({ code: 'CONCURRENCY_LIMITED' });
    expect(await db.dataRequest.count({ where: { id: over.request_id } })).toBe(0);
    expect(await heldOf(tenant)).toBe(1);
    expect(await reservationsOf(tenant)).toBe(1);
    // One more fits.
    const fits = command({ tenant_id: tenant, concurrency: { limit: 3, others_in_flight: 0 } });
    await createRequest(leased, fits);
    expect(await heldOf(tenant)).toBe(2);
  });
});

/**
 * HTTP stages run where admitted (domain/local-runs.ts), against the real Postgres: the claim
 * replaces the job message, a full set of slots falls back to the job, and a claim that runs out
 * (its instance gone) or a stage that fails comes back as a job; renewal keeps a live one.
 */
describe('local runs', () => {
  /** Local runs whose stage waits until the test lets it end (or fail). */
  function localRuns(slots: number, over: Partial<LocalRunsOptions> = {}) {
    const started: DataRequest[] = [];
    const gates = new Map<string, { end: () => void; fail: (e: Error) => void }>();
    const runs = new LocalHttpRuns(
      sql,
      createLogger('test', 'silent'),
      { slots, claimMs: 30_000, everyMs: 60_000, drainMs: 200, ...over },
      (row) =>
        new Promise<void>((end, fail) => {
          started.push(row);
          gates.set(row.id, { end, fail });
        }),
    );
    return { runs, started, gates, deps: { ...deps, localRuns: runs } as AdmissionDeps };
  }
  const claimOf = async (id: string) =>
    (await db.dataRequest.findUniqueOrThrow({ where: { id }, select: { claimedUntil: true } })).claimedUntil;
  const jobsOf = async (id: string) => (await outboxOf(id)).filter((m) => m.topic === 'fetchJobs').length;
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  };

  it('an HTTP request given a free slot is stored claimed, without a job, and its stage starts here with the stored row', async () => {
    const { runs, started, gates, deps: local } = localRuns(1);
    const cmd = command();
    const t0 = Date.now();
    await createRequest(local, cmd);
    expect(started.map((r) => [r.id, r.status, r.tenantId, r.attempts])).toEqual([[cmd.request_id, 'pending', TENANT, 0]]);
    expect((await outboxOf(cmd.request_id)).map((m) => m.topic)).toEqual(['requestLifecycle']);
    const claim = (await claimOf(cmd.request_id))!.getTime();
    // now() + 30 s, by the database's clock.
    expect(claim).toBeGreaterThan(t0 + 25_000);
    expect(claim).toBeLessThan(Date.now() + 35_000);
    expect(runs.size).toBe(1);

    // The slot is taken: the next one queues its job, unclaimed; a browser route always does.
    const queued = command();
    await createRequest(local, queued);
    const browser = command({ route_mode: 'browser' });
    await createRequest(local, browser);
    expect(started).toHaveLength(1);
    expect((await outboxOf(queued.request_id)).map((m) => m.topic)).toEqual(['requestLifecycle', 'fetchJobs']);
    expect((await outboxOf(browser.request_id)).map((m) => m.topic)).toEqual(['requestLifecycle', 'renderJobs']);
    expect([await claimOf(queued.request_id), await claimOf(browser.request_id)]).toEqual([null, null]);

    gates.get(cmd.request_id)!.end();
    await until(() => runs.size === 0);
    // Free again.
    const next = command();
    await createRequest(local, next);
    expect(started.map((r) => r.id)).toEqual([cmd.request_id, next.request_id]);
    gates.get(next.request_id)!.end();
  });

  it('a request that may not be served from the cache starts running with its admission: one statement, both events', async () => {
    const { started, gates, deps: local } = localRuns(1);
    const cmd = command({ options: { timeout_ms: 45_000, skip_cache: true } });
    const view = await createRequest(local, cmd);
    expect(view).toMatchObject({ id: cmd.request_id, status: 'running', charged_tokens: 1, idempotent_replay: false });
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } });
    expect(row).toMatchObject({ status: 'running', attempts: 1, lastEventSeq: 2, startedAt: row.createdAt });
    expect(started.map((r) => [r.status, r.attempts, r.lastEventSeq, r.startedAt?.getTime()])).toEqual([
      ['running', 1, 2, row.createdAt.getTime()],
    ]);
    const history = await readEvents(db, cmd.tenant_id, cmd.request_id);
    expect(history.events.map((e) => [e.event_id, e.kind, e.status, e.payload])).toEqual([
      [1, 'request.accepted', 'pending', { route_mode: 'http', base_tokens: 1 }],
      [2, 'request.running', 'running', { stage: 'http', attempt: 1 }],
    ]);
    const out = await outboxOf(cmd.request_id);
    expect(out.map((m) => [m.topic, m.envelope.data['event_id'], m.envelope.data['kind']])).toEqual([
      ['requestLifecycle', 1, 'request.accepted'],
      ['requestLifecycle', 2, 'request.running'],
    ]);
    // The next event continues the sequence.
    expect(await db.$transaction((tx) => appendEvent(tx, row, 'request.note', 'running', {}))).toBe(3);
    gates.get(cmd.request_id)!.end();
  });

  it('a replay or a refused create frees the slot it took, and starts nothing', async () => {
    const { runs, started, gates, deps: local } = localRuns(1);
    const cmd = command();
    await createRequest(local, cmd);
    gates.get(cmd.request_id)!.end();
    await until(() => runs.size === 0);
    expect(await createRequest(local, cmd)).toMatchObject({ idempotent_replay: true });
    await expect(createRequest(local, { ...cmd, input_hash: 'b'.repeat(64) })).rejects.toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
    // A tenant the ledger holds nothing for.
    await expect(createRequest(local, command({ tenant_id: randomUUID() }))).rejects.toThrow();
    expect(started).toHaveLength(1);
    // The slot is still there to take.
    const next = command();
    await createRequest(local, next);
    expect(started.map((r) => r.id)).toEqual([cmd.request_id, next.request_id]);
    gates.get(next.request_id)!.end();
  });

  it('renewal keeps a running stage claimed; a claim that ran out is swept into a job (an ended request only unclaimed)', async () => {
    const alive = localRuns(4);
    const running = command();
    await createRequest(alive.deps, running);
    // Another instance's claims, which it stopped renewing (it died): one request still pending, one cancelled since.
    const dead = localRuns(4);
    const orphan = command();
    const ended = command();
    await createRequest(dead.deps, orphan);
    await createRequest(dead.deps, ended);
    await db.$executeRawUnsafe(`UPDATE data_requests SET status = 'cancelled' WHERE id = $1::uuid`, ended.request_id);
    await db.$executeRawUnsafe(`UPDATE data_requests SET claimed_until = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [
      running.request_id,
      orphan.request_id,
      ended.request_id,
    ]);
    // The live instance renews its own claim before anyone sweeps (its pass does both, renewal first).
    await alive.runs.tick();
    expect((await claimOf(running.request_id))!.getTime()).toBeGreaterThan(Date.now() + 25_000);
    expect(await jobsOf(running.request_id)).toBe(0);
    expect([await claimOf(orphan.request_id), await claimOf(ended.request_id)]).toEqual([null, null]);
    const jobs = (await outboxOf(orphan.request_id)).filter((m) => m.topic === 'fetchJobs');
    expect(jobs.map((m) => [m.envelope.type, m.envelope.data['request_id']])).toEqual([['fetch.job_requested', orphan.request_id]]);
    expect(await jobsOf(ended.request_id)).toBe(0);
    // Swept once: a second pass finds nothing.
    await alive.runs.tick();
    expect(await jobsOf(orphan.request_id)).toBe(1);
    alive.gates.get(running.request_id)!.end();
    for (const g of dead.gates.values()) g.end();
  });

  it('a backlog entry is admitted claimed and runs here once a slot frees; past the backlog, the job queues', async () => {
    const { runs, started, gates, deps: local } = localRuns(1, { backlog: 1, backlogWaitMs: 30_000 });
    const first = command();
    const waiting = command();
    const queued = command();
    for (const c of [first, waiting, queued]) await createRequest(local, c);
    // One stage runs, one waits claimed (no job, no page), the third went to Kafka.
    expect(started.map((r) => r.id)).toEqual([first.request_id]);
    expect(runs.size).toBe(2);
    expect(await claimOf(waiting.request_id)).not.toBeNull();
    expect([await jobsOf(first.request_id), await jobsOf(waiting.request_id), await jobsOf(queued.request_id)]).toEqual([0, 0, 1]);
    gates.get(first.request_id)!.end();
    await until(() => started.length === 2);
    expect(started.map((r) => r.id)).toEqual([first.request_id, waiting.request_id]);
    expect(await jobsOf(waiting.request_id)).toBe(0);
    gates.get(waiting.request_id)!.end();
    await until(() => runs.size === 0);
    expect(runs.size).toBe(0);
  });

  it('a backlog entry that waited past its bound goes to fetch.jobs, unclaimed, and never runs here', async () => {
    const { runs, started, gates, deps: local } = localRuns(1, { backlog: 1, backlogWaitMs: 200 });
    const slow = command();
    const waiting = command();
    for (const c of [slow, waiting]) await createRequest(local, c);
    await until(() => runs.size === 1);
    expect(runs.size).toBe(1);
    expect(await jobsOf(waiting.request_id)).toBe(1);
    expect(await claimOf(waiting.request_id)).toBeNull();
    gates.get(slow.request_id)!.end();
    await until(() => runs.size === 0);
    expect(started.map((r) => r.id)).toEqual([slow.request_id]);
  });

  it('stop hands a backlog entry back to fetch.jobs with the running stages, and it does not run after', async () => {
    const { runs, started, gates, deps: local } = localRuns(1, { backlog: 1, backlogWaitMs: 30_000 });
    const slow = command();
    const waiting = command();
    for (const c of [slow, waiting]) await createRequest(local, c);
    await runs.stop();
    expect([await jobsOf(slow.request_id), await jobsOf(waiting.request_id)]).toEqual([1, 1]);
    gates.get(slow.request_id)!.end();
    await until(() => runs.size === 0);
    expect(started.map((r) => r.id)).toEqual([slow.request_id]);
  });

  it('a stage that fails is handed to fetch.jobs at once; stop hands back what still runs after the drain', async () => {
    const { runs, gates, deps: local } = localRuns(4);
    const failing = command();
    const slow = command();
    const quick = command();
    for (const c of [failing, slow, quick]) await createRequest(local, c);
    gates.get(failing.request_id)!.fail(new Error('the database went away'));
    await until(() => runs.size === 2);
    expect(await jobsOf(failing.request_id)).toBe(1);
    expect(await claimOf(failing.request_id)).toBeNull();

    const stopped = runs.stop();
    // Stopping takes no more admissions.
    const late = command();
    await createRequest(local, late);
    expect(await jobsOf(late.request_id)).toBe(1);
    gates.get(quick.request_id)!.end();
    await stopped;
    expect(await jobsOf(quick.request_id)).toBe(0);
    expect(await jobsOf(slow.request_id)).toBe(1);
    expect(await claimOf(slow.request_id)).toBeNull();
    gates.get(slow.request_id)!.end();
  });
});
