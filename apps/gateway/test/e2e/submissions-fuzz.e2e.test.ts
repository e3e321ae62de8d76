import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import request from 'supertest';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '@wdr/kit/errors';
import { adminCommand, startFixtureSite, startFleet, type FixtureSite, type Fleet } from '@wdr/testkit';
import { FORBIDDEN_HEADERS, SUBMISSION_FIELDS } from '../../src/domain/validation/submission-body.js';

/**
 * Property-based: random and mutated bodies, headers, query strings and paths thrown at the
 * gateway of a real fleet. Whatever arrives, the gateway answers (no 5xx, no crash), and every
 * refusal is a well-formed PublicError whose status is the one of its code.
 *
 * No generated URL may leave 127.0.0.1: a body that could be accepted only ever names the
 * fixture site (the fleet's orchestrator really fetches what it accepts).
 */
let fleet: Fleet;
let site: FixtureSite;
let apiKey: string;
let token: string;

const RUNS = Number(process.env['WDR_FUZZ_RUNS'] ?? 150);
const gateway = () => request(fleet.url('gateway'));

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet({
    env: {
      gateway: { REDIS_KEY_PREFIX: `wdr:test:${randomUUID()}:`, RATE_LIMIT_SUBMISSIONS: '1000000', CONCURRENCY_LIMIT: '1000000' },
      // Accepted bodies really run (most in the browser); this suite is about admission, so one
      // render at a time keeps them from crowding the machine while it sends its load.
      'browser-renderer': { BROWSER_PAGES_PER_BROWSER: '1' },
    },
  });
  const t = await adminCommand(fleet, ['create-tenant', '--name', 'fuzz', '--credits', '10000000']);
  apiKey = t['api_key'] as string;
  token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t['tenant_id'] as string]))['cabinet_token'] as string;
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
}, 60_000);

/** The contract of every answer: < 500, and a refusal is exactly a PublicError. */
function wellFormed(res: request.Response): void {
  if (res.status >= 500) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  if (res.status < 400) return;
  const body = res.body as Record<string, unknown>;
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(body).every((k) => ['code', 'message', 'request_id', 'details'].includes(k))).toBe(true);
  expect(ERROR_CODES).toContain(body['code']);
  expect(ERROR_STATUS[body['code'] as ErrorCode]).toBe(res.status);
  expect(typeof body['message']).toBe('string');
  expect((body['message'] as string).length).toBeGreaterThan(0);
  expect(body['request_id']).toBe(res.headers['x-request-id']);
  if (body['details'] !== undefined) {
    expect(Array.isArray(body['details'])).toBe(true);
    for (const d of body['details'] as unknown[]) {
      expect(Object.keys(d as object).sort()).toEqual(['field', 'issue']);
      expect(typeof (d as { field: unknown }).field).toBe('string');
      expect(typeof (d as { issue: unknown }).issue).toBe('string');
    }
  }
  if (res.status === 422 && body['code'] === 'VALIDATION_FAILED') expect((body['details'] as unknown[]).length).toBeGreaterThan(0);
  if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

/** True when a value could be fetched somewhere other than the fixture site. */
function leavesLoopback(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '127.0.0.1';
  } catch {
    return false;
  }
}

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });
const anyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: 'binary-ascii', maxLength: 30 }), printable);
const junk = fc.oneof(fc.anything({ maxDepth: 2 }), anyString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));

const tokenChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_.!#$%&*+^`|~'.split(''));
const safeValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });

const selector = fc.string({ minLength: 1, maxLength: 500 });
/** Actions of the declared set (browser actions v1), each with valid fields. */
const validAction = fc.oneof(
  fc.record({ type: fc.constant('click'), selector }),
  fc.record({ type: fc.constant('fill'), selector, value: fc.string({ maxLength: 100 }) }),
  fc.record({ type: fc.constant('type'), selector, text: fc.string({ minLength: 1, maxLength: 100 }), delay_ms: fc.integer({ min: 0, max: 200 }) }, { requiredKeys: ['type', 'selector', 'text'] }),
  fc.record({ type: fc.constant('press'), key: fc.constantFrom('Enter', 'Tab', 'ArrowDown', 'a', '1') }),
  fc.record({ type: fc.constant('hover'), selector }),
  fc.record({ type: fc.constant('select'), selector, values: fc.array(fc.string({ maxLength: 20 }), { minLength: 1, maxLength: 5 }) }),
  fc.oneof(fc.record({ type: fc.constant('scroll') }), fc.record({ type: fc.constant('scroll'), to: fc.constantFrom('top', 'bottom') }), fc.record({ type: fc.constant('scroll'), y: fc.integer({ min: -100_000, max: 100_000 }) })),
  fc.record({ type: fc.constant('wait'), ms: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ type: fc.constant('wait_for_selector'), selector, timeout_ms: fc.integer({ min: 1, max: 30_000 }), visible: fc.boolean(), optional: fc.boolean() }, { requiredKeys: ['type', 'selector'] }),
  fc.record({ type: fc.constant('wait_for_text'), text: fc.string({ minLength: 1, maxLength: 100 }), timeout_ms: fc.integer({ min: 1, max: 30_000 }) }, { requiredKeys: ['type', 'text'] }),
);

