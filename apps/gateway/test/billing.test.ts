import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { KafkaBus, makeEnvelope } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import {
  createTestDatabase,
  eventually,
  identityEnvOf,
  internalAgent,
  KAFKA_BROKERS,
  startServiceProcess,
  uniqueTopicPrefix,
  type ServiceProcess,
  type TestDatabase,
} from '@wdr/testkit';
import { createApp } from '../src/app.js';
import { createGatewayDeps, type GatewayDeps } from '../src/deps.js';
import { loadGatewayEnv } from '../src/env.js';
import { createTenant } from '../src/domain/tenants/tenants.js';

/**
 * GET /api/v1/data/balance and /statement: the gateway in-process in front of the real
 * billing-ledger process, real Postgres and Kafka (settlements arrive over billing.commands).
 */
let gatewayDb: TestDatabase;
let ledgerDb: TestDatabase;
let ledger: ServiceProcess;
let bus: KafkaBus;
let deps: GatewayDeps;
let app: ReturnType<typeof createApp>;
let tenantId: string;
let apiKey: string;

beforeAll(async () => {
  [gatewayDb, ledgerDb] = await Promise.all([createTestDatabase('gateway'), createTestDatabase('billing-ledger')]);
  const prefix = uniqueTopicPrefix();
  ledger = await startServiceProcess('billing-ledger', {
    DATABASE_URL: ledgerDb.url,
    KAFKA_TOPIC_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    OUTBOX_POLL_MS: '100',
  });
  bus = new KafkaBus({ clientId: 'gateway-billing-test', brokers: KAFKA_BROKERS, prefix, log: createLogger('test', 'silent') });
  await bus.connect();
  deps = createGatewayDeps(
    loadGatewayEnv({
      ...identityEnvOf('gateway'),
      DATABASE_URL: gatewayDb.url,
      LEDGER_URL: ledger.url,
      API_KEY_PEPPER: 'test-pepper-not-secret-0123456789',
      LOG_LEVEL: 'silent',
      KAFKA_TOPIC_PREFIX: prefix,
    }),
  );
  app = createApp(deps);
  ({ tenantId, apiKey } = await createTenant(deps.db, 'billing-test', deps.env.API_KEY_PEPPER));
  // Funded by a grant, the gateway's own route (no service may call the top-up route).
  await internalAgent(request(ledger.url), 'billing-ledger')
    .post(`/internal/v1/accounts/${tenantId}/grants`)
    .send({ amount: 500, reference: `gw-${tenantId}` })
    .expect(201);
}, 120_000);

afterAll(async () => {
  await deps?.db.$disconnect();
  deps?.redis.disconnect();
  await bus?.disconnect();
  await ledger?.kill('SIGTERM');
  await Promise.all([gatewayDb?.drop(), ledgerDb?.drop()]);
}, 60_000);

const get = (path: string, key = apiKey) => request(app).get(path).set('X-API-Key', key);

async function runRequest(route_mode: string) {
  const request_id = randomUUID();
  await internalAgent(request(ledger.url), 'billing-ledger')
    .post('/internal/v1/reservations')
    .send({ request_id, tenant_id: tenantId, route_mode, proxy_type: null, max_credits: null })
    .expect(201);
  const envelope = makeEnvelope('billingCommands', 'billing.settlement_requested', tenantId, {
    request_id,
    outcome: 'completed',
    route_mode,
    captcha_tokens: 0,
  });
  await bus.send(bus.topic('billingCommands'), [{ key: request_id, envelope }]);
  await eventually(
    async () =>
      (await internalAgent(request(ledger.url), 'billing-ledger').get(`/internal/v1/reservations/${request_id}`)).body.token_state,
    (s) => s === 'settled',
    30_000,
    50,
  );
  return request_id;
}

describe('usage, balance and statement', () => {
  // Proxy traffic usage is fed by real proxied requests in test/e2e/proxies.e2e.test.ts.
  it('shows the balance and an itemised statement whose effects add up to it', async () => {
    await runRequest('residential');
    const requestId = await runRequest('browser');
    const balance = (await get('/api/v1/data/balance').expect(200)).body;
    // 500 - 10 (residential) - 5 (browser).
    expect(balance).toEqual({ balance_tokens: 485, reserved_tokens: 0, plan_id: 'standard', low_balance_threshold_tokens: 100 });
    const first = (await get('/api/v1/data/statement?limit=3').expect(200)).body;
    expect(first.items).toHaveLength(3);
    expect(first.items[0]).toMatchObject({ request_id: requestId, type: 'settlement', kind: 'post_pending' });
    const rest = (await get(`/api/v1/data/statement?limit=100&cursor=${first.next_cursor}`).expect(200)).body;
    expect(rest.next_cursor).toBeNull();
    const all = [...first.items, ...rest.items];
    expect(all.reduce((s: number, i: { balance_effect_tokens: number }) => s + i.balance_effect_tokens, 0)).toBe(485);
    expect(all.at(-1)).toMatchObject({ type: 'grant', amount_tokens: 500 });
  }, 60_000);

  it('rejects a missing key, a bad page size and a forged cursor', async () => {
    await request(app).get('/api/v1/data/balance').expect(401);
    expect((await get('/api/v1/data/statement?limit=0')).status).toBe(422);
    expect((await get('/api/v1/data/statement?cursor=%27%3B--')).status).toBe(422);
    // Another tenant sees its own, empty, books.
    const other = await createTenant(deps.db, 'other', deps.env.API_KEY_PEPPER);
    expect((await get('/api/v1/data/balance', other.apiKey).expect(200)).body).toMatchObject({ balance_tokens: 0, reserved_tokens: 0 });
    expect((await get('/api/v1/data/statement', other.apiKey).expect(200)).body).toEqual({ items: [], next_cursor: null });
  });
});
