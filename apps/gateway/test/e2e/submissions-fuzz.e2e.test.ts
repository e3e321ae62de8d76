// Own fleet (not the shared one of ./shared/): it leaves hundreds of accepted renders queued behind it, its renderer takes one page at a time, and it lifts the failed-authentication throttle.
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
/** The fuzz tenant's recipes, in the order both listings give them (oldest first). */
let recipeIds: string[] = [];
/** Extraction objects the fuzz tenant may submit: an active recipe, or any of its recipes with one of its versions. */
let validExtractions: Record<string, string>[] = [];
/** Extraction objects that must be refused: unknown or foreign recipes, a draft without a version, a version of another recipe. */
let refusedExtractions: Record<string, unknown>[] = [];

const RUNS = Number(process.env['WDR_FUZZ_RUNS'] ?? 150);
const gateway = () => request(fleet.url('gateway'));

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet({
    env: {
      // Hundreds of random credentials from one address: the failed-authentication throttle
      // (abuse-bounds e2e tests it) is lifted here, where each answer's shape is the subject.
      gateway: {
        REDIS_KEY_PREFIX: `wdr:test:${randomUUID()}:`,
        RATE_LIMIT_SUBMISSIONS: '1000000',
        CONCURRENCY_LIMIT: '1000000',
        AUTH_FAILURE_LIMIT: '1000000',
      },
      // Accepted bodies really run (most in the browser); this suite is about admission, so one
      // render at a time keeps them from crowding the machine while it sends its load.
      'browser-renderer': { BROWSER_PAGES_PER_BROWSER: '1' },
    },
  });
  const t = await adminCommand(fleet, ['create-tenant', '--name', 'fuzz', '--credits', '10000000']);
  apiKey = t['api_key'] as string;
  token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t['tenant_id'] as string]))['cabinet_token'] as string;
  const other = await adminCommand(fleet, ['create-tenant', '--name', 'fuzz-other', '--credits', '100']);
  const otherToken = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', other['tenant_id'] as string]))[
    'cabinet_token'
  ] as string;

  // Seven recipes (a listing of several pages for small limits): active ones, drafts with a
  // version, a draft without one; and one of another tenant.
  const definition = { dsl_version: 1, fields: [{ name: 'heading', type: 'string', required: true, selectors: ['h1'] }] };
  const make = async (auth: string, body: Record<string, unknown>) => {
    const r = await request(fleet.url('gateway'))
      .post('/api/v1/client/recipes')
      .set('Authorization', `Bearer ${auth}`)
      .send({ sample_url: `${site.url}/page`, ...body });
    if (r.status !== 201) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string; active_version_id: string | null; versions: { id: string }[] };
  };
  const kinds = ['active', 'draft', 'active', 'empty', 'active', 'draft', 'active'] as const;
  const made = [];
  for (const [i, kind] of kinds.entries()) {
    made.push({
      kind,
      ...(await make(token, { name: `fuzz ${i}`, ...(kind === 'empty' ? {} : { definition, activate: kind === 'active' }) })),
    });
  }
  const foreign = await make(otherToken, { name: 'not yours', definition, activate: true });
  const listed = await request(fleet.url('gateway')).get('/api/v1/client/recipes?limit=100').set('Authorization', `Bearer ${token}`);
  recipeIds = (listed.body.items as { id: string }[]).map((r) => r.id);
  expect([...recipeIds].sort()).toEqual(made.map((r) => r.id).sort());

  validExtractions = made.flatMap((r) => [
    ...(r.active_version_id ? [{ recipe_id: r.id }] : []),
    ...r.versions.map((v) => ({ recipe_id: r.id, version_id: v.id })),
  ]);
  const empty = made.find((r) => r.kind === 'empty')!;
  const [one, two] = made.filter((r) => r.kind === 'active');
  refusedExtractions = [
    { recipe_id: randomUUID() },
    { recipe_id: foreign.id },
    { recipe_id: foreign.id, version_id: foreign.versions[0]!.id },
    { recipe_id: one!.id, version_id: foreign.versions[0]!.id },
    { recipe_id: one!.id, version_id: two!.versions[0]!.id },
    { recipe_id: one!.id, version_id: randomUUID() },
    { recipe_id: empty.id },
    ...made.filter((r) => r.kind === 'draft').map((r) => ({ recipe_id: r.id })),
    { recipe_id: 'not-a-uuid' },
    { recipe_id: one!.id, version_id: 'v1' },
    { recipe_id: one!.id, fields: ['heading'] },
    { version_id: two!.versions[0]!.id },
    {},
  ];
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
/** Whether a value, once sent as JSON, defines `toString` or `valueOf` at any depth (fc.anything can make such keys). */
function definesCoercionKey(value: unknown): boolean {
  const walk = (v: unknown): boolean =>
    typeof v === 'object' &&
    v !== null &&
    (Array.isArray(v) ? v.some(walk) : Object.entries(v).some(([k, x]) => k === 'toString' || k === 'valueOf' || walk(x)));
  const text = JSON.stringify(value);
  return text !== undefined && walk(JSON.parse(text));
}
const junk = fc.oneof(fc.anything({ maxDepth: 2 }), anyString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));

const tokenChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_.!#$%&*+^`|~'.split(''));
const safeValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });

const selector = fc.string({ minLength: 1, maxLength: 500 });
/** Actions of the declared set (browser actions v1), each with valid fields. */
const validAction = fc.oneof(
  fc.record({ type: fc.constant('click'), selector }),
  fc.record({ type: fc.constant('fill'), selector, value: fc.string({ maxLength: 100 }) }),
  fc.record(
    { type: fc.constant('type'), selector, text: fc.string({ minLength: 1, maxLength: 100 }), delay_ms: fc.integer({ min: 0, max: 200 }) },
    { requiredKeys: ['type', 'selector', 'text'] },
  ),
  fc.record({ type: fc.constant('press'), key: fc.constantFrom('Enter', 'Tab', 'ArrowDown', 'a', '1') }),
  fc.record({ type: fc.constant('hover'), selector }),
  fc.record({ type: fc.constant('select'), selector, values: fc.array(fc.string({ maxLength: 20 }), { minLength: 1, maxLength: 5 }) }),
  fc.oneof(
    fc.record({ type: fc.constant('scroll') }),
    fc.record({ type: fc.constant('scroll'), to: fc.constantFrom('top', 'bottom') }),
    fc.record({ type: fc.constant('scroll'), y: fc.integer({ min: -100_000, max: 100_000 }) }),
  ),
  fc.record({ type: fc.constant('wait'), ms: fc.integer({ min: 1, max: 100 }) }),
  fc.record(
    {
      type: fc.constant('wait_for_selector'),
      selector,
      timeout_ms: fc.integer({ min: 1, max: 30_000 }),
      visible: fc.boolean(),
      optional: fc.boolean(),
    },
    { requiredKeys: ['type', 'selector'] },
  ),
  fc.record(
    {
      type: fc.constant('wait_for_text'),
      text: fc.string({ minLength: 1, maxLength: 100 }),
      timeout_ms: fc.integer({ min: 1, max: 30_000 }),
    },
    { requiredKeys: ['type', 'text'] },
  ),
);

/** Bodies that satisfy every rule of the table (any subset of the optional fields). */
const validBody = fc
  .record(
    {
      url: fc.constantFrom('/page', '/page?a=1', '/status/404', '/redirect', '/bytes?n=10').map((p) => `${site.url}${p}`),
      mode: fc.constantFrom('direct', 'auto', 'browser', 'http', 'residential', 'residential_browser'),
      geo_country: fc.constantFrom('de', 'US', 'fR', 'jp', 'BR'),
      max_credits_per_request: fc.integer({ min: 25, max: 2 ** 31 - 1 }),
      proxy: fc.constantFrom('random', 'off'),
      proxy_type: fc.constantFrom('datacenter', 'residential'),
      headers: fc.dictionary(
        fc
          .string({ unit: tokenChar, minLength: 1, maxLength: 20 })
          .filter((n) => !FORBIDDEN_HEADERS.includes(n) && !n.startsWith('proxy-') && !n.startsWith('x-forwarded-')),
        safeValue,
        { maxKeys: 5 },
      ),
      cookies: fc.dictionary(
        fc.string({ unit: tokenChar, minLength: 1, maxLength: 20 }),
        safeValue.map((v) => v.replace(/;/g, '')),
        { maxKeys: 5 },
      ),
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
      // null, or one of the fuzz tenant's recipes that can run (chosen when generated: they exist only after beforeAll).
      extraction: fc.oneof(
        fc.constant(null),
        fc.nat().map((i) => validExtractions[i % validExtractions.length]!),
      ),
    },
    { requiredKeys: ['url'] },
  )
  .filter(
    // A residential route or a country with proxy off breaks a rule (issue 23: refused at validation, field
    // proxy_type, mode or geo_country).
    (b) =>
      !(
        b.proxy === 'off' &&
        (b.proxy_type === 'residential' || b.mode === 'residential' || b.mode === 'residential_browser' || b.geo_country !== undefined)
      ),
  );