/** Bodies that satisfy every rule of the table (any subset of the optional fields). */
const validBody = fc.record(
  {
    url: fc.constantFrom('/page', '/page?a=1', '/status/404', '/redirect', '/bytes?n=10').map((p) => `${site.url}${p}`),
    mode: fc.constantFrom('direct', 'auto', 'browser', 'http', 'residential', 'residential_browser'),
    geo_country: fc.constantFrom('de', 'US', 'fR', 'jp', 'BR'),
    max_credits_per_request: fc.integer({ min: 25, max: 2 ** 31 - 1 }),
    proxy: fc.constantFrom('random', 'off'),
    proxy_type: fc.constantFrom('datacenter', 'residential'),
    headers: fc.dictionary(
      fc.string({ unit: tokenChar, minLength: 1, maxLength: 20 }).filter((n) => !FORBIDDEN_HEADERS.includes(n) && !n.startsWith('proxy-') && !n.startsWith('x-forwarded-')),
      safeValue,
      { maxKeys: 5 },
    ),
    cookies: fc.dictionary(fc.string({ unit: tokenChar, minLength: 1, maxLength: 20 }), safeValue.map((v) => v.replace(/;/g, '')), { maxKeys: 5 }),
    timeout_ms: fc.integer({ min: 5_000, max: 300_000 }),
    javascript: fc.boolean(),
    resource_policy: fc.constantFrom('adaptive', 'compatible'),
    wait_for_selector: fc.string({ minLength: 1, maxLength: 500 }),
    user_agent: fc.string({ minLength: 1, maxLength: 1_000 }),
    result_text_selector: fc.string({ minLength: 1, maxLength: 500 }),
    wait_for_text: fc.option(fc.string({ maxLength: 50 })),
    browser_actions: fc.array(validAction, { maxLength: 20 }),
    debug_artifacts: fc.boolean(),
    skip_cache: fc.boolean(),
    cache_ttl_seconds: fc.integer({ min: 0, max: 3_600 }),
    // A valid extraction names one of the tenant's recipes (recipes.e2e.test.ts); here only its absence.
    extraction: fc.constant(null),
  },
  { requiredKeys: ['url'] },
);

/** Values that break a rule, or are of the wrong kind altogether. */
const invalidValue = fc.oneof(
  junk,
  fc.constantFrom(
    '', 'fast', 'zz', 'deu', 'premium', 4_999, 300_001, 3_601, -1, 0, 1.5, 2 ** 31, '45000', 'true', [], {},
    { Host: 'x' }, { 'X-A': 'a\r\nb' }, { 'a b': 'c' }, { sid: 'a;b' }, 'x'.repeat(1_001), Array.from({ length: 21 }, () => ({ type: 'wait' })),
  ),
);

/** A valid body with one to three fields replaced by invalid values or unknown fields added. */
const mutatedBody = fc
  .tuple(validBody, fc.array(fc.tuple(fc.oneof(fc.constantFrom(...SUBMISSION_FIELDS), anyString), invalidValue), { minLength: 1, maxLength: 3 }))
  .map(([b, changes]) => {
    const out: Record<string, unknown> = { ...b };
    for (const [k, v] of changes) out[k] = v;
    return out as unknown;
  });

/** Mutated bodies, plus JSON of any shape; never a URL that leaves 127.0.0.1. */
const body = fc
  .oneof({ weight: 5, arbitrary: mutatedBody }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<unknown> })
  .filter((b) => !JSON.stringify(b ?? null).split('"').some(leavesLoopback));

const idempotencyKey = fc.option(fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 210 }), { nil: undefined });

