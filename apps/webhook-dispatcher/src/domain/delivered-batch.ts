import { GroupedWrites } from './grouped-writes.js';
import type { HotSql } from './hot-sql.js';

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

/**
 * Records successful attempts in groups (GroupedWrites): the attempts that end while a write is in
 * flight are written together by the next one, one statement for the whole group (attempt rows,
 * messages marked delivered where the lease is still the sender's, `last_success_at` once per
 * endpoint). Under load this turns a transaction per delivery, all of them updating the same
 * endpoint row, into one statement per few dozen deliveries; alone, a delivery is written at once.
 *
 * Each caller's promise settles when its own attempt is committed (or the write failed): a
 * delivery counts as recorded, and is never sent again, only from then on. A crash before that is
 * the same as a crash between the POST and its transaction: the lease runs out and the message is
 * sent again (at least once; the stable webhook-id lets the receiver drop the repeat).
 */
export class DeliveredBatch {
  private readonly groups: GroupedWrites<Delivered>;

  constructor(private readonly sql: HotSql) {
    this.groups = new GroupedWrites((group) => this.write(group));
  }

  record(d: Delivered): Promise<void> {
    return this.groups.add(d);
  }

  private async write(group: Delivered[]): Promise<void> {
    await this.sql.count(
      'wdr_webhook_delivered',
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::int[], $6::int[], $7::text[])
           AS t(message_id, claim_token, endpoint_id, attempt, status_code, latency_ms, excerpt)
       ), attempts AS (
         INSERT INTO webhook_attempts (id, message_id, endpoint_id, attempt, outcome, status_code, latency_ms, response_excerpt, error)
         SELECT gen_random_uuid(), message_id, endpoint_id, attempt, 'delivered', status_code, latency_ms, excerpt, NULL FROM input
       ), endpoints AS (
         -- Locked in id order, so two replicas' groups never wait on each other in a cycle.
         UPDATE webhook_endpoints SET last_success_at = now()
         WHERE id IN (SELECT id FROM webhook_endpoints WHERE id IN (SELECT endpoint_id FROM input) ORDER BY id FOR NO KEY UPDATE)
       )
       UPDATE webhook_messages m
       SET status = 'delivered', attempts = m.attempts + 1, delivered_at = now(), next_attempt_at = NULL, claimed_until = NULL, claim_token = NULL
       FROM input i
       WHERE m.id = i.message_id AND m.claim_token = i.claim_token AND m.status = 'pending'`,
      [
        group.map((d) => d.messageId),
        group.map((d) => d.claimToken),
        group.map((d) => d.endpointId),
        group.map((d) => d.attempt),
        group.map((d) => d.statusCode),
        group.map((d) => d.latencyMs),
        group.map((d) => d.excerpt),
      ],
    );
  }
}
