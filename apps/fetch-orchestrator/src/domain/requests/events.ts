import type { RawSql } from '@wdr/kit/db';
import { makeEnvelope, outboxJson } from '@wdr/kit/kafka';
import type { Envelope } from '@wdr/contracts';

/**
 * Append one event to a request's history, inside the caller's transaction, and mirror it on the
 * `request.lifecycle` topic through the outbox. The per-request sequence number is the SSE id; a
 * workflow run's mirror carries its project and environment (`scope`), taken from the row.
 *
 * One statement: it takes the next number from the request's counter (the row lock orders
 * concurrent appends), stores the event and its outbox message with that number (the mirror is
 * built here and its `event_id` set by the statement), and answers the number.
 */
export async function appendEvent(
  tx: RawSql,
  request: { id: string; tenantId: string },
  kind: string,
  status: string,
  payload: Record<string, unknown>,
): Promise<number> {
  const createdAt = new Date();
  const mirror = lifecycleEnvelope(request, { seq: 1, kind, status, payload, createdAt });
  const rows = await tx.$queryRawUnsafe<{ seq: number }[]>(
    `WITH s AS (
       UPDATE data_requests SET last_event_seq = last_event_seq + 1 WHERE id = $1::uuid
       RETURNING last_event_seq AS seq, project_id, environment_id
     ), e AS (
       INSERT INTO request_events (request_id, seq, kind, status, payload, created_at)
       SELECT $1::uuid, s.seq, $2, $3, $4::jsonb, $5::timestamptz FROM s
     ), o AS (
       INSERT INTO outbox_messages (topic, message_key, envelope)
       SELECT 'requestLifecycle', $1,
              CASE WHEN s.project_id IS NULL THEN jsonb_set($6::jsonb, '{data,event_id}', to_jsonb(s.seq))
                   ELSE jsonb_set(jsonb_set($6::jsonb, '{data,event_id}', to_jsonb(s.seq)), '{data,scope}',
                                  jsonb_build_object('project_id', s.project_id, 'environment_id', s.environment_id)) END
       FROM s
     )
     SELECT seq FROM s`,
    request.id,
    kind,
    status,
    JSON.stringify(payload),
    createdAt,
    outboxJson(mirror),
  );
  const seq = rows[0]?.seq;
  if (seq === undefined) throw new Error(`request ${request.id} does not exist`);
  return Number(seq);
}

/** The `request.lifecycle` message that mirrors one stored event (create.ts writes the first with the row). */
export function lifecycleEnvelope(
  request: { id: string; tenantId: string; projectId?: string | null; environmentId?: string | null },
  event: { seq: number; kind: string; status: string; payload: Record<string, unknown>; createdAt: Date },
): Envelope {
  return makeEnvelope('requestLifecycle', 'request.event_appended', request.tenantId, {
    request_id: request.id,
    event_id: event.seq,
    kind: event.kind,
    status: event.status,
    payload: event.payload,
    created_at: event.createdAt.toISOString(),
    ...(request.projectId && request.environmentId
      ? { scope: { project_id: request.projectId, environment_id: request.environmentId } }
      : {}),
  });
}
