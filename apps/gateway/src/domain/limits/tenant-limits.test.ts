import { describe, expect, it } from '@jest/globals';
import { PublicError } from '@wdr/kit/errors';
import { ConcurrencyGate, reportLimit } from './tenant-limits.js';

/** Headers as a response keeps them (set and read back). */
function headers() {
  const h = new Map<string, string>();
  return { h, sink: { setHeader: (k: string, v: string) => h.set(k, v), getHeader: (k: string) => h.get(k) } };
}

describe('RateLimit headers of several limits', () => {
  it('lists every policy and reports the limit closest to exhaustion, or the one that refused', () => {
    const { h, sink } = headers();
    reportLimit(sink, { limit: 100, remaining: 40, resetSeconds: 30, policy: '100;w=60;name="reads"' });
    reportLimit(sink, { limit: 16, remaining: 15, policy: '16;w=0;name="concurrent-reads"' });
    expect(Object.fromEntries(h)).toEqual({
      'RateLimit-Policy': '100;w=60;name="reads", 16;w=0;name="concurrent-reads"',
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '40',
      'RateLimit-Reset': '30',
    });
    // 1 of 2 left (half) is further from exhaustion than 40 of 100: the rate stays reported.
    reportLimit(sink, { limit: 2, remaining: 1, policy: '2;w=0;name="streams"' });
    expect([h.get('RateLimit-Limit'), h.get('RateLimit-Remaining'), h.get('RateLimit-Reset')]).toEqual(['100', '40', '30']);
    reportLimit(sink, { limit: 4, remaining: 1, policy: '4;w=0;name="y"' });
    expect([h.get('RateLimit-Limit'), h.get('RateLimit-Remaining'), h.get('RateLimit-Reset')]).toEqual(['4', '1', '1']);
    // A refusal reports the refusing limit whatever the others say.
    reportLimit(sink, { limit: 50, remaining: 0, resetSeconds: 9, policy: '50;w=60;name="x"' }, true);
    expect([h.get('RateLimit-Limit'), h.get('RateLimit-Remaining'), h.get('RateLimit-Reset')]).toEqual(['50', '0', '9']);
    expect(h.get('RateLimit-Policy')).toBe(
      '100;w=60;name="reads", 16;w=0;name="concurrent-reads", 2;w=0;name="streams", 4;w=0;name="y", 50;w=60;name="x"',
    );
  });
});

describe('ConcurrencyGate', () => {
  it('admits cap places per tenant, refuses the next with CONCURRENCY_LIMITED, and takes one again once released', () => {
    const gate = new ConcurrencyGate('concurrent-reads', 'reads in progress');
    const a = [gate.enter('a', 2, headers().sink), gate.enter('a', 2, headers().sink)];
    const { h, sink } = headers();
    let refused: unknown;
    try {
      gate.enter('a', 2, sink);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(PublicError);
    expect((refused as PublicError).code).toBe('CONCURRENCY_LIMITED');
    expect((refused as PublicError).retryAfterSeconds).toBe(1);
    expect([h.get('RateLimit-Limit'), h.get('RateLimit-Remaining'), h.get('RateLimit-Policy')]).toEqual([
      '2',
      '0',
      '2;w=0;name="concurrent-reads"',
    ]);
    // Another tenant has its own places.
    gate.enter('b', 2, headers().sink);
    // Releasing twice gives back one place.
    a[0]!();
    a[0]!();
    expect(gate.held('a')).toBe(1);
    gate.enter('a', 2, headers().sink);
    expect(() => gate.enter('a', 2, headers().sink)).toThrow(PublicError);
  });
});
