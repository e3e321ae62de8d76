import { deleteInBatches, type RawSql } from '../db.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';

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
  return deleteInBatches(
    (limit) =>
      db.$executeRawUnsafe(
        `DELETE FROM processed_messages WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM processed_messages WHERE processed_at < now() - ($1::int * interval '1 hour') LIMIT $2::int))`,
        retainHours,
        limit,
      ),
    batch,
  );
}

/**
 * The hourly purge of a Kafka service (createKafkaService): purgeProcessed, counted as
 * `wdr_processed_messages_purged_total` (rows deleted) and
 * `wdr_processed_messages_purge_seconds_total` (time spent purging, failures included), so
 * the table's churn and the purge's cost are visible. A failure is logged and left to the next round.
 */
export function processedPurger(opts: { db: RawSql; metrics: ServiceMetrics; log: Logger; retainHours: number }): () => Promise<number> {
  const purged = opts.metrics.shared.counter(
    'processed_messages_purged_total',
    'Processed-event records (idempotent consumers) deleted past PROCESSED_RETENTION_HOURS.',
    [] as const,
  );
  const spent = opts.metrics.shared.counter(
    'processed_messages_purge_seconds_total',
    'Time spent purging processed-event records past their retention.',
    [] as const,
  );
  return async () => {
    const t0 = performance.now();
    try {
      const n = await purgeProcessed(opts.db, opts.retainHours);
      purged.inc(n);
      if (n > 0) opts.log.info({ deleted: n }, 'processed-event records past their retention purged');
      return n;
    } catch (err) {
      opts.log.warn({ err }, 'purging processed-event records failed; next try in an hour');
      return 0;
    } finally {
      spent.inc((performance.now() - t0) / 1000);
    }
  };
}
