import { describe, expect, it } from '@jest/globals';
import { inputHashOf, requestIdFor, resolveRouteMode } from './data-requests.js';

describe('resolveRouteMode', () => {
  it.each([
    [{}, 'browser'],
    [{ javascript: true }, 'browser'],
    [{ javascript: false }, 'http'],
    [{ mode: 'direct' as const, javascript: true }, 'direct'],
    [{ mode: 'http' as const, browser_actions: [{ type: 'click' as const, selector: '#a' }] }, 'browser'],
    [{ mode: 'residential' as const, debug_artifacts: true }, 'residential_browser'],
    [{ mode: 'http' as const, browser_actions: [] }, 'http'],
    [{ mode: 'auto' as const, debug_artifacts: true }, 'browser'],
  ])('%j -> %s', (body, expected) => {
    expect(resolveRouteMode(body)).toBe(expected);
  });
});

describe('requestIdFor', () => {
  const tenant = '7d0e0a36-4a3c-4b8e-9d76-1f1b5c0a2e11';
  it('derives the same uuid for the same tenant and key, different ones otherwise', () => {
    const a = requestIdFor(tenant, 'key-00000001');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(requestIdFor(tenant, 'key-00000001')).toBe(a);
    expect(requestIdFor(tenant, 'key-00000002')).not.toBe(a);
    expect(requestIdFor('11111111-1111-4111-8111-111111111111', 'key-00000001')).not.toBe(a);
  });
});

describe('inputHashOf', () => {
  it('ignores key order and undefined fields but not values', () => {
    expect(inputHashOf({ a: 1, b: { c: 2, d: undefined } })).toBe(inputHashOf({ b: { c: 2 }, a: 1 }));
    expect(inputHashOf({ a: 1 })).not.toBe(inputHashOf({ a: 2 }));
  });
});
