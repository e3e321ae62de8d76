import { randomUUID } from 'node:crypto';
import type { ConcurrencyCeiling } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../../deps.js';
import type { AuthenticatedTenant } from '../tenants/tenants.js';
import { applyRateVerdict, takeRate, type RatePolicy } from './tenant-limits.js';

/**
 * Admission limits of submissions, per tenant:
 *
 * 1. Rate: N submissions per window (GCRA in Redis, see redis-scripts.ts). Every submission that
 *    passed validation counts, replays included. Answered with RateLimit-Limit / -Remaining /
 *    -Reset / -Policy on every submission, and 429 RATE_LIMITED + Retry-After when refused.
 * 2. Concurrency: at most C non-terminal requests. The orchestrator, which owns requests, counts
 *    the tenant's non-terminal ones when it creates the request (the gateway passes the ceiling);
 *    admissions still in flight are counted from a Redis set, so
 *    two racing submissions cannot both take the last slot (a request is counted in the set until
 *    its create has returned, and by the orchestrator from its commit on: never by neither).
 *    Refused with 429 CONCURRENCY_LIMITED + Retry-After. A replay of an existing request under its
 *    Idempotency-Key is not a new request and is never refused for concurrency.
 *
 * Redis is an accelerator, not a source of truth: when it fails, admission fails open (no rate
 * limit, concurrency from the orchestrator's count alone), counted in
 * gateway_admission_limiter_errors_total and logged, so a Redis outage does not stop submissions.
 */

export interface EffectiveLimits {
  submissionsPerWindow: number;
  windowSeconds: number;
  maxConcurrentRequests: number;
}

export type SetHeader = (name: string, value: string) => void;

/** How long an in-flight admission counts if its gateway dies before releasing it. */
const TICKET_TTL_MS = 30_000;

export function effectiveLimits(deps: Pick<GatewayDeps, 'env'>, tenant: AuthenticatedTenant): EffectiveLimits {
  return {
    submissionsPerWindow: tenant.limits.submissionsPerWindow ?? deps.env.RATE_LIMIT_SUBMISSIONS,
    windowSeconds: tenant.limits.windowSeconds ?? deps.env.RATE_LIMIT_WINDOW_SECONDS,
    maxConcurrentRequests: tenant.limits.maxConcurrentRequests ?? deps.env.CONCURRENCY_LIMIT,
  };
}

const rateKey = (deps: Pick<GatewayDeps, 'env'>, tenantId: string) => `${deps.env.REDIS_KEY_PREFIX}rate:submissions:${tenantId}`;
const inflightKey = (deps: Pick<GatewayDeps, 'env'>, tenantId: string) => `${deps.env.REDIS_KEY_PREFIX}admissions:${tenantId}`;

export function limiterFailed(deps: Pick<GatewayDeps, 'log' | 'metrics'>, limiter: 'rate' | 'concurrency' | 'reads', err: unknown): void {
  deps.metrics
    .counter('admission_limiter_errors_total', 'Admission limiter calls that failed (Redis unavailable); admission failed open.', [
      'limiter',
    ] as const)
    .inc({ limiter });
  deps.log.warn({ err, limiter }, 'admission limiter unavailable, failing open');
}

function refused(deps: Pick<GatewayDeps, 'metrics'>, outcome: 'rate_limited' | 'concurrency_limited'): void {
  deps.metrics
    .counter('admissions_refused_total', 'Submissions refused by a per-tenant admission limit.', ['outcome'] as const)
    .inc({ outcome });
}

const submissionPolicy = (deps: Pick<GatewayDeps, 'env'>, tenant: AuthenticatedTenant, limits: EffectiveLimits): RatePolicy => ({
  key: rateKey(deps, tenant.tenantId),
  limit: limits.submissionsPerWindow,
  windowSeconds: limits.windowSeconds,
  what: 'submissions',
});

/** Take one unit of the tenant's submission rate, or throw RATE_LIMITED. Sets the RateLimit headers either way. */
export async function takeSubmissionRate(
  deps: Pick<GatewayDeps, 'env' | 'log' | 'metrics' | 'redis'>,
  tenant: AuthenticatedTenant,
  setHeader: SetHeader,
): Promise<void> {
  const policy = submissionPolicy(deps, tenant, effectiveLimits(deps, tenant));
  try {
    await takeRate(deps, policy, { setHeader }, (err) => limiterFailed(deps, 'rate', err));
  } catch (err) {
    if (err instanceof PublicError && err.code === 'RATE_LIMITED') refused(deps, 'rate_limited');
    throw err;
  }
}

/**
 * Admit one submission (limits 1 and 2 above) in one Redis round trip (the `admit` script): a unit
 * of the tenant's rate (RATE_LIMITED when none is left), then the ticket that counts this admission
 * in flight while `create` runs. `create` passes the ceiling to the orchestrator, which counts the
 * tenant's non-terminal requests and refuses with CONCURRENCY_LIMITED in the same call that creates
 * the request (a replay of an existing request is never refused). Redis down: both fail open.
 */
export async function withSubmissionAdmission<T>(
  deps: Pick<GatewayDeps, 'env' | 'log' | 'metrics' | 'redis'>,
  tenant: AuthenticatedTenant,
  setHeader: SetHeader,
  create: (ceiling: ConcurrencyCeiling) => Promise<T>,
): Promise<T> {
  const limits = effectiveLimits(deps, tenant);
  const policy = submissionPolicy(deps, tenant, limits);
  const key = inflightKey(deps, tenant.tenantId);
  const ticket = randomUUID();
  let verdict: number[] | undefined;
  try {
    verdict = (await deps.redis.admit(policy.key, key, policy.limit, policy.windowSeconds * 1000, ticket, TICKET_TTL_MS)).map(Number);
  } catch (err) {
    limiterFailed(deps, 'rate', err);
    limiterFailed(deps, 'concurrency', err);
  }
  if (verdict) {
    try {
      applyRateVerdict(policy, { setHeader }, verdict);
    } catch (err) {
      if (err instanceof PublicError && err.code === 'RATE_LIMITED') refused(deps, 'rate_limited');
      throw err; // refused by the rate: the script added no ticket
    }
  }
  const inflight = verdict ? verdict[4]! : 1;
  try {
    return await create({ limit: limits.maxConcurrentRequests, others_in_flight: Math.max(0, inflight - 1) });
  } catch (err) {
    if (err instanceof PublicError && err.code === 'CONCURRENCY_LIMITED') refused(deps, 'concurrency_limited');
    throw err;
  } finally {
    if (verdict) {
      try {
        await deps.redis.zrem(key, ticket);
      } catch (err) {
        limiterFailed(deps, 'concurrency', err);
      }
    }
  }
}
