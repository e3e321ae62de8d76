import { BATCH_STATUSES } from '@wdr/contracts';
import type { RawSql } from '@wdr/kit/db';
import { enqueue, makeEnvelope } from '@wdr/kit/kafka';
import { TERMINAL } from './requests/terminal.js';

type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * Batch status from its jobs' statuses. Not every job terminal: `pending` while all are pending,
 * else `running`. All terminal: `completed` when all completed, `cancelled` when all were
 * cancelled, `failed` when none completed, `partial` when some completed and some did not.
 */
export function batchStatusOf(statuses: readonly string[]): BatchStatus {
  if (statuses.length === 0) return 'pending';
  if (statuses.some((s) => !TERMINAL.has(s))) return statuses.every((s) => s === 'pending') ? 'pending' : 'running';
  const completed = statuses.filter((s) => s === 'completed').length;
  if (completed === statuses.length) return 'completed';
  if (statuses.every((s) => s === 'cancelled')) return 'cancelled';
  return completed === 0 ? 'failed' : 'partial';
}

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
