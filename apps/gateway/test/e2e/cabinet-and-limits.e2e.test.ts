import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, eventually, startFixtureSite, startFleet, withDatabase, type FixtureSite, type Fleet } from '@wdr/testkit';

/**
 * The client (cabinet) API and the per-tenant admission limits through the real fleet: cabinet
 * tokens (issue, use, expire, revoke), cabinet submissions, both recipe listings, the recipe
 * capabilities, tenant isolation, rate limits (GCRA in Redis) and concurrency limits.
 */
let fleet: Fleet;
let site: FixtureSite;

const gateway = () => request(fleet.url('gateway'));
const DEFAULT_RATE = 1000;

interface Tenant {
  id: string;
  apiKey: string;
  token: string;
  tokenId: string;
}

async function newTenant(name: string, credits = 1000): Promise<Tenant> {
  const t = await adminCommand(fleet, ['create-tenant', '--name', name, '--credits', String(credits)]);
  const c = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t['tenant_id'] as string]);
  return { id: t['tenant_id'] as string, apiKey: t['api_key'] as string, token: c['cabinet_token'] as string, tokenId: c['token_id'] as string };
}

function expectPublicError(res: request.Response, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.body).toEqual({ code, message: expect.any(String), request_id: expect.any(String), ...(res.body.details ? { details: expect.any(Array) } : {}) });
}

const clientSubmit = (token: string, body: unknown, key?: string) => {
  const req = gateway().post('/api/v1/client/requests').set('Authorization', `Bearer ${token}`);
  return (key ? req.set('Idempotency-Key', key) : req).send(body as object);
};
const dataSubmit = (apiKey: string, body: unknown, key?: string) => {
  const req = gateway().post('/api/v1/data/requests').set('X-API-Key', apiKey);
  return (key ? req.set('Idempotency-Key', key) : req).send(body as object);
};

let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet({
    env: { gateway: { REDIS_KEY_PREFIX: `wdr:test:${randomUUID()}:`, RATE_LIMIT_SUBMISSIONS: String(DEFAULT_RATE), RATE_LIMIT_WINDOW_SECONDS: '60', CONCURRENCY_LIMIT: '50' } },
  });
  [a, b] = await Promise.all([newTenant('cabinet-a'), newTenant('cabinet-b')]);
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
}, 60_000);

