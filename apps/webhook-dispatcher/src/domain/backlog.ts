import type { RawSql } from '@wdr/kit/db';

export interface WebhookBacklog {
  /** Pending messages whose next attempt is due now: the sender's queue. */
  due: number;
  /** Pending messages waiting for a later attempt (retry schedule). */
  scheduled: number;
  /** How long the longest-waiting due message has been due (s); 0 when none is due. */
  oldestDueAgeSeconds: number;
}

/** The delivery backlog, from the messages table (one statement; every replica sees the same table). */
export async function readBacklog(db: RawSql): Promise<WebhookBacklog> {
  const rows = await db.$queryRawUnsafe<{ due: number; scheduled: number; age: number }[]>(
    `SELECT count(*) FILTER (WHERE next_attempt_at <= now())::int AS due,
            count(*) FILTER (WHERE next_attempt_at > now())::int AS scheduled,
            COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now())), 0)::float8 AS age
       FROM webhook_messages WHERE status = 'pending'`,
  );
  const r = rows[0];
  return { due: r?.due ?? 0, scheduled: r?.scheduled ?? 0, oldestDueAgeSeconds: Math.max(0, r?.age ?? 0) };
}
