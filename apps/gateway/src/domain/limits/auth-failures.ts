import type { GatewayDeps } from '../../deps.js';

/** Addresses remembered as throttled by one replica, at most this many (the oldest go first). */
const MAX_BLOCKED = 10_000;

/**
 * Failed authentication, throttled per client address: every refused credential takes one unit of
 * the address's budget (AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_SECONDS, GCRA in Redis, shared by
 * every replica); an address past it is answered 429 with Retry-After, before any credential of it
 * is looked up, until the budget has a unit again. Which address counts is Express's `req.ip`, so
 * TRUSTED_PROXY_HOPS decides (0: the connection's peer; n: the n-th address from the right of
 * X-Forwarded-For). Redis unavailable: failing open, like the admission limits.
 */
export class AuthFailureThrottle {
  private readonly blockedUntil = new Map<string, number>();

  constructor(private readonly deps: Pick<GatewayDeps, 'env' | 'log' | 'metrics' | 'redis'>) {}

  /** Seconds until this address may try again, or undefined when it may now. */
  retryAfterSeconds(address: string): number | undefined {
    const until = this.blockedUntil.get(address);
    if (until === undefined) return undefined;
    const left = until - Date.now();
    if (left <= 0) {
      this.blockedUntil.delete(address);
      return undefined;
    }
    return Math.max(1, Math.ceil(left / 1000));
  }

  /** A credential of this address was refused: count it; the seconds to wait when the budget is now spent. */
  async failed(address: string): Promise<number | undefined> {
    const { env } = this.deps;
    let verdict: number[];
    try {
      verdict = (
        await this.deps.redis.gcra(
          `${env.REDIS_KEY_PREFIX}auth-failures:${address}`,
          env.AUTH_FAILURE_LIMIT,
          env.AUTH_FAILURE_WINDOW_SECONDS * 1000,
        )
      ).map(Number);
    } catch (err) {
      this.deps.log.warn({ err }, 'authentication failure throttle unavailable, failing open');
      return undefined;
    }
    const [allowed, , retryAfterMs] = verdict as [number, number, number, number];
    if (allowed === 1) return undefined;
    this.deps.metrics
      .counter('auth_failures_throttled_total', 'Addresses throttled after too many failed authentications.', [] as const)
      .inc();
    if (this.blockedUntil.size >= MAX_BLOCKED) {
      const oldest = this.blockedUntil.keys().next();
      if (!oldest.done) this.blockedUntil.delete(oldest.value);
    }
    const waitMs = Math.max(1_000, retryAfterMs);
    this.blockedUntil.set(address, Date.now() + waitMs);
    return Math.ceil(waitMs / 1000);
  }
}
