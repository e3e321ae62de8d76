import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { PublicError } from '@wdr/kit/errors';
import { createLogger } from '@wdr/kit/log';
import { createMetrics } from '@wdr/kit/metrics';
import type { GatewayDeps } from '../../deps.js';
import { loadGatewayEnv } from '../../env.js';
import { takeSubmissionRate, withSubmissionAdmission } from './admission.js';
import { withLimiterScripts } from './redis-scripts.js';

/** The Lua scripts against the real Redis of the stack, each test on its own keys. */
const redis = withLimiterScripts(new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'));
const key = () => `wdr:test:${randomUUID()}`;

/** The limiter functions' dependencies, on `r` (metrics of their own each time). */
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

describe('admit', () => {
  it('takes a rate unit and a ticket together, counting admissions in flight and forgetting expired ones', async () => {
    const [rate, inflight] = [key(), key()];
    expect(await redis.admit(rate, inflight, 10, 60_000, 'a', 60_000)).toEqual([1, 9, 0, 6000, 1]);
    expect((await redis.admit(rate, inflight, 10, 60_000, 'b', 60_000))[4]).toBe(2);
    await redis.zrem(inflight, 'a');
    expect((await redis.admit(rate, inflight, 10, 60_000, 'c', 100))[4]).toBe(2);
    await new Promise((r) => setTimeout(r, 150));
    // 'b' (60 s) is still in flight, 'c' has expired.
    expect((await redis.admit(rate, inflight, 10, 60_000, 'd', 60_000))[4]).toBe(2);
    expect(await redis.pttl(inflight)).toBeGreaterThan(59_000);
  });

  it('adds no ticket when the rate refuses', async () => {
    const [rate, inflight] = [key(), key()];
    expect((await redis.admit(rate, inflight, 1, 60_000, 'a', 60_000))[0]).toBe(1);
    const [allowed, remaining, retryAfterMs, , count] = await redis.admit(rate, inflight, 1, 60_000, 'b', 60_000);
    expect([allowed, remaining, count]).toEqual([0, 0, 0]);
    expect(retryAfterMs).toBeGreaterThan(59_000);
    expect(await redis.zrange(inflight, '0', '-1')).toEqual(['a']);
  });
});

describe('takeSubmissionRate', () => {
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

describe('withSubmissionAdmission', () => {
  const tenantOf = (limits: { submissionsPerWindow: number; maxConcurrentRequests?: number }) => ({
    tenantId: randomUUID(),
    credential: 'api_key' as const,
    limits: { windowSeconds: 60, ...limits },
  });
  const inflightOf = (tenantId: string) => redis.zcard(`${env.REDIS_KEY_PREFIX}admissions:${tenantId}`);

  it('passes the ceiling with the admissions in flight beside this one, and gives its ticket back', async () => {
    const tenant = tenantOf({ submissionsPerWindow: 10, maxConcurrentRequests: 5 });
    const headers = new Map<string, string>();
    const d = deps(redis);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = withSubmissionAdmission(
      d,
      tenant,
      (n, v) => headers.set(n, v),
      async (ceiling) => {
        await held;
        return ceiling;
      },
    );
    await new Promise((r) => setTimeout(r, 50));
    const second = await withSubmissionAdmission(
      d,
      tenant,
      () => undefined,
      async (ceiling) => ({ ceiling, inflight: await inflightOf(tenant.tenantId) }),
    );
    expect(second).toEqual({ ceiling: { limit: 5, others_in_flight: 1 }, inflight: 2 });
    release();
    expect(await first).toEqual({ limit: 5, others_in_flight: 0 });
    expect(headers.get('RateLimit-Remaining')).toBe('9');
    expect(await inflightOf(tenant.tenantId)).toBe(0);
  });

  it('refuses with RATE_LIMITED without creating anything or leaving a ticket', async () => {
    const tenant = tenantOf({ submissionsPerWindow: 1 });
    const d = deps(redis);
    let created = 0;
    await withSubmissionAdmission(
      d,
      tenant,
      () => undefined,
      async () => created++,
    );
    const refused = await withSubmissionAdmission(
      d,
      tenant,
      () => undefined,
      async () => created++,
    ).catch((e: unknown) => e);
    expect((refused as PublicError).code).toBe('RATE_LIMITED');
    expect(created).toBe(1);
    expect(await inflightOf(tenant.tenantId)).toBe(0);
    expect(await d.metrics.registry.getSingleMetricAsString('gateway_admissions_refused_total')).toMatch(/outcome="rate_limited"[^}]*} 1/);
  });

  it('gives the ticket back when create fails', async () => {
    const tenant = tenantOf({ submissionsPerWindow: 10 });
    const err = await withSubmissionAdmission(
      deps(redis),
      tenant,
      () => undefined,
      async () => {
        throw new Error('orchestrator down');
      },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('orchestrator down');
    expect(await inflightOf(tenant.tenantId)).toBe(0);
  });

  it('fails open, rate and concurrency, when Redis is unreachable', async () => {
    const dead = withLimiterScripts(
      new Redis('redis://127.0.0.1:1', { lazyConnect: true, commandTimeout: 300, maxRetriesPerRequest: 0, retryStrategy: () => null }),
    );
    dead.on('error', () => undefined);
    const d = deps(dead);
    const tenant = tenantOf({ submissionsPerWindow: 1, maxConcurrentRequests: 3 });
    for (let i = 0; i < 3; i++)
      expect(
        await withSubmissionAdmission(
          d,
          tenant,
          () => undefined,
          async (c) => c,
        ),
      ).toEqual({ limit: 3, others_in_flight: 0 });
    const text = await d.metrics.registry.getSingleMetricAsString('gateway_admission_limiter_errors_total');
    expect(text).toMatch(/limiter="rate".*} 3/);
    expect(text).toMatch(/limiter="concurrency".*} 3/);
    dead.disconnect();
  });
});
