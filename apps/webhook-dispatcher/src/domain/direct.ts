import { createHash } from 'node:crypto';
import type { PgSql } from '@wdr/kit/pg-sql';

/**
 * Direct delivery: the statements of a message that is posted before it is stored.
 *
 * The durable queue (claim.ts) writes a message three times before its first POST is recorded:
 * inserted due, claimed (a lease), marked delivered, each a new row version with its index
 * entries, and a claim and a record round trip on the way. A new message whose endpoint is free
 * (nothing due for it in the queue, a slot of its own here) is instead posted from the consumer's
 * hand and written once, delivered, with its attempt (DIRECT_DELIVERED); only what does not go
 * straight through is written to the queue: a message that waited WEBHOOK_DIRECT_WAIT_MS for a
 * slot is inserted due (QUEUE_MESSAGES), one whose POST failed or ran past that wait is inserted
 * held by this sender (HOLD_MESSAGE) and then goes the queue's way (a failure recorded, a retry
 * scheduled).
 *
 * The Kafka offset of an event moves past it only once each of its messages is written one way or
 * the other (the handler's promise), so a crash in between reads the event again: its messages
 * already written are left alone (TARGETS skips them) and the others are posted again with the same
 * webhook-id, the message id being a function of the event and the endpoint (messageIdFor). What a
 * crash loses is the record of an attempt whose answer was not written yet, as it does on the
 * queue's path between a POST and its record.
 */

/** A message before it is stored: its id follows from its event and endpoint. */
export interface NewMessage {
  id: string;
  endpointId: string;
  tenantId: string;
  eventId: string;
  eventType: string;
  body: string;
}

/** An endpoint as the fan-out found it: what a POST needs, and how busy the queue keeps it. */
export interface Target {
  endpoint_id: string;
  url_sealed: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  /** Leases held on the endpoint, by any sender, when the fan-out read it. */
  held: number;
  /** Messages of the endpoint wait in the queue, due now: new ones queue behind them. */
  waiting: boolean;
}

/**
 * The message id of an event for an endpoint: the same on every reading of the event, so a message
 * posted again after a crash carries the same webhook-id (a UUID of version 8 from a SHA-256).
 */
export function messageIdFor(eventId: string, endpointId: string): string {
  const h = createHash('sha256').update(eventId).update('/').update(endpointId).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * The endpoints the group's events go to (the fan-out's rule, as FAN_OUT in fan-out.ts), one row per
 * endpoint with the events it takes (`events`: their positions in the group, from 1), without the
 * pairs already stored (an event read again), with the endpoint's leases held and whether it has
 * messages due in the queue: one probe of each index per endpoint, not per event.
 */
export const TARGETS = `WITH e AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::boolean[], $5::text[], $6::text[]) WITH ORDINALITY
         AS e(tenant_id, event_id, event_type, tenant_wide, project_id, environment_id, i)
     ), t AS MATERIALIZED (
       SELECT ep.id AS endpoint_id, array_agg(e.i::int) AS events
       FROM e JOIN webhook_endpoints ep ON ep.tenant_id = e.tenant_id
       WHERE ep.status = 'enabled' AND e.event_type = ANY(ep.event_types)
         AND (e.tenant_wide OR ep.project_id IS NULL
              OR (ep.project_id = e.project_id AND (ep.environment_id IS NULL OR ep.environment_id = e.environment_id)))
         AND NOT EXISTS (SELECT 1 FROM webhook_messages m WHERE m.endpoint_id = ep.id AND m.event_id = e.event_id)
       GROUP BY ep.id
     )
     SELECT t.events, ep.id::text AS endpoint_id, ep.url_sealed, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at,
            (SELECT count(*) FROM webhook_messages f
              WHERE f.endpoint_id = t.endpoint_id AND f.claim_token IS NOT NULL AND f.claimed_until > now())::int AS held,
            COALESCE((SELECT true FROM webhook_messages d
              WHERE d.endpoint_id = t.endpoint_id AND d.status = 'pending' AND d.claim_token IS NULL AND d.next_attempt_at <= now()
              LIMIT 1), false) AS waiting
     FROM t JOIN webhook_endpoints ep ON ep.id = t.endpoint_id`;

export interface TargetRow extends Target {
  /** The events it takes: their positions in the group, from 1. */
  events: number[];
}

/** TARGETS's parameters: the events' columns (as the fan-out's, without the bodies). */
export async function readTargets(sql: PgSql, params: unknown[]): Promise<TargetRow[]> {
  return sql.rows<TargetRow>(TARGETS, params);
}

/** A group's bodies, each once (an event's body is the same string for each of its endpoints), and each message's, by position from 1. */
function bodiesOf(messages: NewMessage[]): [string[], number[]] {
  const distinct: string[] = [];
  const at = new Map<string, number>();
  const index = messages.map((m) => {
    let i = at.get(m.body);
    if (i === undefined) {
      i = distinct.push(m.body);
      at.set(m.body, i);
    }
    return i;
  });
  return [distinct, index];
}

/**
 * Runs a statement that inserts messages of endpoints it read as present (a join or `EXISTS`),
 * once more if an endpoint was deleted between that check and the statement's foreign-key check:
 * the whole statement failed (23503), and failing it would fail every event of the group (read
 * again, its other messages posted again). Run again, the check leaves that endpoint out.
 */
