import type { GatewayDeps } from '../../deps.js';
import type { AuthenticatedTenant } from '../tenants/tenants.js';
import { limiterFailed } from './admission.js';
import { ConcurrencyGate, takeRate, type LimitHeaderSink } from './tenant-limits.js';

/**
 * Read limits of the data API, per tenant (issue 21): every GET under `/api/v1/data/` (details,
 * lists, events, results, event streams, balances) takes one unit of the tenant's read rate
 * (READ_RATE_LIMIT per READ_RATE_WINDOW_SECONDS, GCRA in Redis, its own budget beside the
 * submissions'); at most READ_CONCURRENCY_LIMIT of them run at once per tenant on one replica (held
 * until the answer is sent: a result streams its bytes meanwhile); event streams are held open and
 * have their own cap (SSE_MAX_STREAMS_PER_TENANT). A tenant_limits row overrides the rate and the
 * concurrency. Redis unavailable: the rate fails open (counted and logged), like submissions.
 */
export interface ReadLimits {
  readsPerWindow: number;
  windowSeconds: number;
  maxConcurrentReads: number;
}

export function readLimitsOf(deps: Pick<GatewayDeps, 'env'>, tenant: AuthenticatedTenant): ReadLimits {
  return {
    readsPerWindow: tenant.limits.readsPerWindow ?? deps.env.READ_RATE_LIMIT,
    windowSeconds: deps.env.READ_RATE_WINDOW_SECONDS,
    maxConcurrentReads: tenant.limits.maxConcurrentReads ?? deps.env.READ_CONCURRENCY_LIMIT,
  };
}

/** One unit of the tenant's read rate, or RATE_LIMITED; the RateLimit headers either way. */
export async function takeReadRate(
  deps: Pick<GatewayDeps, 'env' | 'log' | 'metrics' | 'redis'>,
  tenant: AuthenticatedTenant,
  sink: LimitHeaderSink,
): Promise<void> {
  const limits = readLimitsOf(deps, tenant);
  await takeRate(
    deps,
    {
      key: `${deps.env.REDIS_KEY_PREFIX}rate:reads:${tenant.tenantId}`,
      limit: limits.readsPerWindow,
      windowSeconds: limits.windowSeconds,
      name: 'reads',
      what: 'reads',
    },
    sink,
    (err) => limiterFailed(deps, 'reads', err),
  );
}

/** Reads of the tenant in progress on this replica. */
export const concurrentReads = () => new ConcurrencyGate('concurrent-reads', 'reads in progress');
/** Event streams of the tenant open on this replica. */
export const openStreams = () => new ConcurrencyGate('streams', 'open event streams');
