import type { WebhookMessageView } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient, WebhookMessage } from '../generated/prisma/client.js';
import { endpointOf } from './endpoint-views.js';
import { messageIdOf } from './signing.js';

export function messageView(m: WebhookMessage): WebhookMessageView {
  return {
    id: `msg_${m.id.replace(/-/g, '')}`,
    event_type: m.eventType,
    status: m.status as WebhookMessageView['status'],
    attempts: m.attempts,
    next_attempt_at: m.nextAttemptAt?.toISOString() ?? null,
    delivered_at: m.deliveredAt?.toISOString() ?? null,
    created_at: m.createdAt.toISOString(),
  };
}

/**
 * Manual redelivery: the message (same webhook-id, same body) is due now, whatever its status, and
 * its schedule starts over. A message a sender holds right now is not taken from it (409); a lease
 * that ran out (its sender died) is cleared, so its late result, if any, changes nothing.
 */
export async function redeliver(db: PrismaClient, tenantId: string, endpointId: string, webhookId: string): Promise<WebhookMessageView> {
  await endpointOf(db, tenantId, endpointId);
  const id = messageIdOf(webhookId);
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    `UPDATE webhook_messages SET status = 'pending', schedule_step = 0, next_attempt_at = now(), first_attempt_at = NULL,
       claimed_until = NULL, claim_token = NULL
     WHERE id = $1::uuid AND endpoint_id = $2::uuid AND (claimed_until IS NULL OR claimed_until <= now())
     RETURNING id::text`,
    id,
    endpointId,
  );
  if (rows.length === 0) {
    const exists = await db.webhookMessage.findFirst({ where: { id, endpointId } });
    if (!exists) throw new PublicError('NOT_FOUND', 'No such webhook message.');
    throw new PublicError('CONFLICT', 'The message is being delivered right now.');
  }
  await db.$executeRawUnsafe(`SELECT pg_notify('wdr_webhooks', current_schema())`);
  return messageView(await db.webhookMessage.findUniqueOrThrow({ where: { id } }));
}
