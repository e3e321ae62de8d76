import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestDatabase, eventually, uniqueTopicPrefix, withDatabase, type TestDatabase } from '@wdr/testkit';
import { makeEnvelope } from '@wdr/kit/kafka';
import { createLedgerDeps, createLedgerService, type LedgerDeps } from '../src/app.js';
import { loadLedgerEnv } from '../src/env.js';

/** The ledger in-process against the real Postgres and Kafka. */
let database: TestDatabase;
let deps: LedgerDeps;
let service: ReturnType<typeof createLedgerService>;

beforeAll(async () => {
  database = await createTestDatabase('billing-ledger');
  deps = createLedgerDeps(loadLedgerEnv({ DATABASE_URL: database.url, KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(), LOG_LEVEL: 'silent', OUTBOX_POLL_MS: '50' }));
  service = createLedgerService(deps);
  await service.start();
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await database?.drop();
}, 60_000);

const api = () => request(service.app);

async function sumOfBalances(): Promise<string> {
  return withDatabase(database.url, async (c) => (await c.query<{ s: string }>('SELECT sum(credits_posted - debits_posted)::text AS s FROM accounts')).rows[0]!.s);
}

async function newTenant(credits: number): Promise<string> {
  const tenant = randomUUID();
  if (credits > 0) await api().post(`/internal/v1/accounts/${tenant}/grants`).send({ amount: credits, reference: `t-${tenant}` }).expect(201);
  return tenant;
}

const reserveBody = (tenant: string, extra: Record<string, unknown> = {}) => ({
  request_id: randomUUID(),
  tenant_id: tenant,
  route_mode: 'http',
  proxy_type: null,
  max_credits: null,
  ...extra,
});

describe('admission', () => {
  it('admits exactly as many of 200 concurrent reservations as the balance covers', async () => {
    const tenant = await newTenant(50);
    const results = await Promise.all(Array.from({ length: 200 }, () => api().post('/internal/v1/reservations').send(reserveBody(tenant))));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(50);
    expect(statuses.filter((s) => s === 402)).toHaveLength(150);
    expect(results.find((r) => r.status === 402)!.body).toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    const balance = await api().get(`/internal/v1/accounts/${tenant}/balance`).expect(200);
    expect(balance.body).toEqual({ balance_tokens: 0, reserved_tokens: 50 });
    expect(await sumOfBalances()).toBe('0');
  }, 60_000);

  it('prices modes from the table and replays a repeated reservation for free', async () => {
    const tenant = await newTenant(100);
    const body = reserveBody(tenant, { route_mode: 'residential_browser' });
    const first = await api().post('/internal/v1/reservations').send(body).expect(201);
    expect(first.body).toMatchObject({ base_tokens: 25, charged_tokens: 25, pricing_version: 2, proxy_type: 'residential', quote: null, replay: false });
    const again = await api().post('/internal/v1/reservations').send(body).expect(200);
    expect(again.body).toMatchObject({ base_tokens: 25, charged_tokens: 0, replay: true, balance_tokens: 75 });
    const browser = await api().post('/internal/v1/reservations').send(reserveBody(tenant, { route_mode: 'browser' })).expect(201);
    expect(browser.body.base_tokens).toBe(5);
  });

  it('refuses a ceiling below the base price and an unpriced premium network, writing nothing', async () => {
    const tenant = await newTenant(100);
    const low = await api().post('/internal/v1/reservations').send(reserveBody(tenant, { route_mode: 'browser', max_credits: 4 }));
    expect(low.status).toBe(422);
    expect(low.body).toMatchObject({ code: 'BUDGET_BELOW_BASE_PRICE', details: [{ field: 'max_credits_per_request' }] });
    const premium = await api().post('/internal/v1/reservations').send(reserveBody(tenant, { proxy_type: 'premium' }));
    expect(premium.status).toBe(422);
    expect((await api().get(`/internal/v1/accounts/${tenant}/balance`)).body).toEqual({ balance_tokens: 100, reserved_tokens: 0 });
  });
});

describe('settlement over Kafka', () => {
  it('resolves each reservation once, whatever is redelivered or replayed', async () => {
    const tenant = await newTenant(10);
    const charged = reserveBody(tenant);
    const refunded = reserveBody(tenant);
    await api().post('/internal/v1/reservations').send(charged).expect(201);
    await api().post('/internal/v1/reservations').send(refunded).expect(201);
    const settle = (requestId: string, outcome: 'completed' | 'failed') =>
      makeEnvelope('billingCommands', 'billing.settlement_requested', tenant, { request_id: requestId, outcome, route_mode: 'http', captcha_tokens: 0 });
    const a = settle(charged.request_id, 'completed');
    const b = settle(refunded.request_id, 'failed');
    // The same envelope twice (redelivery) and a second command for the same request (replay).
    await deps.bus.send(deps.bus.topic('billingCommands'), [a, a, b, settle(charged.request_id, 'failed')].map((envelope) => ({ key: envelope.data.request_id, envelope })));

    const states = () =>
      withDatabase(database.url, async (c) => (await c.query<{ request_id: string; state: string; charged_tokens: string | null }>('SELECT request_id, state, charged_tokens FROM reservations WHERE tenant_id = $1', [tenant])).rows);
    await eventually(states, (rows) => rows.every((r) => r.state !== 'reserved'), 30_000);
    const byId = Object.fromEntries((await states()).map((r) => [r.request_id, r]));
    expect(byId[charged.request_id]).toMatchObject({ state: 'settled', charged_tokens: '1' });
    expect(byId[refunded.request_id]).toMatchObject({ state: 'refunded', charged_tokens: '0' });
    // Let any duplicate be processed before looking at the money.
    await eventually(
      () => withDatabase(database.url, async (c) => (await c.query("SELECT 1 FROM processed_messages WHERE consumer = 'billing-ledger'")).rowCount ?? 0),
      (n) => n >= 3,
      30_000,
    );
    expect((await api().get(`/internal/v1/accounts/${tenant}/balance`)).body).toEqual({ balance_tokens: 9, reserved_tokens: 0 });
    expect(await sumOfBalances()).toBe('0');
    const resolved = await withDatabase(database.url, async (c) => (await c.query("SELECT count(*)::int AS n FROM outbox_messages WHERE envelope->>'type' = 'billing.reservation_resolved' AND envelope->'data'->>'request_id' = ANY($1)", [[charged.request_id, refunded.request_id]])).rows[0].n);
    expect(resolved).toBe(2);
  }, 60_000);
});
