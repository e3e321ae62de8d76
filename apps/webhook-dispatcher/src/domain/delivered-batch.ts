import { claimTail, localParams, type Claim, type ClaimLimits } from './claim.js';
import type { PgSql } from '@wdr/kit/pg-sql';

/** One successful attempt waiting to be recorded. */
export interface Delivered {
  messageId: string;
  claimToken: string;
  endpointId: string;
  attempt: number;
  statusCode: number;
  latencyMs: number;
  excerpt: string | null;
}

/** The statement of recordDelivered, its parameters in that order (exported for its plan's test). */
export const RECORD_AND_CLAIM = `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::int[], $6::int[], $7::text[])
         AS t(message_id, claim_token, endpoint_id, attempt, status_code, latency_ms, excerpt)
     ), attempts AS (
       INSERT INTO webhook_attempts (id, message_id, endpoint_id, attempt, outcome, status_code, latency_ms, response_excerpt, error)
       SELECT gen_random_uuid(), message_id, endpoint_id, attempt, 'delivered', status_code, latency_ms, excerpt, NULL FROM input
     ), endpoints AS (
       -- Locked in id order, so two replicas' groups never wait on each other in a cycle.
       UPDATE webhook_endpoints SET last_success_at = now()
       WHERE id IN (SELECT id FROM webhook_endpoints WHERE id IN (SELECT endpoint_id FROM input) ORDER BY id FOR NO KEY UPDATE)
     ), done AS (
       UPDATE webhook_messages m
       SET status = 'delivered', attempts = m.attempts + 1, delivered_at = now(), next_attempt_at = NULL, claimed_until = NULL, claim_token = NULL
       FROM input i
       -- By the primary key: the join alone let the planner hash every pending message (a scan of
       -- the due index that grew with the backlog). A claim token is only ever set on a pending
       -- message (every change of status clears it), so its match is the lease still being the sender's.
       -- IS NOT DISTINCT FROM (the input's token is never null), here and below: an equality would let
       -- the planner read the group through the leases' index, every lease held, where the key reads the group.
       WHERE m.id = ANY($1::uuid[]) AND m.id = i.message_id AND m.claim_token IS NOT DISTINCT FROM i.claim_token
     ), given_back AS MATERIALIZED (
       -- The leases this statement ends, as the claim below still counts them (held: a token, a lease
       -- not run out). The messages themselves carry a token in its snapshot, so it never picks them.
       -- Read once by key (MATERIALIZED): inlined, it was read again for every endpoint the claim weighs.
       SELECT m.endpoint_id, count(*)::int AS n
       FROM webhook_messages m JOIN input i ON m.id = i.message_id AND m.claim_token IS NOT DISTINCT FROM i.claim_token
       WHERE m.id = ANY($1::uuid[]) AND m.claimed_until > now()
       GROUP BY m.endpoint_id
     ), ${claimTail({ limit: '$8', perEndpoint: '$9', leaseMs: '$10', token: '$11', localIds: '$12', localCounts: '$13' }, 'given_back')}`;

/**
 * Records a group of successful attempts and, in the same round trip, claims what the slots they
 * free can take: one statement writes the attempt rows, marks the messages delivered where the
 * lease is still the sender's, sets `last_success_at` once per endpoint, and claims due messages
 * (claimTail) counting the leases it ends as free. Without it, each freed slot waited for a
 * second round trip (a claim) before its next POST; that claim was about a quarter of a slot's cycle.
 *
 * The caller's attempts count as recorded, and are never sent again, only once this commits. A
 * crash before that is the same as a crash between the POST and its transaction: the lease runs
 * out and the message is sent again (at least once; the stable webhook-id lets the receiver drop
 * the repeat). Like every claim, it must not run at the same time as another claim of this process.
 */
export async function recordDelivered(sql: PgSql, group: Delivered[], claim: ClaimLimits): Promise<Claim[]> {
  return sql.rows<Claim>(RECORD_AND_CLAIM, recordAndClaimParams(group, claim));
}

/** RECORD_AND_CLAIM's parameters, in its order (exported for the tests and bench that explain it). */
export function recordAndClaimParams(group: Delivered[], claim: ClaimLimits): unknown[] {
  return [
    group.map((d) => d.messageId),
    group.map((d) => d.claimToken),
    group.map((d) => d.endpointId),
    group.map((d) => d.attempt),
    group.map((d) => d.statusCode),
    group.map((d) => d.latencyMs),
    group.map((d) => d.excerpt),
    claim.limit,
    claim.perEndpoint,
    claim.leaseMs,
    claim.token,
    ...localParams(claim),
  ];
}
