import { SKIPPED, type EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import type { FanOut } from '../domain/fan-out.js';
import type { Subscribers } from '../domain/subscribers.js';
import { webhookEventOfRequestEvent } from '../domain/webhook-events.js';

/**
 * `request.event_appended` (request.lifecycle) -> one message per subscribed endpoint, in one
 * statement: the fan-out is idempotent by itself (one message per endpoint and event, a unique
 * key), so a redelivered event adds nothing and needs no transaction with the processed-event
 * record (the consumer records it with its batch). An event nobody takes answers SKIPPED without
 * touching the database, so that batches of nothing but such events commit their offsets lazily.
 */
export const onRequestEventAppended =
  (deps: { fanOut: FanOut; subscribers: Subscribers }): EventHandler<Prisma.TransactionClient, 'request.event_appended'> =>
  async (envelope) => {
    const event = webhookEventOfRequestEvent(deps.subscribers, envelope);
    if (!event) return SKIPPED;
    await deps.fanOut.record(event);
    return undefined;
  };