describe('cabinet tokens', () => {
  const page = () => ({ url: `${site.url}/page`, mode: 'http' });

  it('authenticate POST /api/v1/client/requests and answer the cabinet shape', async () => {
    const res = await clientSubmit(a.token, { ...page(), url: `${site.url}/page?private=1` });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(
      ['id', 'url', 'status', 'cached', 'protected', 'base_tokens', 'protected_tokens', 'captcha_tokens', 'created_at', 'charged_tokens', 'pricing_version', 'route_mode', 'idempotent_replay'].sort(),
    );
    expect(res.body).toMatchObject({ url: site.url, status: 'pending', route_mode: 'http', base_tokens: 1, charged_tokens: 1, pricing_version: 2, idempotent_replay: false });
    // The request belongs to the token's tenant: readable with its API key, not with another's.
    const mine = await gateway().get(`/api/v1/data/requests/${res.body.id}`).set('X-API-Key', a.apiKey);
    expect(mine.status).toBe(200);
    const theirs = await gateway().get(`/api/v1/data/requests/${res.body.id}`).set('X-API-Key', b.apiKey);
    expectPublicError(theirs, 404, 'NOT_FOUND');
  });

  it('create a new request for every write without an Idempotency-Key, and replay with one', async () => {
    const [one, two] = [await clientSubmit(a.token, page()), await clientSubmit(a.token, page())];
    expect([one.status, two.status]).toEqual([202, 202]);
    expect(one.body.id).not.toBe(two.body.id);
    const key = `cab-${randomUUID()}`;
    const first = await clientSubmit(a.token, page(), key);
    const again = await clientSubmit(a.token, page(), key);
    expect(again.body).toMatchObject({ id: first.body.id, idempotent_replay: true, charged_tokens: 0 });
    expectPublicError(await clientSubmit(a.token, { ...page(), timeout_ms: 9000 }, key), 409, 'IDEMPOTENCY_CONFLICT');
    expectPublicError(await clientSubmit(a.token, page(), 'short'), 422, 'VALIDATION_FAILED');
  });

  it('validate the body with the rules of the data API', async () => {
    const res = await clientSubmit(a.token, { url: `${site.url}/page`, headers: { 'Transfer-Encoding': 'chunked' }, timeout_ms: 1 });
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    expect((res.body.details as { field: string }[]).map((d) => d.field).sort()).toEqual(['headers.Transfer-Encoding', 'timeout_ms']);
  });

  it.each([
    ['no Authorization header', () => undefined],
    ['another scheme', () => `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['a malformed token', () => 'Bearer not-a-token'],
    ['a wrong secret', () => `Bearer ${a.token.slice(0, -3)}xyz`],
    ['the API key as a bearer token', () => `Bearer ${a.apiKey}`],
    ['an empty bearer', () => 'Bearer '],
  ])('refuse %s with 401 and WWW-Authenticate', async (_n, header) => {
    const value = header();
    for (const req of [
      gateway().post('/api/v1/client/requests').send(page()),
      gateway().get('/api/v1/client/recipes'),
      gateway().get('/api/v1/client/recipes/capabilities'),
    ]) {
      const res = await (value ? req.set('Authorization', value) : req);
      expectPublicError(res, 401, 'UNAUTHENTICATED');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    }
  });

  it('are not API keys, and API keys are not tokens', async () => {
    expectPublicError(await gateway().post('/api/v1/data/requests').set('X-API-Key', a.token).send(page()), 401, 'UNAUTHENTICATED');
    expectPublicError(await gateway().post('/api/v1/client/requests').set('X-API-Key', a.apiKey).send(page()), 401, 'UNAUTHENTICATED');
  });

  it('stop working when revoked or expired, and are stored hashed', async () => {
    // The gateway drops a changed tenant's cached credentials when Postgres's NOTIFY for the commit
    // reaches it: milliseconds, not a guarantee for the very next request on a busy machine.
    const refusedSoon = (token: string) => eventually(() => clientSubmit(token, page()), (r) => r.status === 401, 2_000, 20);
    const t = await newTenant('revocable');
    expect((await clientSubmit(t.token, page())).status).toBe(202);
    const stored = await withDatabase(fleet.databases['gateway'].url, async (c) =>
      (await c.query<{ hash: string; prefix: string }>('SELECT hash, prefix FROM cabinet_tokens WHERE id = $1', [t.tokenId])).rows[0]!,
    );
    expect(stored.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(t.token).toContain(stored.prefix);
    expect(stored.hash).not.toContain(t.token.split('_')[2]);

    const revoked = await adminCommand(fleet, ['revoke-cabinet-token', '--token-id', t.tokenId]);
    expect(revoked).toEqual({ tenant_id: t.id, token_id: t.tokenId, revoked: true });
    expectPublicError(await refusedSoon(t.token), 401, 'UNAUTHENTICATED');

    const second = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t.id, '--expires-in-days', '1']);
    expect(new Date(second['expires_at'] as string).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect((await clientSubmit(second['cabinet_token'] as string, page())).status).toBe(202);
    await withDatabase(fleet.databases['gateway'].url, (c) => c.query("UPDATE cabinet_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [second['token_id']]));
    expectPublicError(await refusedSoon(second['cabinet_token'] as string), 401, 'UNAUTHENTICATED');

    const third = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t.id, '--expires-in-days', '0']);
    expect(third['expires_at']).toBeNull();
    await adminCommand(fleet, ['revoke-cabinet-token', '--token', third['cabinet_token'] as string]);
    expectPublicError(await refusedSoon(third['cabinet_token'] as string), 401, 'UNAUTHENTICATED');
    // The tenant's API key is untouched.
    expect((await dataSubmit(t.apiKey, page())).status).toBe(202);
  });
});

describe('recipes', () => {
  it.each([
    ['client', '/api/v1/client/recipes', () => ({ Authorization: `Bearer ${a.token}` })],
    ['data', '/api/v1/data/recipes', () => ({ 'X-API-Key': a.apiKey })],
  ])('the %s API lists an empty page for a tenant without recipes, with the envelope and the paging defaults (pages with recipes: recipes.e2e.test.ts)', async (_n, path, auth) => {
    const res = await gateway().get(path).set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ total: 0, limit: 20, offset: 0, has_more: false, items: [] });
    const paged = await gateway().get(`${path}?limit=100&offset=10000`).set(auth());
    expect(paged.body).toEqual({ total: 0, limit: 100, offset: 10000, has_more: false, items: [] });
    const one = await gateway().get(`${path}?limit=1`).set(auth());
    expect(one.body.limit).toBe(1);
  });

  it.each([
    ['/api/v1/client/recipes?limit=0', 'limit'],
    ['/api/v1/client/recipes?limit=101', 'limit'],
    ['/api/v1/client/recipes?limit=abc', 'limit'],
    ['/api/v1/client/recipes?limit=1.5', 'limit'],
    ['/api/v1/client/recipes?offset=-1', 'offset'],
    ['/api/v1/client/recipes?offset=x', 'offset'],
    ['/api/v1/data/recipes?limit=0', 'limit'],
    ['/api/v1/data/recipes?limit=101', 'limit'],
    ['/api/v1/data/recipes?offset=-1', 'offset'],
    ['/api/v1/data/recipes?offset=10001', 'offset'],
  ])('%s is 422 at %s', async (path, field) => {
    const res = await gateway()
      .get(path)
      .set(path.includes('/client/') ? { Authorization: `Bearer ${a.token}` } : { 'X-API-Key': a.apiKey });
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    expect(res.body.details).toEqual(expect.arrayContaining([{ field, issue: expect.any(String) }]));
  });

  it('the client API takes any offset >= 0', async () => {
    const res = await gateway().get('/api/v1/client/recipes?offset=250000').set('Authorization', `Bearer ${a.token}`);
    expect(res.status).toBe(200);
    expect(res.body.offset).toBe(250000);
  });

  it('the data API refuses a cabinet token and the client API an API key', async () => {
    expectPublicError(await gateway().get('/api/v1/data/recipes').set('Authorization', `Bearer ${a.token}`), 401, 'UNAUTHENTICATED');
    expectPublicError(await gateway().get('/api/v1/client/recipes').set('X-API-Key', a.apiKey), 401, 'UNAUTHENTICATED');
  });

  it('reports the recipe capabilities in the shape of the spec', async () => {
    const res = await gateway().get('/api/v1/client/recipes/capabilities').set('Authorization', `Bearer ${a.token}`);
    expect(res.status).toBe(200);
    const int = expect.any(Number);
    const strings = expect.arrayContaining([expect.any(String)]);
    expect(res.body).toEqual({
      enabled: expect.any(Boolean),
      dsl_version: int,
      generation_max_attempts: int,
      limits: { default_page_size: 20, max_page_size: 100, max_prompt_length: int, max_schema_bytes: int, max_rules: int, max_selectors_per_rule: int },
      extraction_fields: {
        scalar_types: strings,
        scalar_source_types: strings,
        object_collections: expect.any(Boolean),
        max_object_nesting_depth: int,
        collection_source_types: strings,
        collection_scope_selector: expect.any(String),
      },
      auto_repair: { enabled: expect.any(Boolean), automatic_repairs_per_window: int, window_hours: int, continuous_repair_requires_confirmation: expect.any(Boolean) },
      billing: {
        plan_id: expect.any(String),
        charge_currency: expect.any(String),
        charge_basis: expect.any(String),
        user_token_value_nano_usd: int,
        markup_basis_points: int,
        max_llm_charge_tokens: int,
        preflight_required_balance_tokens: int,
        exact_charge_available_after_completion: expect.any(Boolean),
        failed_operations_charged: expect.any(Boolean),
        deterministic_execution_uses_standard_scrape_pricing: expect.any(Boolean),
      },
    });
    // The billing terms are the ledger's plan data: a tenant moved to another plan sees its terms.
    expect(res.body.billing.plan_id).toBe('standard');
    await adminCommand(fleet, ['set-plan', '--tenant', a.id, '--plan', 'business'], 'billing-ledger');
    const business = await gateway().get('/api/v1/client/recipes/capabilities').set('Authorization', `Bearer ${a.token}`);
    expect(business.body.billing).toMatchObject({ plan_id: 'business' });
    expect(business.body.billing).not.toEqual(res.body.billing);
    await adminCommand(fleet, ['set-plan', '--tenant', a.id, '--plan', 'standard'], 'billing-ledger');
    const ints = [res.body.dsl_version, res.body.generation_max_attempts, ...Object.values(res.body.limits), ...Object.values(res.body.billing).filter((v) => typeof v === 'number')];
    for (const v of ints) expect(Number.isInteger(v)).toBe(true);
  });
});

describe('rate limits', () => {
  const page = () => ({ url: `${site.url}/page`, mode: 'http' });

  it('answer every submission with the RateLimit headers of the default policy', async () => {
    const t = await newTenant('rate-default');
    const res = await dataSubmit(t.apiKey, page());
    expect(res.status).toBe(202);
    expect(res.headers['ratelimit-limit']).toBe(String(DEFAULT_RATE));
    expect(res.headers['ratelimit-remaining']).toBe(String(DEFAULT_RATE - 1));
    expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(0);
    expect(res.headers['ratelimit-policy']).toBe(`${DEFAULT_RATE};w=60`);
  });

  it('refuse past a per-tenant override with 429, Retry-After and the headers; other tenants are unaffected', async () => {
    const t = await newTenant('rate-limited');
    const other = await newTenant('rate-bystander');
    expect(await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--rate', '3', '--window', '60'])).toMatchObject({ submissions_per_window: 3, window_seconds: 60 });
    const seen = [];
    for (let i = 0; i < 3; i++) {
      // The data API and the cabinet share one quota per tenant.
      const res = i === 1 ? await clientSubmit(t.token, page()) : await dataSubmit(t.apiKey, page());
      expect(res.status).toBe(202);
      seen.push([res.headers['ratelimit-limit'], res.headers['ratelimit-remaining'], res.headers['ratelimit-policy']]);
    }
    expect(seen).toEqual([
      ['3', '2', '3;w=60'],
      ['3', '1', '3;w=60'],
      ['3', '0', '3;w=60'],
    ]);
    const refused = await dataSubmit(t.apiKey, page());
    expectPublicError(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(19);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(20);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['ratelimit-reset'])).toBeGreaterThan(55);
    expectPublicError(await clientSubmit(t.token, page()), 429, 'RATE_LIMITED');
    // Refused submissions create nothing.
    const rows = await withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => (await c.query('SELECT 1 FROM data_requests WHERE tenant_id = $1', [t.id])).rowCount);
    expect(rows).toBe(3);

    const bystander = await dataSubmit(other.apiKey, page());
    expect(bystander.status).toBe(202);
    expect(bystander.headers['ratelimit-limit']).toBe(String(DEFAULT_RATE));
  });

  it('free a slot after window / limit seconds', async () => {
    const t = await newTenant('rate-refill');
    await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--rate', '2', '--window', '2']);
    expect((await dataSubmit(t.apiKey, page())).status).toBe(202);
    expect((await dataSubmit(t.apiKey, page())).status).toBe(202);
    const refused = await dataSubmit(t.apiKey, page());
    expectPublicError(refused, 429, 'RATE_LIMITED');
    expect(refused.headers['retry-after']).toBe('1');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await dataSubmit(t.apiKey, page())).status).toBe(202);
  });

  it('do not count requests refused by validation or authentication', async () => {
    const t = await newTenant('rate-invalid');
    await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--rate', '1']);
    for (let i = 0; i < 3; i++) expect((await dataSubmit(t.apiKey, { url: 'nope' })).status).toBe(422);
    expect((await dataSubmit(t.apiKey, page())).status).toBe(202);
  });
});

describe('concurrency limits', () => {
  const slow = (i: number) => ({ url: `${site.url}/slow?ms=6000&i=${i}`, mode: 'http', timeout_ms: 30_000 });

  it('refuse a submission beyond the non-terminal ceiling with 429 CONCURRENCY_LIMITED, replays excepted, others unaffected', async () => {
    const t = await newTenant('busy');
    const other = await newTenant('not-busy');
    await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--concurrency', '2']);
    const key = `busy-${randomUUID()}`;
    const first = await dataSubmit(t.apiKey, slow(1), key);
    const second = await clientSubmit(t.token, slow(2));
    expect([first.status, second.status]).toEqual([202, 202]);

    const third = await dataSubmit(t.apiKey, slow(3));
    expectPublicError(third, 429, 'CONCURRENCY_LIMITED');
    expect(third.headers['retry-after']).toBe('1');
    expectPublicError(await clientSubmit(t.token, slow(3)), 429, 'CONCURRENCY_LIMITED');
    // A replay of a request already admitted is not a new request.
    const replay = await dataSubmit(t.apiKey, slow(1), key);
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ id: first.body.id, idempotent_replay: true });
    // A new key with a body at the ceiling is still refused.
    expectPublicError(await dataSubmit(t.apiKey, slow(4), `busy-${randomUUID()}`), 429, 'CONCURRENCY_LIMITED');

    expect((await dataSubmit(other.apiKey, slow(5))).status).toBe(202);

    // Once the two finish, the tenant may submit again.
    for (const id of [first.body.id, second.body.id]) {
      await eventually(
        async () => (await gateway().get(`/api/v1/data/requests/${id}`).set('X-API-Key', t.apiKey)).body.status,
        (s) => s === 'completed',
        30_000,
        250,
      );
    }
    expect((await dataSubmit(t.apiKey, slow(6))).status).toBe(202);
  }, 60_000);

  it('never admits more than the ceiling under a burst of parallel submissions', async () => {
    const t = await newTenant('burst');
    await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--concurrency', '3']);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => dataSubmit(t.apiKey, slow(100 + i))));
    const accepted = results.filter((r) => r.status === 202);
    const refused = results.filter((r) => r.status === 429);
    expect(accepted.length + refused.length).toBe(12);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(accepted.length).toBeLessThanOrEqual(3);
    for (const r of refused) expect(r.body.code).toBe('CONCURRENCY_LIMITED');
    const active = await withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) =>
      (await c.query("SELECT 1 FROM data_requests WHERE tenant_id = $1 AND status NOT IN ('completed','failed','cancelled')", [t.id])).rowCount,
    );
    expect(active).toBeLessThanOrEqual(3);
  }, 60_000);
});
