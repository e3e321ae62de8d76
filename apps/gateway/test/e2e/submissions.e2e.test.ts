// Own fleet (not the shared one of ./shared/): it restarts the gateway and the orchestrator (idempotency across restarts).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { ERROR_CODES, ERROR_STATUS } from '@wdr/kit/errors';
import { adminCommand, eventually, startFixtureSite, startFleet, withDatabase, type FixtureSite, type Fleet } from '@wdr/testkit';
import { FORBIDDEN_HEADERS } from '../../src/domain/validation/submission-body.js';
import { settledBalance } from './balances.js';

/**
 * POST /api/v1/data/requests through the real fleet: every rule of the spec's body table (status,
 * code and the offending field), mode resolution, the submission response, and Idempotency-Key
 * semantics (replay, conflict, concurrency, tenant scope, restarts).
 */
let fleet: Fleet;
let site: FixtureSite;
let apiKey: string;
let tenantId: string;

const gateway = () => request(fleet.url('gateway'));
const submit = (body: unknown, key = apiKey) =>
  gateway()
    .post('/api/v1/data/requests')
    .set('X-API-Key', key)
    .send(body as object);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectPublicError(res: request.Response, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.body).toEqual({
    code,
    message: expect.any(String),
    request_id: expect.any(String),
    ...(res.body.details ? { details: expect.any(Array) } : {}),
  });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(ERROR_STATUS[code as (typeof ERROR_CODES)[number]]).toBe(status);
}

const balance = (tenant = tenantId): Promise<number> => settledBalance(fleet, tenant);

async function detail(id: string) {
  const res = await gateway().get(`/api/v1/data/requests/${id}`).set('X-API-Key', apiKey);
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

const orchestratorRows = (sql: string, params: unknown[]) =>
  withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => (await c.query(sql, params)).rows as Record<string, unknown>[]);
const ledgerRows = (sql: string, params: unknown[]) =>
  withDatabase(fleet.databases['billing-ledger'].url, async (c) => (await c.query(sql, params)).rows as Record<string, unknown>[]);

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet({
    env: { gateway: { REDIS_KEY_PREFIX: `wdr:test:${randomUUID()}:`, RATE_LIMIT_SUBMISSIONS: '100000', CONCURRENCY_LIMIT: '100000' } },
  });
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'submissions', '--credits', '100000']);
  apiKey = tenant['api_key'] as string;
  tenantId = tenant['tenant_id'] as string;
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
}, 60_000);

