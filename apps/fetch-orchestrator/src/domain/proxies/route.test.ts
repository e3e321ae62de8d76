import { describe, expect, it } from '@jest/globals';
import { parseProxyUrl } from './exits.js';
import type { ProxyPool } from './pool.js';
import { planRoute } from './route.js';

/** The route table of docs/api.md ("Proxy networks"), row by row. */
const poolWith = (...classes: string[]) => ({ has: (c: string) => classes.includes(c) }) as unknown as ProxyPool;

describe('planRoute', () => {
  it.each([
    // [network class, proxy, geo, datacenter exits configured?, expected]
    ['datacenter', undefined, undefined, false, { kind: 'direct' }],
    ['datacenter', undefined, undefined, true, { kind: 'proxy', networkClass: 'datacenter', country: null }],
    ['datacenter', 'random', undefined, false, { kind: 'proxy', networkClass: 'datacenter', country: null }],
    ['datacenter', 'off', undefined, true, { kind: 'direct' }],
    ['datacenter', undefined, 'de', false, { kind: 'proxy', networkClass: 'datacenter', country: 'DE' }],
    ['residential', undefined, undefined, false, { kind: 'proxy', networkClass: 'residential', country: null }],
    ['premium', 'random', 'FR', false, { kind: 'proxy', networkClass: 'premium', country: 'FR' }],
  ] as const)('%s with proxy %s and geo %s (datacenter exits: %s) -> %j', (proxyType, proxy, geo, dcExits, expected) => {
    const plan = planRoute(poolWith(...(dcExits ? ['datacenter'] : [])), {
      proxyType,
      options: { ...(proxy ? { proxy } : {}), ...(geo ? { geo_country: geo } : {}) },
    });
    expect(plan).toEqual(expected);
  });

  it('treats a missing proxy_type as datacenter', () => {
    expect(planRoute(poolWith(), { proxyType: null, options: {} })).toEqual({ kind: 'direct' });
  });

  it('refuses what proxy off cannot carry: a proxy network class, or a country to verify', () => {
    expect(planRoute(poolWith('residential'), { proxyType: 'residential', options: { proxy: 'off' } })).toMatchObject({
      kind: 'refused',
      failure: { code: 'PROXY_UNAVAILABLE' },
    });
    expect(planRoute(poolWith('datacenter'), { proxyType: 'datacenter', options: { proxy: 'off', geo_country: 'DE' } })).toMatchObject({
      kind: 'refused',
      failure: { code: 'PROXY_GEO_VERIFICATION_FAILED' },
    });
  });
});

describe('parseProxyUrl', () => {
  it('takes an http(s) CONNECT proxy with credentials', () => {
    const url = parseProxyUrl('http://user:p%40ss@gate.example:7000');
    expect([url.hostname, url.port, decodeURIComponent(url.password)]).toEqual(['gate.example', '7000', 'p@ss']);
    expect(parseProxyUrl('https://gate.example:443').protocol).toBe('https:');
  });

  it.each(['socks5://u:secret@h:1080', 'http://u:secret@h:80/path', 'http://u:secret@h:80/?q=1', 'not a url secret'])(
    'refuses %s without repeating it',
    (raw) => {
      expect(() => parseProxyUrl(raw)).toThrow();
      try {
        parseProxyUrl(raw);
      } catch (err) {
        expect((err as Error).message).not.toContain('secret');
      }
    },
  );
});