describe('random and mutated submissions', () => {
  const surfaces = [
    ['data API', '/api/v1/data/requests', () => ({ 'X-API-Key': apiKey })],
    ['client API', '/api/v1/client/requests', () => ({ Authorization: `Bearer ${token}` })],
  ] as const;

  it.each(surfaces)('the %s accepts every body that follows the rules', async (_n, path, auth) => {
    await fc.assert(
      fc.asyncProperty(validBody, fc.boolean(), async (b, keyed) => {
        let req = gateway().post(path).set(auth());
        if (keyed) req = req.set('Idempotency-Key', randomUUID());
        const res = await req.send(b);
        if (res.status !== 202) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
        expect(res.body.url).toBe(site.url);
        expect(res.body.idempotent_replay).toBe(false);
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  }, 240_000);

  it.each(surfaces)('the %s answers every mutated or random body with a submission or a well-formed PublicError', async (_n, path, auth) => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(body, idempotencyKey, async (b, key) => {
        let req = gateway().post(path).set(auth()).set('Content-Type', 'application/json');
        if (key !== undefined) req = req.set('Idempotency-Key', key);
        const res = await req.send(JSON.stringify(b) ?? 'null');
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        wellFormed(res);
        if (res.status === 202) {
          expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
          expect(res.body.url).toBe(site.url);
        }
      }),
      { numRuns: RUNS },
    );
    expect(statuses.get(422) ?? 0).toBeGreaterThan(RUNS / 2);
  }, 240_000);

  it('answers raw bytes of any kind under any content type', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.jsonValue().map((v) => JSON.stringify(v)), fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a).toString('latin1'))),
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/octet-stream', 'multipart/form-data', 'application/merge-patch+json'),
        async (raw, type) => {
          const res = await gateway().post('/api/v1/data/requests').set('X-API-Key', apiKey).set('Content-Type', type).send(raw);
          wellFormed(res);
          if (!raw.trimStart().startsWith('{')) expect(res.status).not.toBe(202);
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);
});

describe('random credentials, query strings and paths', () => {
  it('answers any X-API-Key, Authorization and Idempotency-Key value with a PublicError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.option(printable, { nil: undefined }), fc.option(printable, { nil: undefined }), idempotencyKey, async (key, auth, idem) => {
        let req = gateway().post('/api/v1/client/requests');
        if (key !== undefined) req = req.set('X-API-Key', key);
        if (auth !== undefined) req = req.set('Authorization', auth);
        if (idem !== undefined) req = req.set('Idempotency-Key', idem);
        const res = await req.send({ url: `${site.url}/page` });
        wellFormed(res);
        expect(res.status).toBe(401);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('answers any recipe query string with a page or a 422', async () => {
    const value = fc.oneof(fc.integer({ min: -5, max: 20_000 }).map(String), printable, fc.constantFrom('', '1e2', '0x10', '00020', ' 5', '5 ', '1.0', 'NaN', 'Infinity', '9007199254740993'));
    const query = fc.array(fc.tuple(fc.constantFrom('limit', 'offset', 'cursor', 'x', 'limit[]', 'offset[a]'), value), { maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(query, fc.boolean(), async (pairs, client) => {
        const qs = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        const path = client ? '/api/v1/client/recipes' : '/api/v1/data/recipes';
        const res = await gateway()
          .get(`${path}?${qs}`)
          .set(client ? { Authorization: `Bearer ${token}` } : { 'X-API-Key': apiKey });
        wellFormed(res);
        expect([200, 422]).toContain(res.status);
        if (res.status === 200) {
          expect(res.body).toEqual({ total: 0, limit: expect.any(Number), offset: expect.any(Number), has_more: false, items: [] });
          expect(res.body.limit >= 1 && res.body.limit <= 100).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('answers any method and path with a PublicError or a page', async () => {
    const segment = fc.oneof(fc.constantFrom('api', 'v1', 'data', 'client', 'requests', 'recipes', 'capabilities', 'batches', '..', '%2e%2e', '%00', randomUUID()), printable.map(encodeURIComponent));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('get', 'post', 'put', 'patch', 'delete', 'options'), fc.array(segment, { maxLength: 5 }), async (method, segments) => {
        const res = await gateway()[method as 'get'](`/api/v1/${segments.join('/')}`).set('X-API-Key', apiKey).set('Authorization', `Bearer ${token}`);
        wellFormed(res);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});

describe('after the storm', () => {
  it('the gateway is still up and ready', async () => {
    await gateway().get('/healthz').expect(200);
    expect((await gateway().get('/readyz')).status).toBe(200);
    expect(fleet.logs('gateway')).not.toMatch(/"level":(50|60)/);
  });
});
