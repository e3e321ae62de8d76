import { publicRequestEventOf, WEBHOOK_EVENT_TYPES, type EventData, type WebhookEventType } from '@wdr/contracts';
import type { EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import { recordMessages } from '../domain/fan-out.js';

const SUBSCRIBABLE: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/**
 * `request.event_appended` (request.lifecycle): an event of a subscribable kind becomes one message
 * per subscribed endpoint, with the public form of the event (the history's allow-list), recorded
 * together with the processed-event record. Other kinds are skipped without a transaction.
 * Requests are not linked to projects yet: scope null, so only tenant-wide endpoints take them.
 */
export const onRequestEventAppended: EventHandler<Prisma.TransactionClient> = async (envelope, ctx) => {
  const e = envelope.data as EventData<'requestLifecycle', 'request.event_appended'>;
  if (!SUBSCRIBABLE.has(e.kind)) return;
  await ctx.transaction(async (tx) => {
    await recordMessages(tx, {
      tenantId: envelope.tenant_id,
      eventId: envelope.id,
      type: e.kind as WebhookEventType,
      occurredAt: envelope.occurred_at,
      data: { request_id: e.request_id, event: publicRequestEventOf(e) },
      scope: null,
    });
  });
};
