import { describe, expect, it } from '@jest/globals';
import { PublicError } from '@wdr/kit/errors';
import { FORBIDDEN_HEADERS, isForbiddenHeader, normalizeSubmission, SUBMISSION_FIELDS } from './submission-body.js';

const url = 'https://example.com/a?b=c';

function detailsOf(body: unknown): { field: string; issue: string }[] {
  try {
    normalizeSubmission(body);
  } catch (err) {
    expect(err).toBeInstanceOf(PublicError);
    expect((err as PublicError).code).toBe('VALIDATION_FAILED');
    return (err as PublicError).details ?? [];
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`);
}

const fieldsOf = (body: unknown) => detailsOf(body).map((d) => d.field);

describe('normalizeSubmission', () => {
  it('applies the defaults of the spec and upper-cases geo_country', () => {
    expect(normalizeSubmission({ url, geo_country: 'de' })).toEqual({
      url,
      geo_country: 'DE',
      timeout_ms: 45_000,
      javascript: true,
      resource_policy: 'adaptive',
      debug_artifacts: false,
      skip_cache: false,
      cache_ttl_seconds: 300,
    });
  });

  it('knows every field of the body model', () => {
    expect([...SUBMISSION_FIELDS].sort()).toEqual(
      [
        'url',
        'mode',
        'geo_country',
        'max_credits_per_request',
        'proxy',
        'proxy_type',
        'headers',
        'cookies',
        'timeout_ms',
        'javascript',
        'resource_policy',
        'wait_for_selector',
        'user_agent',
        'result_text_selector',
        'wait_for_text',
        'browser_actions',
        'debug_artifacts',
        'skip_cache',
        'cache_ttl_seconds',
        'extraction',
      ].sort(),
    );
  });

  it.each([
    [{ url: 'ftp://example.com/' }, 'url'],
    [{ url: 'https://user:pw@example.com/' }, 'url'],
    [{ url: 'example.com' }, 'url'],
    [{ url: `https://e.com/${'a'.repeat(4096)}` }, 'url'],
    [{ url, geo_country: 'ZZ' }, 'geo_country'],
    [{ url, geo_country: 'd1' }, 'geo_country'],
    [{ url, timeout_ms: 4_999 }, 'timeout_ms'],
    [{ url, timeout_ms: 300_001 }, 'timeout_ms'],
    [{ url, cache_ttl_seconds: 3_601 }, 'cache_ttl_seconds'],
    [{ url, max_credits_per_request: 0 }, 'max_credits_per_request'],
    [{ url, max_credits_per_request: 2 ** 31 }, 'max_credits_per_request'],
    [{ url, proxy: 'off', proxy_type: 'premium' }, 'proxy_type'],
    [{ url, headers: { Host: 'x' } }, 'headers.Host'],
    [{ url, headers: { 'proxy-authorization': 'x' } }, 'headers.proxy-authorization'],
    [{ url, headers: { 'X-Forwarded-For': '1.2.3.4' } }, 'headers.X-Forwarded-For'],
    [{ url, headers: { 'X-A': 'a\r\nInjected: 1' } }, 'headers.X-A'],
    [{ url, headers: { 'X-A': 'tab\there' } }, 'headers.X-A'],
    [{ url, headers: { 'X-A': 'snow \u2603' } }, 'headers.X-A'],
    [{ url, headers: { 'Bad Name': 'x' } }, 'headers.Bad Name'],
    [{ url, headers: { 'X-A': '1', 'x-a': '2' } }, 'headers.x-a'],
    [{ url, cookies: { 'a=b': 'x' } }, 'cookies.a=b'],
    [{ url, cookies: { sid: 'a;b' } }, 'cookies.sid'],
    [{ url, cookies: { sid: 'a\u0000' } }, 'cookies.sid'],
    [{ url, user_agent: 'UA\r\nX-Injected: 1' }, 'user_agent'],
    [{ url, user_agent: 'UA\u0000' }, 'user_agent'],
    [{ url, user_agent: 'UA \u2603' }, 'user_agent'],
    [{ url, browser_actions: Array.from({ length: 21 }, () => ({ type: 'wait' })) }, 'browser_actions'],
    [{ url, browser_actions: [{ type: '' }] }, 'browser_actions.0.type'],
    [{ url, browser_actions: [{ type: 'teleport' }] }, 'browser_actions.0.type'],
    [{ url, browser_actions: [{ type: 'wait', ms: 10 }, { type: 'click' }] }, 'browser_actions.1.selector'],
    [{ url, browser_actions: [{ type: 'wait', ms: 60_000 }] }, 'browser_actions.0.ms'],
    [{ url, browser_actions: [{ type: 'scroll', to: 'bottom', y: 10 }] }, 'browser_actions.0'],
    [{ url, browser_actions: [{ type: 'click', selector: '#a', force: true }] }, 'browser_actions.0.force'],
    [{ url, browser_actions: [{ type: 'click', selector: '#a', optional: 'yes' }] }, 'browser_actions.0.optional'],
    [{ url, browser_actions: [{ type: 'select', selector: '#a', values: [] }] }, 'browser_actions.0.values'],
    [{ url, browser_actions: [{ type: 'press', key: 'not a key' }] }, 'browser_actions.0.key'],
    [{ url, browser_actions: [{ type: 'fill', selector: '#a', value: 'x'.repeat(5_000) }] }, 'browser_actions.0'],
    [{ url, browser_actions: ['click'] }, 'browser_actions.0'],
    [{ url, extraction: [] }, 'extraction'],
    [{ url, extraction: { recipe_id: 'shoes' } }, 'extraction.recipe_id'],
    [{ url, extraction: { recipe_id: '3f1e2d4c-0b1a-4c5d-8e9f-0a1b2c3d4e5f', prompt: 'x' } }, 'extraction.prompt'],
    [{ url, nope: 1 }, 'nope'],
    // A residential route is a proxy route: with proxy off it could only fail later (issue 23).
    [{ url, proxy: 'off', proxy_type: 'residential' }, 'proxy_type'],
    [{ url, proxy: 'off', mode: 'residential' }, 'mode'],
    [{ url, proxy: 'off', mode: 'residential_browser' }, 'mode'],
    [{ url, proxy: 'off', geo_country: 'DE' }, 'geo_country'],
    [{ url, proxy: 'off', mode: 'direct', geo_country: 'fr' }, 'geo_country'],
  ])('%j is refused at %s', (body, field) => {
    expect(fieldsOf(body)).toContain(field);
  });

  it('refuses U+0000 in any string, whatever the field (Postgres stores none), naming where', () => {
    expect(fieldsOf({ url, wait_for_text: '\u0000' })).toEqual(['wait_for_text']);
    expect(fieldsOf({ url, wait_for_selector: '#a\u0000' })).toEqual(['wait_for_selector']);
    expect(fieldsOf({ url, browser_actions: [{ type: 'wait_for_text', text: 'in\u0000stock', timeout_ms: 5000 }] })).toEqual([
      'browser_actions.0.text',
    ]);
    expect(detailsOf({ url, wait_for_text: '\u0000' })[0]!.issue).toBe('must not contain the NUL character (U+0000)');
  });

  it('reports every problem at once', () => {
    expect(fieldsOf({ url: 'x', timeout_ms: 1, headers: { Connection: 'close' }, extra: true }).sort()).toEqual(
      ['extra', 'headers.Connection', 'timeout_ms', 'url'].sort(),
    );
  });

  it('accepts the boundaries', () => {
    expect(() =>
      normalizeSubmission({
        url: `https://e.com/${'a'.repeat(4096 - 'https://e.com/'.length)}`,
        timeout_ms: 5_000,
        cache_ttl_seconds: 0,
        max_credits_per_request: 1,
        wait_for_selector: 'a'.repeat(500),
        user_agent: 'u'.repeat(1_000),
        result_text_selector: 'b',
        wait_for_text: null,
        browser_actions: Array.from({ length: 20 }, () => ({ type: 'wait', ms: 10 })),
        headers: { 'X-Test': 'ok', 'Accept-Language': 'de-DE, en;q=0.5' },
        cookies: { sid: 'abc=def' },
        extraction: null,
        proxy: 'off',
        proxy_type: 'datacenter',
      }),
    ).not.toThrow();
  });
});

