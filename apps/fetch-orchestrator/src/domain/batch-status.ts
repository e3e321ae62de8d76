import { batchStatusOf } from '@wdr/contracts';
import type { RawSql } from '@wdr/kit/db';
import { enqueue, makeEnvelope } from '@wdr/kit/kafka';
import { TERMINAL } from './requests/terminal.js';

/**
 * Called by the transaction that ended a job of a batch: when no job of the batch is left running,
 * mark the batch finished and announce `batch.completed` (through the outbox), once. The batch row
 * is locked first, so the ends of a batch's last jobs take turns and the last one to commit sees
 * all the others (its next statement reads after their commits): exactly one announces.
 */
export async function announceBatchIfFinished(tx: RawSql, batchId: string, tenantId: string): Promise<void> {
  await tx.$queryRawUnsafe('SELECT 1 FROM batches WHERE id = $1::uuid FOR UPDATE', batchId);
  const rows = await tx.$queryRawUnsafe<{ total: number; completed: number; failed: number; cancelled: number; finished_at: Date }[]>(
    `WITH jobs AS (SELECT status FROM data_requests WHERE batch_id = $1::uuid),
     done AS (
       UPDATE batches SET finished_at = now()
       WHERE id = $1::uuid AND finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM jobs WHERE status <> ALL($2::text[]))
       RETURNING finished_at
     )
     SELECT (SELECT count(*) FROM jobs)::int AS total,
            (SELECT count(*) FROM jobs WHERE status = 'completed')::int AS completed,
            (SELECT count(*) FROM jobs WHERE status = 'failed')::int AS failed,
            (SELECT count(*) FROM jobs WHERE status = 'cancelled')::int AS cancelled,
            done.finished_at
     FROM done`,
    batchId,
    [...TERMINAL],
  );
  const b = rows[0];
  if (!b) return;
  const statuses = [...Array(b.completed).fill('completed'), ...Array(b.failed).fill('failed'), ...Array(b.cancelled).fill('cancelled')];
  await enqueue(
    tx,
    'requestLifecycle',
    batchId,
    makeEnvelope('requestLifecycle', 'batch.completed', tenantId, {
      batch_id: batchId,
      status: batchStatusOf(statuses),
      total_jobs: b.total,
      completed: b.completed,
      failed: b.failed,
      cancelled: b.cancelled,
      finished_at: b.finished_at.toISOString(),
    }),
  );
}