describe('the body table', () => {
  const ok = () => ({ url: `${site.url}/page`, mode: 'http' });
  const long = (n: number) => 'a'.repeat(n);

  // [case, body overrides (undefined removes the field), the field named in details]
  const refused: [string, Record<string, unknown>, string][] = [
    ['url missing', { url: undefined }, 'url'],
    ['url not a string', { url: 5 }, 'url'],
    ['url empty', { url: '' }, 'url'],
    ['url not absolute', { url: 'example.com/page' }, 'url'],
    ['url ftp', { url: 'ftp://example.com/file' }, 'url'],
    ['url javascript:', { url: 'javascript:alert(1)' }, 'url'],
    ['url with credentials', { url: 'https://user:secret@example.com/' }, 'url'],
    ['url longer than 4096', { url: `https://example.com/${long(4096)}` }, 'url'],
    ['mode unknown', { mode: 'fast' }, 'mode'],
    ['mode not a string', { mode: 1 }, 'mode'],
    ['geo_country one letter', { geo_country: 'd' }, 'geo_country'],
    ['geo_country three letters', { geo_country: 'deu' }, 'geo_country'],
    ['geo_country digits', { geo_country: 'd1' }, 'geo_country'],
    ['geo_country unassigned', { geo_country: 'zz' }, 'geo_country'],
    ['geo_country not a string', { geo_country: 49 }, 'geo_country'],
    ['max_credits_per_request 0', { max_credits_per_request: 0 }, 'max_credits_per_request'],
    ['max_credits_per_request negative', { max_credits_per_request: -3 }, 'max_credits_per_request'],
    ['max_credits_per_request fraction', { max_credits_per_request: 1.5 }, 'max_credits_per_request'],
    ['max_credits_per_request string', { max_credits_per_request: '5' }, 'max_credits_per_request'],
    ['max_credits_per_request beyond int32', { max_credits_per_request: 2 ** 31 }, 'max_credits_per_request'],
    ['proxy unknown', { proxy: 'on' }, 'proxy'],
    ['proxy_type unknown', { proxy_type: 'mobile' }, 'proxy_type'],
    ['premium with proxy off', { proxy: 'off', proxy_type: 'premium' }, 'proxy_type'],
    ['geo_country with proxy off', { proxy: 'off', geo_country: 'DE' }, 'geo_country'],
    ['headers not an object', { headers: 'Host: x' }, 'headers'],
    ['headers an array', { headers: ['X-A'] }, 'headers'],
    ['header value not a string', { headers: { 'X-A': 1 } }, 'headers.X-A'],
    ['header value with CR LF', { headers: { 'X-A': 'a\r\nInjected: yes' } }, 'headers.X-A'],
    ['header value with NUL', { headers: { 'X-A': 'a\u0000b' } }, 'headers.X-A'],
    ['header value with TAB', { headers: { 'X-A': 'a\tb' } }, 'headers.X-A'],
    ['header value with DEL', { headers: { 'X-A': 'a\u007fb' } }, 'headers.X-A'],
    ['header value beyond Latin-1', { headers: { 'X-A': '\u2603' } }, 'headers.X-A'],
    ['header value longer than 8192', { headers: { 'X-A': long(8193) } }, 'headers.X-A'],
    ['header name with a control character', { headers: { 'X-\u0001': 'a' } }, 'headers.X-\u0001'],
    ['header name with a space', { headers: { 'X A': 'a' } }, 'headers.X A'],
    ['header name with a colon', { headers: { 'X:A': 'a' } }, 'headers.X:A'],
    ['header names equal but for case', { headers: { 'X-A': '1', 'x-a': '2' } }, 'headers.x-a'],
    ['more than 100 headers', { headers: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`X-H${i}`, 'v'])) }, 'headers'],
    ...[
      ...FORBIDDEN_HEADERS,
      'Proxy-Authorization',
      'Proxy-Authenticate',
      'X-Forwarded-For',
      'X-Forwarded-Host',
      'X-Forwarded-Proto',
    ].flatMap((h): [string, Record<string, unknown>, string][] => {
      const title = h.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
      return [
        [`forbidden header ${title}`, { headers: { [title]: 'x' } }, `headers.${title}`],
        [`forbidden header ${h.toUpperCase()}`, { headers: { [h.toUpperCase()]: 'x' } }, `headers.${h.toUpperCase()}`],
      ];
    }),
    ['cookies not an object', { cookies: 'sid=1' }, 'cookies'],
    ['cookie value not a string', { cookies: { sid: 1 } }, 'cookies.sid'],
    ['cookie name with a control character', { cookies: { 's\u0007id': '1' } }, 'cookies.s\u0007id'],
    ['cookie name with =', { cookies: { 'a=b': '1' } }, 'cookies.a=b'],
    ['cookie value with a control character', { cookies: { sid: 'a\u001bb' } }, 'cookies.sid'],
    ['cookie value with CR LF', { cookies: { sid: 'a\r\nb' } }, 'cookies.sid'],
    ['cookie value with ;', { cookies: { sid: 'a; admin=1' } }, 'cookies.sid'],
    ['timeout_ms below 5000', { timeout_ms: 4999 }, 'timeout_ms'],
    ['timeout_ms above 300000', { timeout_ms: 300_001 }, 'timeout_ms'],
    ['timeout_ms fraction', { timeout_ms: 5000.5 }, 'timeout_ms'],
    ['timeout_ms string', { timeout_ms: '45000' }, 'timeout_ms'],
    ['timeout_ms null', { timeout_ms: null }, 'timeout_ms'],
    ['javascript string', { javascript: 'true' }, 'javascript'],
    ['javascript number', { javascript: 1 }, 'javascript'],
    ['resource_policy unknown', { resource_policy: 'site-light' }, 'resource_policy'],
    ['wait_for_selector empty', { wait_for_selector: '' }, 'wait_for_selector'],
    ['wait_for_selector longer than 500', { wait_for_selector: long(501) }, 'wait_for_selector'],
    ['wait_for_selector not a string', { wait_for_selector: ['#a'] }, 'wait_for_selector'],
    ['user_agent empty', { user_agent: '' }, 'user_agent'],
    ['user_agent longer than 1000', { user_agent: long(1001) }, 'user_agent'],
    ['result_text_selector empty', { result_text_selector: '' }, 'result_text_selector'],
    ['result_text_selector longer than 500', { result_text_selector: long(501) }, 'result_text_selector'],
    ['wait_for_text number', { wait_for_text: 5 }, 'wait_for_text'],
    ['wait_for_text object', { wait_for_text: { text: 'x' } }, 'wait_for_text'],
    ['wait_for_text longer than 10000', { wait_for_text: long(10_001) }, 'wait_for_text'],
    ['browser_actions not an array', { browser_actions: { type: 'click' } }, 'browser_actions'],
    ['browser_actions 21 items', { browser_actions: Array.from({ length: 21 }, () => ({ type: 'wait', ms: 1 })) }, 'browser_actions'],
    ['browser action not an object', { browser_actions: ['click'] }, 'browser_actions.0'],
    ['browser action without type', { browser_actions: [{ type: 'wait' }, { selector: '#a' }] }, 'browser_actions.1.type'],
    ['debug_artifacts string', { debug_artifacts: 'yes' }, 'debug_artifacts'],
    ['skip_cache number', { skip_cache: 0 }, 'skip_cache'],
    ['cache_ttl_seconds negative', { cache_ttl_seconds: -1 }, 'cache_ttl_seconds'],
    ['cache_ttl_seconds above 3600', { cache_ttl_seconds: 3601 }, 'cache_ttl_seconds'],
    ['cache_ttl_seconds fraction', { cache_ttl_seconds: 1.5 }, 'cache_ttl_seconds'],
    ['extraction array', { extraction: [] }, 'extraction'],
    ['extraction string', { extraction: 'title' }, 'extraction'],
    ['extraction without a recipe', { extraction: { prompt: 'title and price' } }, 'extraction.prompt'],
    ['extraction with a recipe_id that is not a uuid', { extraction: { recipe_id: 'shoes' } }, 'extraction.recipe_id'],
    ['browser action over 4 KiB', { browser_actions: [{ type: 'type', selector: '#q', text: long(4_096) }] }, 'browser_actions.0'],
    ['browser action of no declared type', { browser_actions: [{ type: 'teleport' }] }, 'browser_actions.0.type'],
    ['browser action without its selector', { browser_actions: [{ type: 'click' }] }, 'browser_actions.0.selector'],
    ['unknown field', { callback_url: 'https://x' }, 'callback_url'],
    ['unknown field beside valid ones', { timeout_ms: 6000, Mode: 'http' }, 'Mode'],
  ];

  it.each(refused)('refuses %s: 422 VALIDATION_FAILED at the field', async (_name, overrides, field) => {
    const body: Record<string, unknown> = { ...ok(), ...overrides };
    for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete body[k];
    const res = await submit(body);
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    expect(res.body.details).toEqual(expect.arrayContaining([{ field, issue: expect.any(String) }]));
  });

  it('lists every problem of one body', async () => {
    const res = await submit({ url: 'nope', timeout_ms: 1, headers: { Host: 'x', Connection: 'close' }, cookies: { sid: 'a;b' }, zzz: 1 });
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    expect((res.body.details as { field: string }[]).map((d) => d.field).sort()).toEqual(
      ['cookies.sid', 'headers.Connection', 'headers.Host', 'timeout_ms', 'url', 'zzz'].sort(),
    );
  });

  it.each([
    ['a JSON array', 422, 'VALIDATION_FAILED', '[]', 'application/json'],
    ['a JSON string', 400, 'MALFORMED_REQUEST', '"https://example.com"', 'application/json'],
    ['JSON null', 400, 'MALFORMED_REQUEST', 'null', 'application/json'],
    ['truncated JSON', 400, 'MALFORMED_REQUEST', '{"url":', 'application/json'],
    ['JSON with a trailing comma', 400, 'MALFORMED_REQUEST', '{"url":"https://example.com",}', 'application/json'],
    ['JSON in an unsupported charset', 400, 'MALFORMED_REQUEST', '{}', 'application/json; charset=koi8-r'],
    ['plain text', 400, 'MALFORMED_REQUEST', 'url=https://example.com', 'text/plain'],
    ['a form', 400, 'MALFORMED_REQUEST', 'url=https://example.com', 'application/x-www-form-urlencoded'],
    ['no body at all', 422, 'VALIDATION_FAILED', undefined, undefined],
  ])('answers %s with %i %s', async (_name, status, code, raw, type) => {
    let req = gateway().post('/api/v1/data/requests').set('X-API-Key', apiKey);
    if (type) req = req.set('Content-Type', type);
    const res = await (raw === undefined ? req : req.send(raw));
    expectPublicError(res, status, code);
  });

  it('answers a body over 1 MB with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await submit({ ...ok(), wait_for_text: long(1_100_000) });
    expectPublicError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  /** Wait for the request to be settled or refunded: every accepted case below is observed through its end. */
  const settledDetail = (id: string) =>
    eventually(
      () => detail(id),
      (d) => d['token_state'] === 'settled' || d['token_state'] === 'refunded',
      60_000,
      150,
    );
  const resultText = async (id: string) => (await gateway().get(`/api/v1/data/requests/${id}/result`).set('X-API-Key', apiKey)).text;
  type Effect = (d: Record<string, unknown>, id: string) => Promise<void> | void;
  const completed = (d: Record<string, unknown>): void => {
    expect(d).toMatchObject({ status: 'completed', token_state: 'settled' });
  };
  const stored =
    (fields: Record<string, unknown>, then: Effect = completed): Effect =>
    async (d, id) => {
      expect(d['request']).toMatchObject(fields);
      await then(d, id);
    };

  // Each accepted case runs in the HTTP stage and is observed to its end: the value is stored as
  // sent and has its effect there (docs/api.md, "Options by mode").
  it.each<[string, (u: string) => Record<string, unknown>, Effect]>([
    [
      'url of exactly 4096 characters',
      (u) => ({ url: `${u}/page?q=${'a'.repeat(4096 - `${u}/page?q=`.length)}` }),
      async (d, id) => {
        completed(d);
        expect(await resultText(id)).toContain('Hello from the fixture site');
      },
    ],
    [
      'timeout_ms 5000 (a target slower than it times out)',
      (u) => ({ url: `${u}/slow?ms=7000`, timeout_ms: 5000 }),
      (d) => {
        expect(d).toMatchObject({ status: 'failed', token_state: 'refunded', error: { code: 'TARGET_TIMEOUT' } });
      },
    ],
    [
      'timeout_ms 300000 (a slow target is waited for)',
      (u) => ({ url: `${u}/slow?ms=6000`, timeout_ms: 300_000 }),
      async (d, id) => {
        completed(d);
        expect(await resultText(id)).toContain('slow 6000');
      },
    ],
    ['cache_ttl_seconds 0', () => ({ cache_ttl_seconds: 0 }), stored({ cache_ttl_seconds: 0 })],
    ['cache_ttl_seconds 3600', () => ({ cache_ttl_seconds: 3600 }), stored({ cache_ttl_seconds: 3600 })],
    [
      'max_credits_per_request 1 (the HTTP price fits it exactly)',
      () => ({ max_credits_per_request: 1 }),
      stored({ max_credits_per_request: 1 }, (d) => {
        completed(d);
        expect(d['base_tokens']).toBe(1);
      }),
    ],
    [
      'selectors of 500 and user_agent of 1000 characters (the selector is applied over HTTP)',
      (u) => ({ url: `${u}/ua`, wait_for_selector: 'p'.repeat(500), result_text_selector: 'b', user_agent: 'u'.repeat(1000) }),
      stored({ wait_for_selector: 'p'.repeat(500), user_agent: 'u'.repeat(1000), result_text_selector: 'b' }, (d) => {
        expect(d).toMatchObject({ status: 'failed', token_state: 'refunded', error: { code: 'WAIT_FOR_SELECTOR_TIMEOUT' } });
      }),
    ],
    [
      'user_agent of 1000 characters (it reaches the target)',
      (u) => ({ url: `${u}/ua`, user_agent: 'u'.repeat(1000) }),
      async (d, id) => {
        completed(d);
        expect(await resultText(id)).toContain('u'.repeat(1000));
      },
    ],
    ['wait_for_text null', () => ({ wait_for_text: null }), completed],
    [
      'wait_for_text text (not in the page: it fails over HTTP)',
      () => ({ wait_for_text: 'Welcome' }),
      (d) => {
        expect(d).toMatchObject({ status: 'failed', token_state: 'refunded', user_error: { code: 'WAIT_FOR_TEXT_TIMEOUT' } });
      },
    ],
    ['wait_for_text text (in the page)', () => ({ wait_for_text: 'Hello from the fixture' }), completed],
    [
      'extraction null',
      () => ({ extraction: null }),
      (d) => {
        completed(d);
        expect(d['result_kind']).toBeUndefined();
      },
    ],
    [
      'allowed headers and cookies (they reach the target)',
      (u) => ({
        url: `${u}/headers`,
        headers: { 'X-Test': 'ok', 'Accept-Language': 'de-DE,en;q=0.5', Referer: 'https://example.com/' },
        cookies: { sid: 'abc=def', theme: 'dark mode' },
      }),
      async (d, id) => {
        completed(d);
        const echo = d['request'] as { header_names: string[]; cookie_names: string[] };
        // Stored as JSON objects: names are echoed, in no particular order.
        expect([...echo.header_names].sort()).toEqual(['Accept-Language', 'Referer', 'X-Test']);
        expect([...echo.cookie_names].sort()).toEqual(['sid', 'theme']);
        const seen = await resultText(id);
        for (const line of [
          'x-test: ok',
          'accept-language: de-DE,en;q=0.5',
          'referer: https://example.com/',
          'sid=abc=def',
          'theme=dark mode',
        ])
          expect(seen).toContain(line);
      },
    ],
    [
      '100 headers (all reach the target)',
      (u) => ({ url: `${u}/headers`, headers: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`X-H${i}`, `v${i}`])) }),
      async (d, id) => {
        completed(d);
        const seen = await resultText(id);
        expect(seen).toContain('x-h0: v0');
        expect(seen).toContain('x-h99: v99');
      },
    ],
    [
      'proxy off with datacenter (direct from the platform: no traffic line)',
      () => ({ proxy: 'off', proxy_type: 'datacenter' }),
      stored({ proxy: 'off', proxy_type: 'datacenter' }),
    ],
    [
      'proxy random (a proxy route: none configured in this fleet, so it ends PROXY_UNAVAILABLE, refunded)',
      () => ({ proxy: 'random' }),
      (d) => {
        expect(d).toMatchObject({ status: 'failed', token_state: 'refunded', error: { code: 'PROXY_UNAVAILABLE' } });
      },
    ],
    [
      'resource_policy compatible (stored; the HTTP stage loads only the document anyway)',
      () => ({ resource_policy: 'compatible' }),
      stored({ resource_policy: 'compatible' }),
    ],
    [
      'skip_cache true (an identical request completed just before is fetched again)',
      () => ({ url: `${site.url}/page?skip-cache-case=1` }),
      async (d) => {
        completed(d);
        const again = await submit({ ...ok(), url: `${site.url}/page?skip-cache-case=1`, skip_cache: true });
        expect(again.status).toBe(202);
        expect(await settledDetail(again.body.id as string)).toMatchObject({ status: 'completed', cached: false });
      },
    ],
  ])(
    'accepts %s and it has its effect',
    async (_name, overrides, effect) => {
      const res = await submit({ ...ok(), ...overrides(site.url) });
      expect([res.status, res.body.code]).toEqual([202, undefined]);
      const id = res.body.id as string;
      await effect(await settledDetail(id), id);
    },
    90_000,
  );

  it('accepts 20 browser actions and promotes the route to the browser', async () => {
    const res = await submit({ ...ok(), browser_actions: Array.from({ length: 20 }, () => ({ type: 'wait', ms: 1 })) });
    expect(res.status).toBe(202);
    expect(res.body.route_mode).toBe('browser');
  });

  it('normalizes geo_country to upper case and stores the defaults with the request', async () => {
    const res = await submit({ ...ok(), geo_country: 'de' });
    expect(res.status).toBe(202);
    const d = await detail(res.body.id as string);
    expect(d['request']).toMatchObject({
      geo_country: 'DE',
      timeout_ms: 45_000,
      javascript: true,
      resource_policy: 'adaptive',
      cache_ttl_seconds: 300,
      skip_cache: false,
      debug_artifacts: false,
    });
  });

  it('refuses max_credits_per_request below the base price of the mode (ledger rule)', async () => {
    const res = await submit({ url: `${site.url}/page`, mode: 'browser', max_credits_per_request: 1 });
    expectPublicError(res, 422, 'BUDGET_BELOW_BASE_PRICE');
    expect(res.body.details).toEqual([{ field: 'max_credits_per_request', issue: expect.any(String) }]);
  });

  it('refuses premium while no plan prices it, naming proxy_type', async () => {
    const res = await submit({ ...ok(), proxy_type: 'premium' });
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    expect(res.body.details).toEqual([{ field: 'proxy_type', issue: expect.any(String) }]);
  });
});

