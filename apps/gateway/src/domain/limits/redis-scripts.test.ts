import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { PublicError } from '@wdr/kit/errors';
import { createLogger } from '@wdr/kit/log';
import { createMetrics } from '@wdr/kit/metrics';
import type { GatewayDeps } from '../../deps.js';
import { loadGatewayEnv } from '../../env.js';
import { takeSubmissionRate } from './admission.js';
import { withLimiterScripts } from './redis-scripts.js';

/** The Lua scripts against the real Redis of the stack, each test on its own keys. */
const redis = withLimiterScripts(new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'));
const key = () => `wdr:test:${randomUUID()}`;

afterAll(async () => {
  await redis.quit();
});

describe('gcra', () => {
  it('allows a burst of exactly the quota, counting down, then refuses with a retry time', async () => {
    const k = key();
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push(await redis.gcra(k, 5, 10_000));
    expect(seen.map(([allowed, remaining]) => [allowed, remaining])).toEqual([
      [1, 4],
      [1, 3],
      [1, 2],
      [1, 1],
      [1, 0],
    ]);
    const [allowed, remaining, retryAfterMs, resetMs] = await redis.gcra(k, 5, 10_000);
    expect([allowed, remaining]).toEqual([0, 0]);
    // One slot frees every window/limit = 2 s; the whole quota after ~10 s.
    expect(retryAfterMs).toBeGreaterThan(1_500);
    expect(retryAfterMs).toBeLessThanOrEqual(2_000);
    expect(resetMs).toBeGreaterThan(9_000);
    expect(resetMs).toBeLessThanOrEqual(10_000);
    expect(await redis.pttl(k)).toBeGreaterThan(0);
  });

  it('frees slots as time passes', async () => {
    const k = key();
    expect((await redis.gcra(k, 2, 400))[0]).toBe(1);
    expect((await redis.gcra(k, 2, 400))[0]).toBe(1);
    expect((await redis.gcra(k, 2, 400))[0]).toBe(0);
    await new Promise((r) => setTimeout(r, 250));
    expect((await redis.gcra(k, 2, 400))[0]).toBe(1);
  });

  it('keeps tenants apart', async () => {
    const a = key();
    const b = key();
    await redis.gcra(a, 1, 60_000);
    expect((await redis.gcra(a, 1, 60_000))[0]).toBe(0);
    expect((await redis.gcra(b, 1, 60_000))[0]).toBe(1);
  });
});

describe('admissionEnter', () => {
  it('counts admissions in flight and forgets expired ones', async () => {
    const k = key();
    expect(await redis.admissionEnter(k, 'a', 60_000)).toBe(1);
    expect(await redis.admissionEnter(k, 'b', 60_000)).toBe(2);
    await redis.zrem(k, 'a');
    expect(await redis.admissionEnter(k, 'c', 100)).toBe(2);
    await new Promise((r) => setTimeout(r, 150));
    // 'b' (60 s) is still in flight, 'c' has expired.
    expect(await redis.admissionEnter(k, 'd', 60_000)).toBe(2);
  });
});

describe('takeSubmissionRate', () => {
  const env = loadGatewayEnv({
    DATABASE_URL: 'postgresql://unused@127.0.0.1/unused',
    API_KEY_PEPPER: 'p'.repeat(16),
    LOG_LEVEL: 'silent',
    REDIS_KEY_PREFIX: `wdr:test:${randomUUID()}:`,
  });
  const deps = (r: GatewayDeps['redis']): Pick<GatewayDeps, 'env' | 'redis' | 'metrics' | 'log'> => ({
    env,
    redis: r,
    metrics: createMetrics('gateway'),
    log: createLogger('gateway', 'silent'),
  });
  const tenant = { tenantId: randomUUID(), credential: 'api_key' as const, limits: { submissionsPerWindow: 2, windowSeconds: 60 } };

  it('sets the RateLimit headers and refuses with RATE_LIMITED and Retry-After', async () => {
    const headers = new Map<string, string>();
    const set = (n: string, v: string) => headers.set(n, v);
    await takeSubmissionRate(deps(redis), tenant, set);
    expect(Object.fromEntries(headers)).toEqual({
      'RateLimit-Limit': '2',
      'RateLimit-Remaining': '1',
      'RateLimit-Reset': '30',
      'RateLimit-Policy': '2;w=60',
    });
    await takeSubmissionRate(deps(redis), tenant, set);
    const refused = await takeSubmissionRate(deps(redis), tenant, set).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PublicError);
    expect((refused as PublicError).code).toBe('RATE_LIMITED');
    expect((refused as PublicError).retryAfterSeconds).toBe(30);
    expect(headers.get('RateLimit-Remaining')).toBe('0');
  });

  it('fails open when Redis is unreachable', async () => {
    const dead = withLimiterScripts(
      new Redis('redis://127.0.0.1:1', { lazyConnect: true, commandTimeout: 300, maxRetriesPerRequest: 0, retryStrategy: () => null }),
    );
    dead.on('error', () => undefined);
    const headers = new Map<string, string>();
    const d = deps(dead);
    for (let i = 0; i < 5; i++) await takeSubmissionRate(d, tenant, (n, v) => headers.set(n, v));
    expect(headers.size).toBe(0);
    expect(await d.metrics.registry.getSingleMetricAsString('gateway_admission_limiter_errors_total')).toMatch(/limiter="rate".*} 5/);
    dead.disconnect();
  });
});
