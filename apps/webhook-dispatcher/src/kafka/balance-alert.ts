import type { CatalogEnvelope } from '@wdr/contracts';
import type { HandlerContext } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import { recordMessages } from '../domain/fan-out.js';

/**
 * `billing.balance_low` / `billing.balance_exhausted` (billing.events): a tenant-level fact, sent to
 * every endpoint of the tenant that subscribes to it, project-scoped ones included.
 */
export const onBalanceAlert = async <E extends 'billing.balance_low' | 'billing.balance_exhausted'>(
  envelope: CatalogEnvelope<E>,
  ctx: HandlerContext<Prisma.TransactionClient>,
): Promise<void> => {
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
};