describe('mode resolution through the API', () => {
  // Its own tenant: these requests run (or fail and are refunded) after the test has moved on, and
  // the balance checks of other tests must not see their settlements land.
  let modesKey: string;
  beforeAll(async () => {
    modesKey = (await adminCommand(fleet, ['create-tenant', '--name', 'modes', '--credits', '10000']))['api_key'] as string;
  });

  it.each([
    [{}, 'browser'],
    [{ javascript: true }, 'browser'],
    [{ javascript: false }, 'http'],
    [{ mode: 'http', javascript: true }, 'http'],
    [{ mode: 'direct' }, 'direct'],
    [{ mode: 'auto' }, 'auto'],
    [{ mode: 'browser', javascript: false }, 'browser'],
    [{ mode: 'residential' }, 'residential'],
    [{ mode: 'residential_browser' }, 'residential_browser'],
    [{ javascript: false, browser_actions: [{ type: 'click', selector: '#go' }] }, 'browser'],
    [{ mode: 'http', browser_actions: [] }, 'http'],
    [{ mode: 'direct', debug_artifacts: true }, 'browser'],
    [{ mode: 'auto', browser_actions: [{ type: 'wait', ms: 5 }] }, 'browser'],
    [{ mode: 'residential', debug_artifacts: true }, 'residential_browser'],
    [{ mode: 'residential', browser_actions: [{ type: 'wait', ms: 5 }] }, 'residential_browser'],
  ])('%j runs as %s', async (options, routeMode) => {
    const res = await submit({ url: `${site.url}/page`, ...options }, modesKey);
    expect(res.status).toBe(202);
    expect(res.body.route_mode).toBe(routeMode);
  });
});

