import { randomUUID } from 'node:crypto';
import { PgSql } from '@wdr/kit/pg-sql';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ledgerApi } from '@wdr/contracts';
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
import { PrismaClient } from '../src/generated/prisma/client.js';
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
    'SELECT topic, envelope FROM outbox_messages WHERE message_key = $1 ORDER BY id',
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
      Array.from({ length: 10 }, (_, i) => db.$transaction((tx) => appendEvent(tx, row, `request.note_${i}`, 'running', { i }))),
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
