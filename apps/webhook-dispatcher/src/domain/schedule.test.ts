import { describe, expect, it } from '@jest/globals';
import { MAX_ATTEMPTS, parseRetryAfter, retryDelayMs, RETRY_DELAYS_MS } from './schedule.js';

describe('the retry schedule', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the first attempt, then exhausted (8 attempts)', () => {
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect([1, 2, 3, 4, 5, 6, 7].map((s) => retryDelayMs(s, null, () => 0.5))).toEqual([...RETRY_DELAYS_MS]);
    expect(retryDelayMs(8, null)).toBeNull();
    expect(retryDelayMs(8, 1_000)).toBeNull();
  });

  it('jitters each delay by at most 10 % either way', () => {
    expect(retryDelayMs(1, null, () => 0)).toBe(4_500);
    expect(retryDelayMs(1, null, () => 0.999999)).toBe(5_500);
    expect(retryDelayMs(4, null, () => 0)).toBe(0.9 * 7_200_000);
  });

  it('honours a later Retry-After (capped at 24 h), never an earlier one', () => {
    expect(retryDelayMs(1, 3_600_000, () => 0.5)).toBe(3_600_000);
    expect(retryDelayMs(2, 1_000, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(1, 10 * 86_400_000, () => 0.5)).toBe(86_400_000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 10:05:00 GMT', now)).toBe(300_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});