describe('the submission response', () => {
  it('carries every field of the spec with its type, and the origin only', async () => {
    const res = await submit({ url: `${site.url}/page/deep?secret=1#frag`, mode: 'http' });
    expect(res.status).toBe(202);
    const b = res.body as Record<string, unknown>;
    expect(Object.keys(b).sort()).toEqual(
      [
        'id',
        'url',
        'status',
        'cached',
        'protected',
        'pricing_version',
        'route_mode',
        'proxy_type',
        'base_tokens',
        'protected_tokens',
        'captcha_tokens',
        'quote',
        'created_at',
        'charged_tokens',
        'idempotent_replay',
      ].sort(),
    );
    expect(b['id']).toMatch(UUID);
    expect(b['url']).toBe(site.url);
    expect(['pending', 'running', 'solving_captcha', 'completed', 'failed', 'cancelled']).toContain(b['status']);
    for (const k of ['cached', 'protected', 'idempotent_replay']) expect(typeof b[k]).toBe('boolean');
    expect(Number.isInteger(b['pricing_version']) && (b['pricing_version'] as number) >= 1).toBe(true);
    for (const k of ['base_tokens', 'protected_tokens', 'captcha_tokens', 'charged_tokens']) {
      expect([k, Number.isInteger(b[k]) && (b[k] as number) >= 0]).toEqual([k, true]);
    }
    expect(['direct', 'auto', 'browser', 'http', 'residential', 'residential_browser', 'mixed']).toContain(b['route_mode']);
    expect(['datacenter', 'residential', 'premium']).toContain(b['proxy_type']);
    expect(b['quote'] === null || typeof b['quote'] === 'object').toBe(true);
    expect(b['created_at']).toMatch(ISO);
    expect(b).toMatchObject({ route_mode: 'http', proxy_type: 'datacenter', base_tokens: 1, charged_tokens: 1, idempotent_replay: false });
    expect(JSON.stringify(b)).not.toContain('secret');
  });
});

