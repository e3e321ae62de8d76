import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../../deps.js';

/**
 * The per-tenant limits' one implementation (submissions, reads, event streams): a rate in Redis
 * (GCRA, shared by every replica) and a concurrency gate (in this replica's memory), each answered
 * with the IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers) and refused with 429
 * plus Retry-After.
 *
 * Several limits may apply to one answer (a read's rate and its concurrency, an event stream's rate
 * and its stream cap): `RateLimit-Policy` lists each (`<quota>;w=<window>[;name="…"]`), and
 * `RateLimit-Limit` / `-Remaining` / `-Reset` are those of the limit closest to exhaustion (the
 * smallest share of its quota left; the refused one on a refusal). A concurrency limit's Reset is 1.
 */

/** Where the headers go: an Express response (which can read back what was set) or a plain setter. */
export interface LimitHeaderSink {
  setHeader(name: string, value: string): unknown;
  getHeader?(name: string): unknown;
}

interface LimitReport {
  limit: number;
  remaining: number;
  /** Seconds until the quota is whole again; absent for a concurrency limit. */
  resetSeconds?: number;
  policy: string;
}

/** Adds one limit's report to the answer's RateLimit headers (see above). */
export function reportLimit(sink: LimitHeaderSink, r: LimitReport, refused = false): void {
  const policies = sink.getHeader?.('RateLimit-Policy');
  const share = (remaining: number, limit: number) => Math.max(0, remaining) / limit;
  const current = share(Number(sink.getHeader?.('RateLimit-Remaining')), Number(sink.getHeader?.('RateLimit-Limit')));
  sink.setHeader('RateLimit-Policy', typeof policies === 'string' && policies.length > 0 ? `${policies}, ${r.policy}` : r.policy);
  // Another limit already reported is closer to exhaustion (a smaller share left): it stays.
  if (!refused && policies !== undefined && Number.isFinite(current) && current <= share(r.remaining, r.limit)) return;
  sink.setHeader('RateLimit-Limit', String(r.limit));
  sink.setHeader('RateLimit-Remaining', String(Math.max(0, r.remaining)));
  // A concurrency limit has no window: a place may free at any moment (Retry-After: 1 says when to look).
  sink.setHeader('RateLimit-Reset', String(r.resetSeconds !== undefined ? Math.max(0, r.resetSeconds) : 1));
}

export interface RatePolicy {
  /** Redis key of this tenant's budget (one per limit and tenant). */
  key: string;
  limit: number;
  windowSeconds: number;
  /** Named in RateLimit-Policy (`name="reads"`); the submissions' policy has none (as it always had). */
  name?: string;
  /** The refusal's message: "Too many <what>". */
  what: string;
}

/**
 * Takes one unit of a tenant's rate, or throws RATE_LIMITED (Retry-After: seconds until one unit is
 * free). Redis down: the call is let through (fail open) and `unavailable` is told why.
 */
export async function takeRate(
  deps: Pick<GatewayDeps, 'redis'>,
  p: RatePolicy,
  sink: LimitHeaderSink,
  unavailable: (err: unknown) => void,
): Promise<void> {
  let verdict: [number, number, number, number];
  try {
    verdict = await deps.redis.gcra(p.key, p.limit, p.windowSeconds * 1000);
  } catch (err) {
    unavailable(err);
    return;
  }
  applyRateVerdict(p, sink, verdict);
}

/** GCRA's answer ({allowed, remaining, retry_after_ms, reset_ms}) as headers, or RATE_LIMITED (see takeRate). */
export function applyRateVerdict(p: RatePolicy, sink: LimitHeaderSink, verdict: readonly unknown[]): void {
  const [allowed, remaining, retryAfterMs, resetMs] = verdict.map(Number) as [number, number, number, number];
  const policy = `${p.limit};w=${p.windowSeconds}${p.name !== undefined ? `;name="${p.name}"` : ''}`;
  reportLimit(sink, { limit: p.limit, remaining, resetSeconds: Math.ceil(resetMs / 1000), policy }, allowed !== 1);
  if (allowed === 1) return;
  throw new PublicError('RATE_LIMITED', `Too many ${p.what}: at most ${p.limit} per ${p.windowSeconds} s.`, {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  });
}

/**
 * At most `cap` of a tenant's operations at once on this replica (each holds a connection and
 * memory here: an event stream, a result being sent). `enter` takes a place or throws
 * CONCURRENCY_LIMITED (Retry-After: 1); the returned release gives it back (idempotent).
 */
export class ConcurrencyGate {
  private readonly open = new Map<string, number>();

  /** `name`: in RateLimit-Policy (`<cap>;w=0;name="<name>"`); `what`: the refusal's message. */
  constructor(
    private readonly name: string,
    private readonly what: string,
  ) {}

  enter(tenantId: string, cap: number, sink: LimitHeaderSink): () => void {
    const n = this.open.get(tenantId) ?? 0;
    const refused = n >= cap;
    reportLimit(sink, { limit: cap, remaining: cap - n - 1, policy: `${cap};w=0;name="${this.name}"` }, refused);
    if (refused) throw new PublicError('CONCURRENCY_LIMITED', `Too many ${this.what}: at most ${cap} at once.`, { retryAfterSeconds: 1 });
    this.open.set(tenantId, n + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (this.open.get(tenantId) ?? 1) - 1;
      if (left <= 0) this.open.delete(tenantId);
      else this.open.set(tenantId, left);
    };
  }

  /** Places the tenant holds now (tests, metrics). */
  held(tenantId: string): number {
    return this.open.get(tenantId) ?? 0;
  }
}
