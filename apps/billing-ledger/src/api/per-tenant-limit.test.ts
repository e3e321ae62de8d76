import { describe, expect, it } from '@jest/globals';
import { PerKeyLimit } from './per-tenant-limit.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PerKeyLimit', () => {
  it('runs at most perKey calls of one key at once, in arrival order, and other keys beside them', async () => {
    const limit = new PerKeyLimit(2);
    let active = 0;
    let most = 0;
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const call = (key: string, n: number) =>
      limit.run(key, async () => {
        active++;
        most = Math.max(most, active);
        order.push(n);
        await new Promise<void>((resolve) => releases.push(resolve));
        active--;
        return n;
      });
    const a = [1, 2, 3, 4, 5].map((n) => call('a', n));
    const b = call('b', 99);
    await tick();
    expect(order).toEqual([1, 2, 99]); // two of 'a' and 'b' alongside
    while (releases.length > 0) {
      releases.shift()!();
      await tick();
      await tick();
    }
    expect(await Promise.all(a)).toEqual([1, 2, 3, 4, 5]);
    expect(await b).toBe(99);
    expect(order).toEqual([1, 2, 99, 3, 4, 5]);
    expect(most).toBe(3); // two of 'a' plus 'b'
    expect(limit.keys).toBe(0);
  });

  it('passes the slot on when a call fails', async () => {
    const limit = new PerKeyLimit(1);
    const failed = limit.run('a', () => Promise.reject(new Error('boom')));
    const next = limit.run('a', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ran');
    expect(limit.keys).toBe(0);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new PerKeyLimit(0)).toThrow();
    expect(() => new PerKeyLimit(1.5)).toThrow();
  });
});