describe('Idempotency-Key', () => {
  const body = () => ({ url: `${site.url}/page?idem=1`, mode: 'http', timeout_ms: 10_000 });
  const keyed = (key: string, b: unknown, api = apiKey) =>
    gateway()
      .post('/api/v1/data/requests')
      .set('X-API-Key', api)
      .set('Idempotency-Key', key)
      .send(b as object);

  it.each([
    ['7 characters', 'k'.repeat(7)],
    ['201 characters', 'k'.repeat(201)],
  ])('refuses a key of %s', async (_n, key) => {
    const res = await keyed(key, body());
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    expect(res.body.details).toEqual([{ field: 'Idempotency-Key', issue: expect.any(String) }]);
  });

  it.each([
    ['8 characters', 8],
    ['200 characters', 200],
  ])('accepts a key of %s', async (_n, len) => {
    const key = `${randomUUID()}${'k'.repeat(200)}`.slice(0, len);
    expect((await keyed(key, body())).status).toBe(202);
  });

  it('replays the same body for free and refuses another body with 409', async () => {
    const key = `replay-${randomUUID()}`;
    const before = await balance();
    const first = await keyed(key, body());
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ idempotent_replay: false, charged_tokens: 1 });
    // The same body, with keys reordered and the defaults spelled out, is the same submission.
    const again = await keyed(key, {
      timeout_ms: 10_000,
      javascript: true,
      cache_ttl_seconds: 300,
      mode: 'http',
      url: `${site.url}/page?idem=1`,
    });
    expect(again.status).toBe(202);
    // A replay shows the request as it is now: its status, and whether execution was served from the result cache.
    expect(again.body).toEqual({
      ...first.body,
      idempotent_replay: true,
      charged_tokens: 0,
      status: again.body.status,
      cached: again.body.cached,
    });
    const conflict = await keyed(key, { ...body(), timeout_ms: 10_001 });
    expectPublicError(conflict, 409, 'IDEMPOTENCY_CONFLICT');
    const otherUrl = await keyed(key, { ...body(), url: `${site.url}/page?idem=2` });
    expectPublicError(otherUrl, 409, 'IDEMPOTENCY_CONFLICT');
    await eventually(
      () => detail(first.body.id),
      (d) => d['token_state'] === 'settled',
      30_000,
    );
    expect(await balance()).toBe(before - 1);
  });

  it('creates exactly one request and one charge for 20 identical submissions in parallel', async () => {
    const key = `parallel-${randomUUID()}`;
    const before = await balance();
    const results = await Promise.all(Array.from({ length: 20 }, () => keyed(key, body())));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(202));
    const ids = new Set(results.map((r) => r.body.id as string));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(results.filter((r) => r.body.idempotent_replay === false)).toHaveLength(1);
    expect(results.filter((r) => r.body.idempotent_replay === true).map((r) => r.body.charged_tokens)).toEqual(Array(19).fill(0));
    expect(results.reduce((sum, r) => sum + (r.body.charged_tokens as number), 0)).toBe(1);
    expect(await orchestratorRows('SELECT id FROM data_requests WHERE id = $1', [id])).toHaveLength(1);
    expect(await ledgerRows('SELECT 1 FROM reservations WHERE request_id = $1', [id])).toHaveLength(1);
    expect(await ledgerRows("SELECT 1 FROM transfers WHERE request_id = $1 AND kind = 'pending'", [id])).toHaveLength(1);
    await eventually(
      () => detail(id!),
      (d) => d['token_state'] === 'settled',
      30_000,
    );
    expect(await balance()).toBe(before - 1);
  }, 60_000);

  it('lets exactly one of two racing bodies win a key; the other gets 409', async () => {
    const key = `race-${randomUUID()}`;
    const a = { ...body(), url: `${site.url}/page?race=a` };
    const b = { ...body(), url: `${site.url}/page?race=b` };
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => keyed(key, i % 2 === 0 ? a : b)));
    const accepted = results.filter((r) => r.status === 202);
    const conflicts = results.filter((r) => r.status === 409);
    expect(accepted.length + conflicts.length).toBe(10);
    expect(new Set(accepted.map((r) => r.body.id)).size).toBe(1);
    expect(accepted.filter((r) => r.body.idempotent_replay === false)).toHaveLength(1);
    for (const c of conflicts) expect(c.body.code).toBe('IDEMPOTENCY_CONFLICT');
    // The winner's five are accepted, the loser's five conflict.
    expect(accepted).toHaveLength(5);
  });

  it('scopes keys to the tenant', async () => {
    const other = await adminCommand(fleet, ['create-tenant', '--name', 'idem-other', '--credits', '10']);
    const key = `shared-${randomUUID()}`;
    const mine = await keyed(key, body());
    const theirs = await keyed(key, { ...body(), url: `${site.url}/page?someone-else` }, other['api_key'] as string);
    expect([mine.status, theirs.status]).toEqual([202, 202]);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.idempotent_replay).toBe(false);
    // The other tenant cannot read mine through the shared key's id either.
    const peek = await gateway()
      .get(`/api/v1/data/requests/${mine.body.id}`)
      .set('X-API-Key', other['api_key'] as string);
    expectPublicError(peek, 404, 'NOT_FOUND');
  });

  it('gives a new request each time without a key', async () => {
    const [a, b] = [await submit(body()), await submit(body())];
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.id).not.toBe(b.body.id);
    expect([a.body.idempotent_replay, b.body.idempotent_replay]).toEqual([false, false]);
  });

  it('still replays after the gateway and the orchestrator restart', async () => {
    const key = `restart-${randomUUID()}`;
    const first = await keyed(key, body());
    expect(first.status).toBe(202);
    await fleet.kill('gateway');
    await fleet.kill('fetch-orchestrator');
    await fleet.start('fetch-orchestrator');
    await fleet.start('gateway');
    const again = await keyed(key, body());
    expect(again.body).toMatchObject({ id: first.body.id, idempotent_replay: true, charged_tokens: 0 });
    expectPublicError(await keyed(key, { ...body(), timeout_ms: 20_000 }), 409, 'IDEMPOTENCY_CONFLICT');
  }, 120_000);
});

