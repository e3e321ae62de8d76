import type { CatalogEnvelope } from '@wdr/contracts';
import { SKIPPED, type HandlerContext, type HandlerOutcome } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import { recordMessages } from '../domain/fan-out.js';
import type { Subscribers } from '../domain/subscribers.js';

/**
 * `billing.balance_low` / `billing.balance_exhausted` (billing.events): a tenant-level fact, sent to
 * every endpoint of the tenant that subscribes to it, project-scoped ones included. Skipped
 * (SKIPPED, no transaction) when no endpoint of the tenant takes it.
 */
export const onBalanceAlert =
  (deps: { subscribers: Subscribers }) =>
  async <E extends 'billing.balance_low' | 'billing.balance_exhausted'>(
    envelope: CatalogEnvelope<E>,
    ctx: HandlerContext<Prisma.TransactionClient>,
  ): Promise<HandlerOutcome> => {
    if (!deps.subscribers.mayReceive(envelope.tenant_id, envelope.type, 'tenant')) return SKIPPED;
    await ctx.transaction(async (tx) => {
      await recordMessages(tx, {
        tenantId: envelope.tenant_id,
        eventId: envelope.id,
        type: envelope.type,
        occurredAt: envelope.occurred_at,
        data: envelope.data,
        scope: 'tenant',
      });
    });
    return undefined;
  };
