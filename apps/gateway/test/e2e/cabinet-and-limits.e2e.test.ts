// Own fleet (not the shared one of ./shared/): every recipe limit away from its default, rate limits of its own, and it restarts recipe-extractor with RECIPES_ENABLED=false.
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
  return {
    id: t['tenant_id'] as string,
    apiKey: t['api_key'] as string,
    token: c['cabinet_token'] as string,
    tokenId: c['token_id'] as string,
  };
}

function expectPublicError(res: request.Response, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.body).toEqual({
    code,
    message: expect.any(String),
    request_id: expect.any(String),
    ...(res.body.details ? { details: expect.any(Array) } : {}),
  });
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

/** recipe-extractor's configuration in this fleet (defaults: 100 rules, 65536 bytes, 5 selectors, 4000 characters, depth 2, 3 attempts, 3 repairs per 24 h). */
const RECIPE_CONFIG = {
  RECIPE_MAX_RULES: '7',
  RECIPE_MAX_SCHEMA_BYTES: '6000',
  RECIPE_MAX_SELECTORS_PER_RULE: '2',
  RECIPE_MAX_PROMPT_LENGTH: '300',
  RECIPE_MAX_OBJECT_NESTING_DEPTH: '1',
  RECIPE_GENERATION_MAX_ATTEMPTS: '4',
  RECIPE_AUTO_REPAIRS_PER_WINDOW: '5',
  RECIPE_REPAIR_WINDOW_HOURS: '12',
};

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet({
    env: {
      gateway: {
        REDIS_KEY_PREFIX: `wdr:test:${randomUUID()}:`,
        RATE_LIMIT_SUBMISSIONS: String(DEFAULT_RATE),
        RATE_LIMIT_WINDOW_SECONDS: '60',
        CONCURRENCY_LIMIT: '50',
      },
      // Every recipe limit away from its default: capabilities must report these, and enforce them.
      'recipe-extractor': RECIPE_CONFIG,
    },
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
      [
        'id',
        'url',
        'status',
        'cached',
        'protected',
        'base_tokens',
        'protected_tokens',
        'captcha_tokens',
        'created_at',
        'charged_tokens',
        'pricing_version',
        'route_mode',
        'idempotent_replay',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      url: site.url,
      status: 'pending',
      route_mode: 'http',
      base_tokens: 1,
      charged_tokens: 1,
      pricing_version: 2,
      idempotent_replay: false,
    });
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
    const refusedSoon = (token: string) =>
      eventually(
        () => clientSubmit(token, page()),
        (r) => r.status === 401,
        2_000,
        20,
      );
    const t = await newTenant('revocable');
    expect((await clientSubmit(t.token, page())).status).toBe(202);
    const stored = await withDatabase(
      fleet.databases['gateway'].url,
      async (c) =>
        (await c.query<{ hash: string; prefix: string }>('SELECT hash, prefix FROM cabinet_tokens WHERE id = $1', [t.tokenId])).rows[0]!,
    );
    expect(stored.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(t.token).toContain(stored.prefix);
    // The secret is everything after `wdrc_<prefix>_`; it is base64url, so it may hold '_' itself.
    expect(stored.hash).not.toContain(t.token.split('_').slice(2).join('_'));

    const revoked = await adminCommand(fleet, ['revoke-cabinet-token', '--token-id', t.tokenId]);
    expect(revoked).toEqual({ tenant_id: t.id, token_id: t.tokenId, revoked: true });
    expectPublicError(await refusedSoon(t.token), 401, 'UNAUTHENTICATED');

    const second = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t.id, '--expires-in-days', '1']);
    expect(new Date(second['expires_at'] as string).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect((await clientSubmit(second['cabinet_token'] as string, page())).status).toBe(202);
    await withDatabase(fleet.databases['gateway'].url, (c) =>
      c.query("UPDATE cabinet_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [second['token_id']]),
    );
    expectPublicError(await refusedSoon(second['cabinet_token'] as string), 401, 'UNAUTHENTICATED');

    const third = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t.id, '--expires-in-days', '0']);
    expect(third['expires_at']).toBeNull();
    await adminCommand(fleet, ['revoke-cabinet-token', '--token', third['cabinet_token'] as string]);
    expectPublicError(await refusedSoon(third['cabinet_token'] as string), 401, 'UNAUTHENTICATED');
    // The tenant's API key is untouched.
    expect((await dataSubmit(t.apiKey, page())).status).toBe(202);
    // Six admin CLI processes (each a Node start with Prisma): 30 s was not enough at load 20-28.
  }, 90_000);
});

