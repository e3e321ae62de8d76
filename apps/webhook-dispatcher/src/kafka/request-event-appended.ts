import { publicRequestEventOf, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@wdr/contracts';
import { SKIPPED, type EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import type { FanOut } from '../domain/fan-out.js';
import type { Subscribers } from '../domain/subscribers.js';

const SUBSCRIBABLE: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/**
 * `request.event_appended` (request.lifecycle): an event of a subscribable kind becomes one message
 * per subscribed endpoint, with the public form of the event (the history's allow-list), in one
 * statement: the fan-out is idempotent by itself (one message per endpoint and event, a unique
 * key), so a redelivered event adds nothing and needs no transaction with the processed-event
 * record (the consumer records it with its batch). Other kinds, and events no enabled endpoint
 * takes (Subscribers: the tenant has none, or none of this type and scope), are skipped without
 * touching the database and answer SKIPPED, so that batches of nothing but such events commit
 * their offsets lazily. A workflow run's event carries its project and environment (`scope`): the
 * project's endpoints take it as well as tenant-wide ones; any other request's events reach
 * tenant-wide endpoints only.
 */
export const onRequestEventAppended =
  (deps: { fanOut: FanOut; subscribers: Subscribers }): EventHandler<Prisma.TransactionClient, 'request.event_appended'> =>
  async (envelope) => {
    const e = envelope.data;
    if (!SUBSCRIBABLE.has(e.kind)) return SKIPPED;
    const scope = e.scope ? { projectId: e.scope.project_id, environmentId: e.scope.environment_id } : null;
    if (!deps.subscribers.mayReceive(envelope.tenant_id, e.kind, scope)) return SKIPPED;
    await deps.fanOut.record({
      tenantId: envelope.tenant_id,
      eventId: envelope.id,
      type: e.kind as WebhookEventType,
      occurredAt: envelope.occurred_at,
      data: {
        request_id: e.request_id,
        ...(e.scope ? { project_id: e.scope.project_id, environment_id: e.scope.environment_id } : {}),
        event: publicRequestEventOf(e),
      },
      scope,
    });
    return undefined;
  };