describe('authentication', () => {
  it.each([
    ['no key', undefined],
    ['a malformed key', 'wdr_nope'],
    ['a wrong secret', () => `${apiKey.slice(0, -2)}xx`],
    ['a bearer token instead', 'Bearer abc'],
  ])('answers %s with 401 before looking at the body', async (_n, key) => {
    const value = typeof key === 'function' ? key() : key;
    let req = gateway().post('/api/v1/data/requests');
    if (value) req = req.set('X-API-Key', value);
    const res = await req.send({ nonsense: true });
    expectPublicError(res, 401, 'UNAUTHENTICATED');
  });
});

describe('targets inside the platform (SSRF), submitted through the API', () => {
  // Its own tenant: these requests fail and are refunded while other tests check balances.
  let ssrfKey: string;
  beforeAll(async () => {
    ssrfKey = (await adminCommand(fleet, ['create-tenant', '--name', 'ssrf', '--credits', '10000']))['api_key'] as string;
  });

  // The fleet allow-lists 127.0.0.1 (its fixture sites): that address only, not the IPv6 forms
  // that carry it (::127.0.0.1 is another address, not a way around the list).
  it.each([
    ['IPv4-compatible loopback (the fixture site)', () => `http://[::127.0.0.1]:${new URL(site.url).port}/ssrf-compat`],
    ['NAT64 of the cloud metadata address', () => 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/'],
    ['IPv4-mapped metadata address', () => 'http://[::ffff:169.254.169.254]/latest/meta-data/'],
    ['6to4 of loopback', () => `http://[2002:7f00:1::]:${new URL(site.url).port}/ssrf-6to4`],
  ])('accepts %s with 202, then fails it as TARGET_BLOCKED, refunded, with no byte sent', async (_name, target) => {
    const url = target();
    const res = await submit({ url, mode: 'http' }, ssrfKey);
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    const d = await eventually(
      async () => (await gateway().get(`/api/v1/data/requests/${id}`).set('X-API-Key', ssrfKey)).body as Record<string, unknown>,
      (x) => x['token_state'] === 'refunded',
      30_000,
    );
    expect([d['status'], (d['user_error'] as { code?: string } | null)?.code]).toEqual(['failed', 'TARGET_BLOCKED']);
    // The fixture site (the only server on 127.0.0.1 here) never saw the path.
    expect(site.hits.get(new URL(url).pathname)).toBeUndefined();
  });
});

describe('stage durations for SREs', () => {
  let metricsKey: string;
  beforeAll(async () => {
    metricsKey = (await adminCommand(fleet, ['create-tenant', '--name', 'stage-metrics', '--credits', '10000']))['api_key'] as string;
  });

  /** The `_count` of a histogram series with this outcome label, from a service's /metrics. */
  const count = async (service: 'fetch-orchestrator' | 'browser-renderer', metric: string, outcome: string) => {
    const text = (await request(fleet.metricsUrl(service)).get('/metrics').expect(200)).text;
    const line = text.split('\n').find((l) => l.startsWith(`${metric}_count{`) && l.includes(`outcome="${outcome}"`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  const settledAs = async (body: object) => {
    const res = await submit(body, metricsKey);
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    return eventually(
      async () => (await gateway().get(`/api/v1/data/requests/${id}`).set('X-API-Key', metricsKey)).body as Record<string, unknown>,
      (x) => x['status'] === 'completed' || x['status'] === 'failed',
      60_000,
    );
  };

  it('the HTTP stage fetch duration and the render duration are histograms by outcome (completed or the failure code) on /metrics', async () => {
    const fetchCompleted = await count('fetch-orchestrator', 'fetch_orchestrator_http_fetch_duration_seconds', 'completed');
    const fetch5xx = await count('fetch-orchestrator', 'fetch_orchestrator_http_fetch_duration_seconds', 'TARGET_SERVER_ERROR');
    const rendered = await count('browser-renderer', 'browser_renderer_render_duration_seconds', 'completed');

    expect((await settledAs({ url: `${site.url}/page`, mode: 'http' }))['status']).toBe('completed');
    expect((await settledAs({ url: `${site.url}/status/503`, mode: 'http' }))['user_error']).toMatchObject({ code: 'TARGET_SERVER_ERROR' });
    expect((await settledAs({ url: `${site.url}/js-page`, mode: 'browser' }))['status']).toBe('completed');

    // At least these three (requests of earlier tests may still be finishing in the background).
    expect(await count('fetch-orchestrator', 'fetch_orchestrator_http_fetch_duration_seconds', 'completed')).toBeGreaterThan(
      fetchCompleted,
    );
    expect(await count('fetch-orchestrator', 'fetch_orchestrator_http_fetch_duration_seconds', 'TARGET_SERVER_ERROR')).toBeGreaterThan(
      fetch5xx,
    );
    expect(await count('browser-renderer', 'browser_renderer_render_duration_seconds', 'completed')).toBeGreaterThan(rendered);
  }, 120_000);
});