export async function sparingDeletedEndpoints<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if ((err as { code?: string }).code !== '23503') throw err;
    return run();
  }
}

/** New messages into the queue, due now (the insert's trigger wakes the senders). */
export const QUEUE_MESSAGES = `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
     SELECT u.id, u.endpoint_id, u.tenant_id, u.event_id, u.event_type, u.body, now()
     FROM (SELECT u.*, ($6::text[])[u.b] AS body
           FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $7::int[]) AS u(id, endpoint_id, tenant_id, event_id, event_type, b)) u
     -- An endpoint deleted since the fan-out read it takes nothing (its messages would go with it).
     WHERE EXISTS (SELECT 1 FROM webhook_endpoints ep WHERE ep.id = u.endpoint_id)
     ON CONFLICT (endpoint_id, event_id) DO NOTHING`;

export async function queueMessages(sql: PgSql, group: NewMessage[]): Promise<number> {
  const params = [
    group.map((m) => m.id),
    group.map((m) => m.endpointId),
    group.map((m) => m.tenantId),
    group.map((m) => m.eventId),
    group.map((m) => m.eventType),
    ...bodiesOf(group),
  ];
  return sparingDeletedEndpoints(async () => sql.count(QUEUE_MESSAGES, params));
}

/** A message posted directly and answered 2xx, waiting to be written. */
export interface DirectDelivered {
  message: NewMessage;
  firstAttemptAt: Date;
  statusCode: number;
  latencyMs: number;
  excerpt: string | null;
}

/**
 * Messages delivered directly, written once: the message (delivered, one attempt), its attempt row
 * and the endpoints' `last_success_at`, in one statement. A message another sender stored meanwhile
 * (a replica that read the event too) keeps that one's record: this attempt is not written.
 */
export const DIRECT_DELIVERED = `WITH input AS (
       SELECT t.*, ($6::text[])[t.b] AS body, to_timestamp(t.first_ms / 1000.0) AS first_attempt_at
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $11::int[], $7::float8[], $8::int[], $9::int[], $10::text[])
         AS t(id, endpoint_id, tenant_id, event_id, event_type, b, first_ms, status_code, latency_ms, excerpt)
     ), msgs AS (
       INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, status, attempts, first_attempt_at, delivered_at, next_attempt_at)
       SELECT i.id, i.endpoint_id, i.tenant_id, i.event_id, i.event_type, i.body, 'delivered', 1, i.first_attempt_at, now(), NULL
       FROM input i WHERE EXISTS (SELECT 1 FROM webhook_endpoints ep WHERE ep.id = i.endpoint_id)
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
       RETURNING id
     ), attempts AS (
       INSERT INTO webhook_attempts (id, message_id, endpoint_id, attempt, outcome, status_code, latency_ms, response_excerpt, error)
       SELECT gen_random_uuid(), i.id, i.endpoint_id, 1, 'delivered', i.status_code, i.latency_ms, i.excerpt, NULL
       FROM input i JOIN msgs ON msgs.id = i.id
     ), endpoints AS (
       -- Locked in id order, as the queue's record does (delivered-batch.ts).
       UPDATE webhook_endpoints SET last_success_at = now()
       WHERE id IN (SELECT id FROM webhook_endpoints WHERE id IN (SELECT endpoint_id FROM input) ORDER BY id FOR NO KEY UPDATE)
     )
     SELECT count(*)::int AS n FROM msgs`;

export async function recordDirectDelivered(sql: PgSql, group: DirectDelivered[]): Promise<void> {
  const [bodies, index] = bodiesOf(group.map((d) => d.message));
  const params = [
    group.map((d) => d.message.id),
    group.map((d) => d.message.endpointId),
    group.map((d) => d.message.tenantId),
    group.map((d) => d.message.eventId),
    group.map((d) => d.message.eventType),
    bodies,
    group.map((d) => d.firstAttemptAt.getTime()),
    group.map((d) => d.statusCode),
    group.map((d) => d.latencyMs),
    group.map((d) => d.excerpt),
    index,
  ];
  await sparingDeletedEndpoints(async () => sql.rows(DIRECT_DELIVERED, params));
}

/**
 * A message posted directly whose answer is not a success, or is not in yet, stored as held by this
 * sender (a claim token and a lease, as a claim leaves it): from here it is the queue's, its result
 * recorded as a claimed message's is. False: the message was stored already (another replica), and
 * its record there stands.
 */
export const HOLD_MESSAGE = `INSERT INTO webhook_messages
       (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at, claimed_until, claim_token, first_attempt_at)
     SELECT $1::uuid, ep.id, $3::uuid, $4::uuid, $5, $6, now() + $7 * interval '1 millisecond', now() + $7 * interval '1 millisecond', $8::uuid, $9
     FROM webhook_endpoints ep WHERE ep.id = $2::uuid
     ON CONFLICT (endpoint_id, event_id) DO NOTHING`;

export async function holdMessage(sql: PgSql, m: NewMessage, leaseMs: number, token: string, firstAttemptAt: Date): Promise<boolean> {
  const params = [m.id, m.endpointId, m.tenantId, m.eventId, m.eventType, m.body, leaseMs, token, firstAttemptAt];
  const n = await sparingDeletedEndpoints(async () => sql.count(HOLD_MESSAGE, params));
  return n > 0;
}
