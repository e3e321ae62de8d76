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
  /**
   * POSTs this process has in flight per endpoint that are not in the table (direct.ts): they take
   * an endpoint's slots as held leases do.
   */
  local?: { endpointIds: string[]; counts: number[] };
}

/** ClaimLimits.local as the statement's two array parameters. */
export function localParams(l: ClaimLimits): [string[], number[]] {
  return [l.local?.endpointIds ?? [], l.local?.counts ?? []];
}

/**
 * A message is held while it carries a claim token: a claim gives it one, with a lease
 * (`claimed_until` = `next_attempt_at` = now + lease), and its result, a retry's schedule or the
 * sweep of a lease that ran out (`sweepLapsedLeases`) takes it away. The due index holds only the
 * pending messages nobody holds, the leases' index only the held ones (migration `held_leases`), so
 * a claim reads neither the held messages among the due ones nor, to count an endpoint's leases,
 * the messages waiting for a retry (an endpoint whose receiver has been failing for a while has
 * thousands): each index holds what one question asks.
 *
 * The claim, as the tail of a statement: `FOR UPDATE SKIP LOCKED` over the due messages of each
 * enabled endpoint, at most `perEndpoint` leases held per endpoint (counted from the table, so the
 * bound holds across replicas up to the race of two simultaneous claims), at most `limit` in all.
 * The due messages are taken in the due index's order (endpoint, next_attempt_at) and nothing else,
 * so the scan stops at the limit: a tie-break on the (random) id made Postgres read and sort every
 * due message of the endpoint at each claim. A message another claim took meanwhile is skipped (its
 * lock, or its token once that claim committed: Postgres checks the condition again on the row's
 * latest version).
 *
 * `p` names the statement's parameters for limit, perEndpoint, leaseMs and token. `givenBack`: a
 * statement that also ends leases (recordDelivered) names a CTE of (endpoint_id, n) leases it ends,
 * which the count still sees as held (one snapshot for the whole statement).
 */
export function claimTail(
  p: { limit: string; perEndpoint: string; leaseMs: string; token: string; localIds?: string; localCounts?: string },
  givenBack?: string,
): string {
  const given = givenBack ? ` + COALESCE((SELECT g.n FROM ${givenBack} g WHERE g.endpoint_id = ep.id), 0)` : '';
  const local =
    p.localIds && p.localCounts
      ? ` - COALESCE((SELECT l.n FROM unnest(${p.localIds}::uuid[], ${p.localCounts}::int[]) AS l(endpoint_id, n) WHERE l.endpoint_id = ep.id), 0)`
      : '';
  return `ready AS (
       SELECT ep.id AS endpoint_id,
              ${p.perEndpoint}::int - (SELECT count(*) FROM webhook_messages f
                                       WHERE f.endpoint_id = ep.id AND f.claim_token IS NOT NULL AND f.claimed_until > now())::int${given}${local} AS free
       FROM webhook_endpoints ep
       WHERE ep.status = 'enabled'
         -- One probe of the due index per endpoint. As EXISTS, a planner that believes the queue
         -- empty read every due message once (a semi-join over the whole index) to find the few endpoints.
         AND (SELECT true FROM webhook_messages d
              WHERE d.endpoint_id = ep.id AND d.status = 'pending' AND d.claim_token IS NULL AND d.next_attempt_at <= now() LIMIT 1)
     ), picked AS (
       SELECT m.id FROM ready r CROSS JOIN LATERAL (
         SELECT d.id FROM webhook_messages d
         WHERE d.endpoint_id = r.endpoint_id AND d.status = 'pending' AND d.claim_token IS NULL AND d.next_attempt_at <= now()
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

const CLAIM = `WITH ${claimTail({ limit: '$1', perEndpoint: '$2', leaseMs: '$3', token: '$4', localIds: '$5', localCounts: '$6' })}`;

/** Claims due messages (see claimTail). */
export async function claimDue(sql: PgSql, l: ClaimLimits): Promise<Claim[]> {
  return sql.rows<Claim>(CLAIM, [l.limit, l.perEndpoint, l.leaseMs, l.token, ...localParams(l)]);
}

/**
 * Leases that ran out (their sender died, or stalled past the lease) given up: the message is due
 * again at the end of its lease, and no longer its old sender's (a late result of that sender
 * changes no schedule). Reads the leases' index only (a token is only ever on a pending message).
 * Returns how many.
 */
export async function sweepLapsedLeases(sql: PgSql): Promise<number> {
  return sql.count(SWEEP_LAPSED_LEASES, []);
}

/** sweepLapsedLeases's statement (exported for its plan's test). */
export const SWEEP_LAPSED_LEASES = `UPDATE webhook_messages SET claim_token = NULL, claimed_until = NULL
     WHERE claim_token IS NOT NULL AND claimed_until <= now()`;

/** What a sender that found nothing to claim waits for. */
export interface NextDue {
  /** Milliseconds until the earliest retry of an enabled endpoint's message falls due, or null. */
  ms: number | null;
  /** A lease has run out and was not swept yet (its message is due once swept). */
  lapsed: boolean;
}

/** nextDue's statement (exported for its plan's test). */
export const NEXT_DUE = `SELECT (extract(epoch FROM min(n.at) - now()) * 1000)::float8 AS ms, bool_or(l.lapsed) AS lapsed
       FROM webhook_endpoints ep
       LEFT JOIN LATERAL (
         SELECT d.next_attempt_at AS at FROM webhook_messages d
          WHERE d.endpoint_id = ep.id AND d.status = 'pending' AND d.claim_token IS NULL AND d.next_attempt_at > now()
          ORDER BY d.next_attempt_at LIMIT 1
       ) n ON true
       LEFT JOIN LATERAL (
         SELECT true AS lapsed FROM webhook_messages h
          WHERE h.endpoint_id = ep.id AND h.claim_token IS NOT NULL AND h.claimed_until <= now()
          LIMIT 1
       ) l ON true
      WHERE ep.status = 'enabled'`;

/**
 * What a sender that found nothing to claim waits for: per enabled endpoint, a probe of the due
 * index's future (retries) and of the leases' index's past (leases that ran out), each the start of
 * a range. A message due now that the claim did not take waits for its endpoint's held leases: a
 * delivery that ends wakes its sender, and a lease that runs out is given up by the next poll's
 * sweep (WEBHOOK_POLL_MS), so neither is an event here (a sender woken for what waits would find it
 * waiting still, and spin). The ends of running leases are not read either: during a burst, the
 * leases' index starts with the versions of messages delivered since the last vacuum, all with a
 * lease ending in the future, which a probe for the earliest would walk each time.
 */
export async function nextDue(sql: PgSql): Promise<NextDue> {
  const [row] = await sql.rows<{ ms: number | null; lapsed: boolean | null }>(NEXT_DUE, []);
  return { ms: row?.ms ?? null, lapsed: row?.lapsed === true };
}