describe('recipes', () => {
  it('both APIs list the tenant’s recipes as a real offset page: envelope, defaults, has_more, offsets past the end, tenant isolation (more: recipes.e2e.test.ts)', async () => {
    const t = await newTenant('cabinet-recipes');
    const clientAuth = { Authorization: `Bearer ${t.token}` };
    const dataAuth = { 'X-API-Key': t.apiKey };
    const definition = { dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1'] }] };
    const made: { id: string; name: string }[] = [];
    for (const [name, body] of [
      ['Plain', {}],
      ['Active', { definition, activate: true }],
      ['Draft', { definition }],
    ] as const) {
      const r = await gateway()
        .post('/api/v1/client/recipes')
        .set(clientAuth)
        .send({ name, sample_url: `${site.url}/product`, ...body });
      expect(r.status).toBe(201);
      made.push({ id: r.body.id, name });
    }

    const all = await gateway().get('/api/v1/client/recipes').set(clientAuth);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 3, limit: 20, offset: 0, has_more: false });
    expect(all.body.items.map((r: { id: string; name: string }) => ({ id: r.id, name: r.name }))).toEqual(made);
    expect(all.body.items.map((r: { status: string }) => r.status)).toEqual(['draft', 'active', 'draft']);

    const data = await gateway().get('/api/v1/data/recipes').set(dataAuth);
    expect(data.body).toMatchObject({ total: 3, limit: 20, offset: 0, has_more: false });
    expect(data.body.items.map((r: { active_version: unknown }) => r.active_version === null)).toEqual([true, false, true]);
    expect(data.body.items[1].active_version).toMatchObject({
      version: 1,
      fields: [{ name: 'title', type: 'string', required: true, multiple: false, description: '' }],
    });

    for (const [path, auth] of [
      ['/api/v1/client/recipes', clientAuth],
      ['/api/v1/data/recipes', dataAuth],
    ] as const) {
      const first = await gateway().get(`${path}?limit=2`).set(auth);
      expect(first.body).toMatchObject({ total: 3, limit: 2, offset: 0, has_more: true });
      expect(first.body.items.map((r: { id: string }) => r.id)).toEqual([made[0]!.id, made[1]!.id]);
      const last = await gateway().get(`${path}?limit=2&offset=2`).set(auth);
      expect(last.body).toMatchObject({ total: 3, limit: 2, offset: 2, has_more: false });
      expect(last.body.items.map((r: { id: string }) => r.id)).toEqual([made[2]!.id]);
      // Past the end: the real total, no items.
      const beyond = await gateway().get(`${path}?limit=100&offset=10000`).set(auth);
      expect(beyond.body).toEqual({ total: 3, limit: 100, offset: 10000, has_more: false, items: [] });
    }
    // Another tenant's listing has none of them.
    const theirs = await gateway().get('/api/v1/client/recipes?limit=100').set('Authorization', `Bearer ${b.token}`);
    expect(theirs.status).toBe(200);
    const theirIds = theirs.body.items.map((r: { id: string }) => r.id);
    for (const r of made) expect(theirIds).not.toContain(r.id);
    expect(theirs.body.total).toBe(theirIds.length);
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

  it('reports the recipe capabilities in the shape of the spec, with the values recipe-extractor is configured with', async () => {
    const res = await gateway().get('/api/v1/client/recipes/capabilities').set('Authorization', `Bearer ${a.token}`);
    expect(res.status).toBe(200);
    const int = expect.any(Number);
    const strings = expect.arrayContaining([expect.any(String)]);
    // recipe-extractor's configuration of this fleet (RECIPE_CONFIG), not its defaults.
    expect(res.body).toEqual({
      enabled: true,
      dsl_version: 1,
      generation_max_attempts: 4,
      limits: {
        default_page_size: 20,
        max_page_size: 100,
        max_prompt_length: 300,
        max_schema_bytes: 6000,
        max_rules: 7,
        max_selectors_per_rule: 2,
      },
      extraction_fields: {
        scalar_types: strings,
        scalar_source_types: strings,
        object_collections: true,
        max_object_nesting_depth: 1,
        collection_source_types: strings,
        collection_scope_selector: 'css',
      },
      auto_repair: { enabled: true, automatic_repairs_per_window: 5, window_hours: 12, continuous_repair_requires_confirmation: true },
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
    const ints = [
      res.body.dsl_version,
      res.body.generation_max_attempts,
      ...Object.values(res.body.limits),
      ...Object.values(res.body.billing).filter((v) => typeof v === 'number'),
    ];
    for (const v of ints) expect(Number.isInteger(v)).toBe(true);
  });
});

describe('recipe limits from configuration, enforced through the gateway', () => {
  const auth = () => ({ Authorization: `Bearer ${a.token}` });
  const field = (i: number, extra: Record<string, unknown> = {}) => ({ name: `f${i}`, type: 'string', selectors: ['h1'], ...extra });
  const create = (definition: unknown) =>
    gateway()
      .post('/api/v1/client/recipes')
      .set(auth())
      .send({ name: `Limits ${randomUUID()}`, sample_url: `${site.url}/product`, definition });
  const refused = (res: request.Response) => {
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    return res.body.details as { field: string; issue: string }[];
  };

  it('max_rules 7: seven rules are taken, eight refused', async () => {
    expect((await create({ dsl_version: 1, fields: Array.from({ length: 7 }, (_, i) => field(i)) })).status).toBe(201);
    expect(refused(await create({ dsl_version: 1, fields: Array.from({ length: 8 }, (_, i) => field(i)) }))).toContainEqual({
      field: 'definition.fields',
      issue: 'has 8 rules; max_rules is 7',
    });
    // Rules inside an object field count too: 6 fields + an object field with 2 = 9 rules.
    const nested = {
      dsl_version: 1,
      fields: [
        ...Array.from({ length: 6 }, (_, i) => field(i)),
        { name: 'items', type: 'object', multiple: true, scope: 'section', fields: [field(10), field(11)] },
      ],
    };
    expect(refused(await create(nested))).toContainEqual({ field: 'definition.fields', issue: 'has 9 rules; max_rules is 7' });
  });

  it('max_selectors_per_rule 2: two selectors are taken, three refused, on a new version too', async () => {
    const ok = await create({ dsl_version: 1, fields: [field(0, { selectors: ['h1', 'h2'] })] });
    expect(ok.status).toBe(201);
    expect(refused(await create({ dsl_version: 1, fields: [field(0, { selectors: ['h1', 'h2', 'h3'] })] }))).toEqual([
      { field: 'definition.fields.0.selectors', issue: 'has 3 selectors; max_selectors_per_rule is 2' },
    ]);
    const version = await gateway()
      .post(`/api/v1/client/recipes/${ok.body.id}/versions`)
      .set(auth())
      .send({ definition: { dsl_version: 1, fields: [field(0), field(1, { selectors: ['h1', 'h2', 'h3'] })] } });
    expect(refused(version)).toContainEqual({
      field: 'definition.fields.1.selectors',
      issue: 'has 3 selectors; max_selectors_per_rule is 2',
    });
  });

  it('max_schema_bytes 6000: a definition under it is taken, one over it refused with its size', async () => {
    const described = (n: number) => ({
      dsl_version: 1,
      fields: Array.from({ length: n }, (_, i) => field(i, { description: 'd'.repeat(1000) })),
    });
    const under = described(5);
    const over = described(6);
    const bytes = (d: unknown) => Buffer.byteLength(JSON.stringify(d));
    expect(bytes(under)).toBeLessThan(6000);
    expect(bytes(over)).toBeGreaterThan(6000);
    expect((await create(under)).status).toBe(201);
    expect(refused(await create(over))).toEqual([
      { field: 'definition', issue: `is ${bytes(over)} bytes as JSON; max_schema_bytes is 6000` },
    ]);
  });

  it('max_object_nesting_depth 1: an object collection is taken, an object inside it refused', async () => {
    const oneDeep = {
      dsl_version: 1,
      fields: [
        {
          name: 'reviews',
          type: 'object',
          multiple: true,
          scope: 'section.review',
          fields: [{ name: 'author', type: 'string', selectors: ['.author'] }],
        },
      ],
    };
    const created = await create(oneDeep);
    expect(created.status).toBe(201);
    const twoDeep = {
      dsl_version: 1,
      fields: [
        {
          name: 'reviews',
          type: 'object',
          multiple: true,
          scope: 'section.review',
          fields: [{ name: 'by', type: 'object', scope: '.author', fields: [{ name: 'name', type: 'string', selectors: ['span'] }] }],
        },
      ],
    };
    expect(refused(await create(twoDeep))).toEqual([
      { field: 'definition.fields.0.fields.0', issue: 'nests objects 2 deep; max_object_nesting_depth is 1' },
    ]);
    const version = await gateway().post(`/api/v1/client/recipes/${created.body.id}/versions`).set(auth()).send({ definition: twoDeep });
    expect(refused(version)).toEqual([
      { field: 'definition.fields.0.fields.0', issue: 'nests objects 2 deep; max_object_nesting_depth is 1' },
    ]);
  });

  it('max_prompt_length 300: a generation with a 300-character prompt runs, 301 characters are refused before anything is fetched', async () => {
    const recipe = await gateway()
      .post('/api/v1/client/recipes')
      .set(auth())
      .send({ name: 'Prompted', sample_url: `${site.url}/product` });
    expect(recipe.status).toBe(201);
    const fetched = site.hits.get('/product') ?? 0;
    const long = await gateway()
      .post(`/api/v1/client/recipes/${recipe.body.id}/generate`)
      .set(auth())
      .send({ prompt: 'p'.repeat(301), method: 'heuristic' });
    expect(refused(long)).toEqual([{ field: 'prompt', issue: 'is 301 characters; max_prompt_length is 300' }]);
    expect(site.hits.get('/product') ?? 0).toBe(fetched);
    const prompt = `product title and price ${'p'.repeat(300)}`.slice(0, 300);
    const ok = await gateway().post(`/api/v1/client/recipes/${recipe.body.id}/generate`).set(auth()).send({ prompt, method: 'heuristic' });
    expect(ok.status).toBe(201);
    // The generated version is held to the same limits.
    expect(ok.body.version.fields.length).toBeLessThanOrEqual(7);
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
    expect(await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--rate', '3', '--window', '60'])).toMatchObject({
      submissions_per_window: 3,
      window_seconds: 60,
    });
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
    const rows = await withDatabase(
      fleet.databases['fetch-orchestrator'].url,
      async (c) => (await c.query('SELECT 1 FROM data_requests WHERE tenant_id = $1', [t.id])).rowCount,
    );
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
    const active = await withDatabase(
      fleet.databases['fetch-orchestrator'].url,
      async (c) =>
        (await c.query("SELECT 1 FROM data_requests WHERE tenant_id = $1 AND status NOT IN ('completed','failed','cancelled')", [t.id]))
          .rowCount,
    );
    expect(active).toBeLessThanOrEqual(3);
  }, 60_000);
});

describe('recipes disabled (recipe-extractor restarted with RECIPES_ENABLED=false)', () => {
  let t: Tenant;
  let recipeId: string;
  const auth = () => ({ Authorization: `Bearer ${t.token}` });
  const definition = { dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1.title'] }] };

  beforeAll(async () => {
    // A recipe made while enabled: it stays readable, but nothing may run it or add to it.
    t = await newTenant('recipes-off');
    const r = await gateway()
      .post('/api/v1/client/recipes')
      .set(auth())
      .send({ name: 'Before', sample_url: `${site.url}/product`, definition, activate: true });
    expect(r.status).toBe(201);
    recipeId = r.body.id as string;
    await fleet.kill('recipe-extractor');
    await fleet.start('recipe-extractor', { RECIPES_ENABLED: 'false' });
  }, 90_000);

  afterAll(async () => {
    await fleet.kill('recipe-extractor');
    await fleet.start('recipe-extractor', { RECIPES_ENABLED: 'true' });
  }, 90_000);

  it('capabilities say enabled false, auto-repair too; the configured limits are unchanged', async () => {
    const res = await gateway().get('/api/v1/client/recipes/capabilities').set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      enabled: false,
      generation_max_attempts: 4,
      limits: { max_rules: 7, max_schema_bytes: 6000, max_selectors_per_rule: 2, max_prompt_length: 300 },
      extraction_fields: { max_object_nesting_depth: 1 },
      auto_repair: { enabled: false, automatic_repairs_per_window: 5, window_hours: 12 },
    });
  });

  it('refuses a submission with extraction on both APIs, before anything is created; a plain submission still runs', async () => {
    const rows = () =>
      withDatabase(
        fleet.databases['fetch-orchestrator'].url,
        async (c) => (await c.query('SELECT 1 FROM data_requests WHERE tenant_id = $1', [t.id])).rowCount,
      );
    const before = await rows();
    const body = { url: `${site.url}/product`, mode: 'http', extraction: { recipe_id: recipeId } };
    for (const res of [await dataSubmit(t.apiKey, body), await clientSubmit(t.token, body)]) {
      expectPublicError(res, 422, 'VALIDATION_FAILED');
      expect(res.body.details).toEqual([{ field: 'extraction', issue: 'structured extraction is not enabled' }]);
    }
    expect(await rows()).toBe(before);
    const plain = await dataSubmit(t.apiKey, { url: `${site.url}/product`, mode: 'http' });
    expect(plain.status).toBe(202);
    expect(plain.body.result_kind).toBeUndefined();
  });

  it('refuses creating a recipe, a version or a generation; the existing recipe stays readable and listed', async () => {
    const refusedWrite = (res: request.Response) => {
      expectPublicError(res, 422, 'VALIDATION_FAILED');
      expect(res.body.details).toEqual([{ field: 'recipes', issue: 'structured extraction is not enabled' }]);
      expect(res.body.message).toMatch(/not enabled/);
    };
    refusedWrite(
      await gateway()
        .post('/api/v1/client/recipes')
        .set(auth())
        .send({ name: 'After', sample_url: `${site.url}/product` }),
    );
    refusedWrite(await gateway().post(`/api/v1/client/recipes/${recipeId}/versions`).set(auth()).send({ definition }));
    refusedWrite(
      await gateway().post(`/api/v1/client/recipes/${recipeId}/generate`).set(auth()).send({ prompt: 'title', method: 'heuristic' }),
    );

    const read = await gateway().get(`/api/v1/client/recipes/${recipeId}`).set(auth());
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: recipeId, name: 'Before', status: 'active', versions: [{ version: 1 }] });
    const list = await gateway().get('/api/v1/data/recipes').set('X-API-Key', t.apiKey);
    expect(list.body).toMatchObject({ total: 1, has_more: false, items: [{ id: recipeId, active_version: { version: 1 } }] });
  });
});
