import { SKIPPED, type EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import type { FanOut } from '../domain/fan-out.js';
import type { Subscribers } from '../domain/subscribers.js';
import { webhookEventOfTenantFact } from '../domain/webhook-events.js';

/**
 * `batch.completed` (request.lifecycle, once per batch) -> one message per subscribed endpoint of
 * the tenant, in one idempotent statement; SKIPPED when no endpoint of the tenant takes it.
 */
export const onBatchCompleted =
  (deps: { fanOut: FanOut; subscribers: Subscribers }): EventHandler<Prisma.TransactionClient, 'batch.completed'> =>
  async (envelope) => {
    const event = webhookEventOfTenantFact(deps.subscribers, envelope);
    if (!event) return SKIPPED;
    await deps.fanOut.record(event);
    return undefined;
  };
