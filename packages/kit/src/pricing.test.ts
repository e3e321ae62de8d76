import { describe, expect, it } from '@jest/globals';
import { admissionOf, costOf, networkClassOf, priceBookOf, terminalStageOf, trafficTokens, type Tariff } from './pricing.js';

const rows = (list: [string, Tariff, number, boolean?][]) =>
  list.map(([network_class, tariff, tokens, override]) => ({ network_class, tariff, tokens, override: override ?? false }));
const standard = priceBookOf(
  'standard',
  2,
  rows([
    ['datacenter', 'http', 1],
    ['datacenter', 'browser', 5],
    ['residential', 'http', 10],
    ['residential', 'browser', 25],
    ['any', 'captcha', 10],
    ['datacenter', 'traffic_gib', 200],
    ['residential', 'traffic_gib', 2000],
  ]),
);
const plan = { guardedPricing: false, worstCaseCaptchaSolves: 1, worstCaseTrafficBytes: 10n << 20n };
const MIB = 1n << 20n;

describe('pricing version 2', () => {
  it('prices each mode by network class and tariff', () => {
    const base = (route_mode: string, proxy_type: string | null = null) =>
      admissionOf(standard, plan, { route_mode, proxy_type, max_credits: null }).base;
    expect(base('direct')).toBe(1);
    expect(base('http', 'residential')).toBe(10);
    expect(base('browser')).toBe(5);
    expect(base('browser', 'residential')).toBe(25);
    expect(base('residential', 'datacenter')).toBe(10);
    expect(base('residential_browser')).toBe(25);
    expect(base('auto')).toBe(5); // held at its dearest stage, billed at the one it ends in
    expect(terminalStageOf('auto', undefined)).toBe('http');
    expect(terminalStageOf('auto', 'browser')).toBe('browser');
    expect(networkClassOf('residential_browser', 'premium')).toBe('residential');
  });

  it('refuses premium where the plan prices nothing, and applies plan overrides over the version', () => {
    expect(() => admissionOf(standard, plan, { route_mode: 'http', proxy_type: 'premium', max_credits: null })).toThrow('not priced');
    const business = priceBookOf(
      'business',
      2,
      rows([
        ['datacenter', 'http', 1],
        ['datacenter', 'http', 2, true],
        ['premium', 'http', 50, true],
      ]),
    );
    expect(admissionOf(business, plan, { route_mode: 'http', proxy_type: 'premium', max_credits: null }).base).toBe(50);
    expect(admissionOf(business, plan, { route_mode: 'http', proxy_type: null, max_credits: null }).base).toBe(2);
  });

  it('takes the ceiling as the floor check (cheapest stage) and the cap of the hold', () => {
    expect(() => admissionOf(standard, plan, { route_mode: 'browser', proxy_type: null, max_credits: 4 })).toThrow(
      'below the base price of 5',
    );
    expect(admissionOf(standard, plan, { route_mode: 'auto', proxy_type: null, max_credits: 3 })).toMatchObject({
      minBase: 1,
      base: 3,
      hold: 3,
    });
  });

  it('holds the worst case under the guarded policy: dearest stage + CAPTCHA and traffic allowances, capped', () => {
    const guarded = { ...plan, guardedPricing: true };
    expect(admissionOf(standard, guarded, { route_mode: 'auto', proxy_type: null, max_credits: null })).toMatchObject({
      estimate: 1,
      worstCase: 5 + 10 + 2,
      hold: 17,
    });
    expect(admissionOf(standard, guarded, { route_mode: 'residential', proxy_type: null, max_credits: null })).toMatchObject({
      worstCase: 10 + 10 + 20,
    });
    expect(admissionOf(standard, guarded, { route_mode: 'http', proxy_type: null, max_credits: 6 })).toMatchObject({ base: 1, hold: 6 });
  });

  it('rounds traffic up per request and cuts deferred items first at the ceiling', () => {
    expect(trafficTokens(0n, 200)).toBe(0n);
    expect(trafficTokens(1n, 200)).toBe(1n);
    expect(trafficTokens(1024n * MIB, 200)).toBe(200n);
    expect(trafficTokens(1024n * MIB + 1n, 200)).toBe(201n);
    expect(costOf({ base: 1n, captcha: 10n, traffic: 3n }, null)).toEqual({ base: 1n, captcha: 10n, traffic: 3n, total: 14n });
    expect(costOf({ base: 1n, captcha: 10n, traffic: 3n }, 5)).toEqual({ base: 1n, captcha: 4n, traffic: 0n, total: 5n });
    expect(costOf({ base: 5n, captcha: 0n, traffic: 0n }, 3)).toEqual({ base: 3n, captcha: 0n, traffic: 0n, total: 3n });
  });
});