describe('browser actions', () => {
  it.each([
    { type: 'click', selector: '#go' },
    { type: 'fill', selector: 'input[name=q]', value: 'shoes' },
    { type: 'type', selector: '#q', text: 'abc', delay_ms: 20 },
    { type: 'press', key: 'Enter' },
    { type: 'press', key: 'a', selector: '#q' },
    { type: 'hover', selector: '.menu' },
    { type: 'select', selector: '#size', values: ['m', 'l'] },
    { type: 'scroll' },
    { type: 'scroll', to: 'top' },
    { type: 'scroll', y: -400 },
    { type: 'scroll', selector: '#footer' },
    { type: 'wait', ms: 500 },
    { type: 'wait_for_selector', selector: '#list li', timeout_ms: 5000, visible: true },
    { type: 'wait_for_text', text: 'In stock', timeout_ms: 5000 },
    { type: 'click', selector: '#maybe', optional: true },
  ])('accepts %j', (action) => {
    expect(normalizeSubmission({ url, browser_actions: [action] }).browser_actions).toEqual([action]);
  });

  it('documents the same action types and fields as it validates', async () => {
    const { readFileSync } = await import('node:fs');
    const { BROWSER_ACTION_SCHEMAS } = await import('@wdr/contracts');
    const doc = JSON.parse(readFileSync(new URL('../../../../../packages/contracts/openapi/openapi.json', import.meta.url), 'utf8')) as {
      components: {
        schemas: Record<
          string,
          { properties?: Record<string, { enum?: string[] }>; anyOf?: { $ref: string }[]; oneOf?: { $ref: string }[]; allOf?: unknown[] }
        >;
      };
    };
    const schemas = doc.components.schemas;
    const union = schemas['BrowserAction']!;
    const documented = new Map<string, string[]>();
    for (const ref of union.anyOf ?? union.oneOf ?? []) {
      const model = schemas[ref.$ref.split('/').pop()!]!;
      const props = model.properties ?? {};
      documented.set(props['type']!.enum![0]!, Object.keys(props).sort());
    }
    const validated = new Map(Object.entries(BROWSER_ACTION_SCHEMAS).map(([type, schema]) => [type, Object.keys(schema.shape).sort()]));
    expect(documented).toEqual(validated);
  });
});

describe('forbidden headers', () => {
  it('refuses every listed header in any case and the Proxy-* and X-Forwarded-* families', () => {
    for (const h of FORBIDDEN_HEADERS) {
      expect(isForbiddenHeader(h)).toBe(true);
      expect(isForbiddenHeader(h.toUpperCase())).toBe(true);
    }
    expect(isForbiddenHeader('Proxy-Anything')).toBe(true);
    expect(isForbiddenHeader('x-forwarded-proto')).toBe(true);
    expect(isForbiddenHeader('Accept-Language')).toBe(false);
    expect(isForbiddenHeader('Referer')).toBe(false);
  });
});