/** Values that break a rule, or are of the wrong kind altogether. */
const invalidValue = fc.oneof(
  junk,
  fc.constantFrom(
    '',
    'fast',
    'zz',
    'deu',
    'premium',
    4_999,
    300_001,
    3_601,
    -1,
    0,
    1.5,
    2 ** 31,
    '45000',
    'true',
    [],
    {},
    { Host: 'x' },
    { 'X-A': 'a\r\nb' },
    { 'a b': 'c' },
    { sid: 'a;b' },
    'x'.repeat(1_001),
    Array.from({ length: 21 }, () => ({ type: 'wait' })),
  ),
);

/** A valid body with one to three fields replaced by invalid values or unknown fields added. */
const mutatedBody = fc
  .tuple(
    validBody,
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...SUBMISSION_FIELDS), anyString), invalidValue), { minLength: 1, maxLength: 3 }),
  )
  .map(([b, changes]) => {
    const out: Record<string, unknown> = { ...b };
    for (const [k, v] of changes) out[k] = v;
    return out as unknown;
  });

/** Mutated bodies, plus JSON of any shape; never a URL that leaves 127.0.0.1. */
const body = fc
  .oneof({ weight: 5, arbitrary: mutatedBody }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<unknown> })
  .filter(
    (b) =>
      !JSON.stringify(b ?? null)
        .split('"')
        .some(leavesLoopback),
  );

const idempotencyKey = fc.option(
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 210 }),
  { nil: undefined },
);

