import { SKIPPED, type EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import type { FanOut } from '../domain/fan-out.js';
import type { Subscribers } from '../domain/subscribers.js';

/**
 * `batch.completed` (request.lifecycle, once per batch): a tenant-level fact, like the balance
 * alerts, sent to every endpoint of the tenant that subscribes to it. One idempotent statement;
 * skipped (SKIPPED) when no endpoint of the tenant takes it.
 */
export const onBatchCompleted =
  (deps: { fanOut: FanOut; subscribers: Subscribers }): EventHandler<Prisma.TransactionClient, 'batch.completed'> =>
  async (envelope) => {
    if (!deps.subscribers.mayReceive(envelope.tenant_id, 'batch.completed', 'tenant')) return SKIPPED;
    await deps.fanOut.record({
      tenantId: envelope.tenant_id,
      eventId: envelope.id,
      type: 'batch.completed',
      occurredAt: envelope.occurred_at,
      data: { ...envelope.data },
      scope: 'tenant',
    });
    return undefined;
  };
