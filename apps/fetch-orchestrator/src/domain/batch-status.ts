import type { RawSql } from '@wdr/kit/db';
import type { PgSql, PgStatement } from '@wdr/kit/pg-sql';
import { makeEnvelope, outboxJson } from '@wdr/kit/kafka';
import { TERMINAL } from './requests/terminal.js';

/**
 * Called by the transaction that ended a job of a batch: when no job of the batch is left running,
 * mark the batch finished and announce `batch.completed` (through the outbox), once. The batch row
 * is locked first, so the ends of a batch's last jobs take turns and the last one to commit sees
 * all the others (its next statement reads after their commits): exactly one announces.
 *
 * Two statements (batchEndSql): the lock, then one that marks the batch finished and writes the
 * announcement with the counts it read. Safe to run for a job that did not just end (a redelivery):
 * it announces only a batch whose jobs are all terminal and that is not marked finished yet.
 */
export async function announceBatchIfFinished(tx: RawSql, batchId: string, tenantId: string): Promise<void> {
  for (const [sql, ...params] of batchEndSql(batchId, tenantId)) await tx.$queryRawUnsafe(sql, ...params);
}

/** announceBatchIfFinished's statements, as lazy statements of `sql` for `sql.transaction([...])`. */
export function announceBatchStatements(sql: PgSql, batchId: string, tenantId: string): PgStatement<unknown>[] {
  return batchEndSql(batchId, tenantId).map(([text, ...params]) => sql.rows(text, params));
}

function batchEndSql(batchId: string, tenantId: string): [string, ...unknown[]][] {
  // The announcement's envelope is made (and checked) here; the statement fills in what it counted.
  const envelope = makeEnvelope('requestLifecycle', 'batch.completed', tenantId, {
    batch_id: batchId,
    status: 'completed',
    total_jobs: 1,
    completed: 1,
    failed: 0,
    cancelled: 0,
    finished_at: new Date(0).toISOString(),
  });
  return [
    ['SELECT 1 FROM batches WHERE id = $1::uuid FOR UPDATE', batchId],
    [
      `WITH jobs AS (SELECT status FROM data_requests WHERE batch_id = $1::uuid),
       done AS (
         UPDATE batches SET finished_at = now()
         WHERE id = $1::uuid AND finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM jobs WHERE status <> ALL($2::text[]))
         RETURNING finished_at
       ), c AS (
         SELECT (SELECT count(*) FROM jobs)::int AS total,
                (SELECT count(*) FROM jobs WHERE status = 'completed')::int AS completed,
                (SELECT count(*) FROM jobs WHERE status = 'failed')::int AS failed,
                (SELECT count(*) FROM jobs WHERE status = 'cancelled')::int AS cancelled,
                done.finished_at
           FROM done
       )
       INSERT INTO outbox_messages (topic, message_key, envelope)
       SELECT 'requestLifecycle', $4, $3::jsonb || jsonb_build_object('data', ($3::jsonb -> 'data') || jsonb_build_object(
                'status', CASE WHEN c.completed = c.total THEN 'completed'
                               WHEN c.cancelled = c.total THEN 'cancelled'
                               WHEN c.completed = 0 THEN 'failed' ELSE 'partial' END,
                'total_jobs', c.total, 'completed', c.completed, 'failed', c.failed, 'cancelled', c.cancelled,
                'finished_at', to_char(c.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
         FROM c
       RETURNING 1`,
      batchId,
      [...TERMINAL],
      outboxJson(envelope),
      batchId,
    ],
  ];
}