describe('random and mutated submissions', () => {
  const surfaces = [
    ['data API', '/api/v1/data/requests', () => ({ 'X-API-Key': apiKey })],
    ['client API', '/api/v1/client/requests', () => ({ Authorization: `Bearer ${token}` })],
  ] as const;

  it.each(surfaces)(
    'the %s accepts every body that follows the rules',
    async (_n, path, auth) => {
      await fc.assert(
        fc.asyncProperty(validBody, fc.boolean(), async (b, keyed) => {
          let req = gateway().post(path).set(auth());
          if (keyed) req = req.set('Idempotency-Key', randomUUID());
          const res = await req.send(b);
          if (res.status !== 202) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
          expect(res.body.url).toBe(site.url);
          expect(res.body.idempotent_replay).toBe(false);
          // An extraction request says so, a plain one does not.
          expect(res.body.result_kind).toBe(b.extraction ? 'extraction' : undefined);
        }),
        { numRuns: Math.ceil(RUNS / 3) },
      );
    },
    240_000,
  );

  it.each(surfaces)(
    'the %s admits every runnable extraction object and refuses every other one with a VALIDATION_FAILED naming extraction (a toString or valueOf key: MALFORMED_REQUEST)',
    async (_n, path, auth) => {
      const extraction = fc.oneof(
        fc.nat().map((i) => ({ ok: true, value: validExtractions[i % validExtractions.length] as unknown })),
        fc.nat().map((i) => ({ ok: false, value: refusedExtractions[i % refusedExtractions.length] as unknown })),
        // Not an object at all, or an object of anything.
        fc
          .oneof(junk, fc.dictionary(fc.constantFrom('recipe_id', 'version_id', 'fields', 'x'), junk, { maxKeys: 3 }))
          // `extraction: null` is allowed (no extraction), and so is what JSON turns into null (Infinity, NaN).
          .filter((v) => v !== undefined && JSON.stringify(v) !== 'null')
          .map((value) => ({ ok: false, value })),
      );
      const seen = { admitted: 0, refused: 0 };
      await fc.assert(
        fc.asyncProperty(extraction, fc.constantFrom('/page', '/status/404'), async ({ ok, value }, page) => {
          const res = await gateway()
            .post(path)
            .set(auth())
            .send({ url: `${site.url}${page}`, mode: 'http', extraction: value });
          wellFormed(res);
          if (ok) {
            if (res.status !== 202) throw new Error(`${JSON.stringify(value)}: ${res.status} ${JSON.stringify(res.body)}`);
            expect(res.body).toMatchObject({ result_kind: 'extraction', page_status: 'pending' });
            seen.admitted++;
          } else if (definesCoercionKey(value)) {
            // Refused before validation, as every body defining these keys is (kit's JSON reviver).
            expect([res.status, res.body.code, res.body.message]).toEqual([
              400,
              'MALFORMED_REQUEST',
              expect.stringMatching(/^The request body may not define "(toString|valueOf)"/),
            ]);
            seen.refused++;
          } else {
            if (res.status !== 422) throw new Error(`${JSON.stringify(value)}: ${res.status} ${JSON.stringify(res.body)}`);
            expect(res.body.code).toBe('VALIDATION_FAILED');
            expect(
              (res.body.details as { field: string }[]).some((d) => d.field === 'extraction' || d.field.startsWith('extraction.')),
            ).toBe(true);
            seen.refused++;
          }
        }),
        {
          numRuns: Math.ceil(RUNS / 3),
          // The draw a clean run once made, every time (fc.anything() makes such keys only now and then).
          examples: [
            [{ ok: false, value: { toString: '' } }, '/page'],
            [{ ok: false, value: { fields: [{ valueOf: 1 }] } }, '/page'],
          ],
        },
      );
      expect(seen.admitted).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    },
    240_000,
  );

  it.each(surfaces)(
    'the %s answers every mutated or random body with a submission or a well-formed PublicError',
    async (_n, path, auth) => {
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
    },
    240_000,
  );

  it('answers raw bytes of any kind under any content type', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 200 }),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a).toString('latin1')),
        ),
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'application/json; charset=latin1',
          'text/plain',
          'application/octet-stream',
          'multipart/form-data',
          'application/merge-patch+json',
        ),
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
      fc.asyncProperty(
        fc.option(printable, { nil: undefined }),
        fc.option(printable, { nil: undefined }),
        idempotencyKey,
        async (key, auth, idem) => {
          let req = gateway().post('/api/v1/client/requests');
          if (key !== undefined) req = req.set('X-API-Key', key);
          if (auth !== undefined) req = req.set('Authorization', auth);
          if (idem !== undefined) req = req.set('Idempotency-Key', idem);
          const res = await req.send({ url: `${site.url}/page` });
          wellFormed(res);
          expect(res.status).toBe(401);
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('answers any recipe query string with a consistent page of the tenant’s recipes or a 422', async () => {
    const value = fc.oneof(
      fc.integer({ min: -2, max: 9 }).map(String),
      fc.integer({ min: -5, max: 20_000 }).map(String),
      printable,
      fc.constantFrom('', '1e2', '0x10', '00020', '0002', ' 5', '5 ', '1.0', 'NaN', 'Infinity', '9007199254740993'),
    );
    const query = fc.array(fc.tuple(fc.constantFrom('limit', 'offset', 'cursor', 'x', 'limit[]', 'offset[a]'), value), { maxLength: 4 });
    const pages: { offset: number; limit: number; n: number }[] = [];
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
          const { total, limit, offset, has_more, items } = res.body as {
            total: number;
            limit: number;
            offset: number;
            has_more: boolean;
            items: { id: string; active_version?: unknown }[];
          };
          expect(Object.keys(res.body).sort()).toEqual(['has_more', 'items', 'limit', 'offset', 'total']);
          expect(Number.isInteger(limit) && limit >= 1 && limit <= 100).toBe(true);
          expect(Number.isInteger(offset) && offset >= 0).toBe(true);
          if (!client) expect(offset).toBeLessThanOrEqual(10_000);
          // The page the echoed limit and offset name, of the tenant's real recipes.
          expect(total).toBe(recipeIds.length);
          expect(items.map((r) => r.id)).toEqual(recipeIds.slice(offset, offset + limit));
          expect(items.length).toBeLessThanOrEqual(limit);
          expect(has_more).toBe(offset + items.length < total);
          for (const r of items) expect('active_version' in r).toBe(!client);
          pages.push({ offset, limit, n: items.length });
        }
      }),
      {
        numRuns: RUNS,
        // Run first, so that a middle page (items before and after it) is always among the checked
        // answers, whatever the random runs reach (a run of 150 once reached none).
        examples: [
          [
            [
              ['limit', '2'],
              ['offset', '1'],
            ],
            false,
          ],
          [[['limit', '3']], true],
        ],
      },
    );
    // The runs reached real pages: some with items, some partial or past the end.
    expect(pages.some((p) => p.n > 0)).toBe(true);
    expect(pages.some((p) => p.n > 0 && p.offset + p.n < recipeIds.length)).toBe(true);
  }, 120_000);

  it('answers any method and path with a PublicError or a page', async () => {
    const segment = fc.oneof(
      fc.constantFrom('api', 'v1', 'data', 'client', 'requests', 'recipes', 'capabilities', 'batches', '..', '%2e%2e', '%00', randomUUID()),
      printable.map(encodeURIComponent),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('get', 'post', 'put', 'patch', 'delete', 'options'),
        fc.array(segment, { maxLength: 5 }),
        async (method, segments) => {
          const res = await gateway()
            [method as 'get'](`/api/v1/${segments.join('/')}`)
            .set('X-API-Key', apiKey)
            .set('Authorization', `Bearer ${token}`);
          wellFormed(res);
        },
      ),
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
