import type { RawSql } from '../db.js';

/** How often a service looks for processed-event records past their retention. */
export const PROCESSED_PURGE_EVERY_MS = 3_600_000;

/**
 * Delete processed-event records (`processed_messages`, the idempotent consumers' memory) older
 * than `retainHours`, in batches of `batch` rows so no statement holds many locks or runs long.
 * A record is needed only while its message can still be delivered again, that is while it is
 * within the topic's retention (a group reset to the earliest offset replays everything still
 * kept): the retention must stay above every consumed topic's `retention.ms`. Returns how many
 * rows went.
 */
export async function purgeProcessed(db: RawSql, retainHours: number, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.$executeRawUnsafe(
      `DELETE FROM processed_messages WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM processed_messages WHERE processed_at < now() - ($1::int * interval '1 hour') LIMIT $2::int))`,
      retainHours,
      batch,
    );
    total += deleted;
    if (deleted < batch) return total;
  }
}
