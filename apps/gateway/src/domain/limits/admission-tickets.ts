import type { LimiterRedis } from './redis-scripts.js';

/** How long a ticket given back waits for an admission of its tenant to ride with (AdmissionTickets). */
export const RELEASE_DELAY_MS = 5;
/** At most this many given-back tickets ride with one admission (arguments of one script call). */
export const MAX_RIDING_TICKETS = 256;

/**
 * The admission tickets this gateway has given back and not yet removed from Redis. A ticket given
 * back rides with this gateway's next admission of the same tenant (the `admit` script removes the
 * tenant's given-back tickets before it counts), or, when none comes within RELEASE_DELAY_MS, goes
 * in one pipeline with every other tenant's then. So a busy tenant's submission is one Redis
 * exchange instead of two (the removal was a round trip of its own, on the submission's answer
 * path), and this gateway's counts stay exact: the only count of a tenant's set this gateway makes
 * is that tenant's admit, which removes them first. Another replica may count a ticket given back
 * for RELEASE_DELAY_MS longer: more admissions in flight than there are, never fewer. A removal
 * that fails (Redis down) is counted as a concurrency limiter error and left to the ticket's expiry
 * (its TTL, admission.ts), as a failed removal always was; so is what waits when the process dies.
 */
export class AdmissionTickets {
  private pending = new Map<string, string[]>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Pick<LimiterRedis, 'pipeline'>,
    private readonly failed: (err: unknown) => void,
  ) {}

  /** `ticket` of the in-flight set `key` is done with: removed with the next admission of that set, or soon. */
  giveBack(key: string, ticket: string): void {
    const waiting = this.pending.get(key);
    if (waiting) waiting.push(ticket);
    else this.pending.set(key, [ticket]);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), RELEASE_DELAY_MS);
      this.timer.unref();
    }
  }

  /** The given-back tickets of `key` that ride with an admission of it now (no longer pending). */
  takeFor(key: string): string[] {
    const waiting = this.pending.get(key);
    if (!waiting) return [];
    if (waiting.length <= MAX_RIDING_TICKETS) {
      this.pending.delete(key);
      return waiting;
    }
    return waiting.splice(0, MAX_RIDING_TICKETS);
  }

  /** Remove every pending ticket now, in one pipeline (the timer's; a stopping gateway's). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const pipeline = this.redis.pipeline();
    for (const [key, tickets] of batch) pipeline.zrem(key, ...tickets);
    try {
      const results = (await pipeline.exec()) ?? [];
      const err = results.find(([e]) => e)?.[0];
      if (err) this.failed(err);
    } catch (err) {
      this.failed(err);
    }
  }
}
