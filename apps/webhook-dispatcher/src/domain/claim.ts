import type { PgSql } from '@wdr/kit/pg-sql';

/** A message a sender holds (its lease is `claimed_until`), with what it needs to send it. */
export interface Claim {
  id: string;
  claim_token: string;
  endpoint_id: string;
  body: string;
  attempts: number;
  schedule_step: number;
  first_attempt_at: Date;
  url_sealed: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/** What one claim may take: `limit` messages in all, `perEndpoint` leases held per endpoint at most. */
export interface ClaimLimits {
  limit: number;
  perEndpoint: number;
  leaseMs: number;
  /** The lease's owner: a result recorded after the lease moved on to another sender changes no schedule. */
  token: string;
}

/**
 * The claim, as the tail of a statement: `FOR UPDATE SKIP LOCKED` over the due messages of each
 * enabled endpoint, at most `perEndpoint` leases held per endpoint (counted from the table, so the
 * bound holds across replicas up to the race of two simultaneous claims), at most `limit` in all;
 * each gets a lease (`claimed_until` = `next_attempt_at` = now + lease, and a `claim_token`). The two
 * times move together, so a held message is not due until its lease runs out. The held leases are
 * counted from the index of messages with a claim token (`webhook_messages_leased_idx`): the future
 * range of the due index also holds every message waiting for a retry, which an endpoint whose
 * receiver has been failing for a while has thousands of. The due messages are taken in the due index's
 * order (endpoint, next_attempt_at) and nothing else, so the scan stops at the limit: a tie-break on
 * the (random) id made Postgres read and sort every due message of the endpoint at each claim.
 *
 * `p` names the statement's parameters for limit, perEndpoint, leaseMs and token. `giveBack`: a
 * statement that also ends leases (recordDelivered) names a CTE of (endpoint_id, n) leases it ends,
 * which the count still sees as held (one snapshot for the whole statement), and the messages
 * whose leases those are (never claimed again by the same statement).
 */
export function claimTail(
  p: { limit: string; perEndpoint: string; leaseMs: string; token: string },
  giveBack?: { cte: string; ids: string },
): string {
  const given = giveBack ? ` + COALESCE((SELECT g.n FROM ${giveBack.cte} g WHERE g.endpoint_id = ep.id), 0)` : '';
  const notGiven = giveBack ? ` AND d.id <> ALL(${giveBack.ids})` : '';
  return `ready AS (
       SELECT ep.id AS endpoint_id,
              ${p.perEndpoint}::int - (SELECT count(*) FROM webhook_messages f
                                       WHERE f.endpoint_id = ep.id AND f.claim_token IS NOT NULL AND f.claimed_until > now()
                                         AND f.status = 'pending')::int${given} AS free
       FROM webhook_endpoints ep
       WHERE ep.status = 'enabled'
         AND EXISTS (SELECT 1 FROM webhook_messages d WHERE d.endpoint_id = ep.id AND d.status = 'pending' AND d.next_attempt_at <= now()${notGiven})
     ), picked AS (
       SELECT m.id FROM ready r CROSS JOIN LATERAL (
         SELECT d.id FROM webhook_messages d
         WHERE d.endpoint_id = r.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= now()${notGiven}
         ORDER BY d.next_attempt_at
         LIMIT GREATEST(r.free, 0)
         FOR UPDATE OF d SKIP LOCKED
       ) m
       LIMIT ${p.limit}
     )
     UPDATE webhook_messages m
     SET claimed_until = now() + ${p.leaseMs} * interval '1 millisecond', next_attempt_at = now() + ${p.leaseMs} * interval '1 millisecond',
         claim_token = ${p.token}::uuid, first_attempt_at = COALESCE(m.first_attempt_at, now())
     FROM webhook_endpoints ep
     -- The picked ids as an array: an index condition on the key. Joined to \`picked\`, a planner that
     -- believes the queue nearly empty walked the whole key once per picked message.
     WHERE m.id = ANY(ARRAY(SELECT p.id FROM picked p)) AND ep.id = m.endpoint_id
     RETURNING m.id::text, m.claim_token::text, m.endpoint_id::text, m.body, m.attempts, m.schedule_step, m.first_attempt_at,
               ep.url_sealed, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at`;
}

const CLAIM = `WITH ${claimTail({ limit: '$1', perEndpoint: '$2', leaseMs: '$3', token: '$4' })}`;

/** Claims due messages (see claimTail). */
export async function claimDue(sql: PgSql, l: ClaimLimits): Promise<Claim[]> {
  return sql.rows<Claim>(CLAIM, [l.limit, l.perEndpoint, l.leaseMs, l.token]);
}

/**
 * Milliseconds until the earliest scheduled attempt of an enabled endpoint's pending message (a
 * retry, or a lease running out), or null when there is none: one probe of the due index per
 * enabled endpoint. Read when a claim found nothing due, so an idle sender sleeps until then.
 */
export async function nextDueInMs(sql: PgSql): Promise<number | null> {
  const [row] = await sql.rows<{ ms: number | null }>(
    `SELECT (extract(epoch FROM min(n.at) - now()) * 1000)::float8 AS ms
       FROM webhook_endpoints ep
       CROSS JOIN LATERAL (
         SELECT d.next_attempt_at AS at FROM webhook_messages d
          WHERE d.endpoint_id = ep.id AND d.status = 'pending'
          ORDER BY d.next_attempt_at LIMIT 1
       ) n
      WHERE ep.status = 'enabled'`,
    [],
  );
  return row?.ms ?? null;
}
