import { deleteInBatches, type RawSql } from '@wdr/kit/db';

/**
 * Deletes finished messages (delivered or failed) created before `before`, with their attempts (ON
 * DELETE CASCADE), at most `batch` per statement and until none is left, oldest first. Pending
 * messages are never deleted (their schedule ends within about 28 hours, as failed). The retention
 * must outlast the redelivery window of request.lifecycle (the topic's retention plus the
 * consumer's lag): a message's (endpoint, event) row is what makes a redelivered event add nothing.
 * Returns how many messages went.
 */
export async function purgeFinishedMessages(db: RawSql, before: Date, batch = 5_000): Promise<number> {
  return deleteInBatches(
    (limit) =>
      db.$executeRawUnsafe(
        `DELETE FROM webhook_messages WHERE id IN (
           SELECT id FROM webhook_messages WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2
         )`,
        before,
        limit,
      ),
    batch,
  );
}
