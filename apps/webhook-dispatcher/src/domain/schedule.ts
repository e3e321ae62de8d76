/**
 * The retry schedule: the first attempt at once, then about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
 * 10 h after each failure (each delay +-10 % jitter, so receivers that failed together are not hit
 * together again), 8 attempts in all over about 28 hours. The schedule lives in Postgres
 * (`webhook_messages.next_attempt_at`): these are only the delays written there.
 */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** A receiver's Retry-After is honoured up to this (a longer one is taken as this). */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * Delay before the next attempt after `failedSteps` failed attempts of the schedule (1 after the
 * first), or null when the schedule is exhausted. A Retry-After later than the schedule's delay wins.
 */
export function retryDelayMs(failedSteps: number, retryAfterMs: number | null, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[failedSteps - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** `Retry-After` as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | null {
  if (header === undefined) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
