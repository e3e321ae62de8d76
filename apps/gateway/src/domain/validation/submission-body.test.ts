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
        'url', 'mode', 'geo_country', 'max_credits_per_request', 'proxy', 'proxy_type', 'headers', 'cookies', 'timeout_ms', 'javascript',
        'resource_policy', 'wait_for_selector', 'user_agent', 'result_text_selector', 'wait_for_text', 'browser_actions', 'debug_artifacts',
        'skip_cache', 'cache_ttl_seconds', 'extraction',
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
    [{ url, browser_actions: Array.from({ length: 21 }, () => ({ type: 'wait' })) }, 'browser_actions'],
    [{ url, browser_actions: [{ type: '' }] }, 'browser_actions.0.type'],
    [{ url, extraction: [] }, 'extraction'],
    [{ url, nope: 1 }, 'nope'],
  ])('%j is refused at %s', (body, field) => {
    expect(fieldsOf(body)).toContain(field);
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
        proxy_type: 'residential',
      }),
    ).not.toThrow();
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
