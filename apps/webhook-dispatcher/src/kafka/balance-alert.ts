import type { CatalogEnvelope } from '@wdr/contracts';
import { SKIPPED, type HandlerContext, type HandlerOutcome } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import { recordMessages } from '../domain/fan-out.js';
import type { Subscribers } from '../domain/subscribers.js';
import { webhookEventOfTenantFact } from '../domain/webhook-events.js';

/**
 * `billing.balance_low` / `billing.balance_exhausted` (billing.alerts) -> one message per
 * subscribed endpoint of the tenant, recorded in the transaction that records the event as
 * processed; SKIPPED (no transaction) when no endpoint of the tenant takes it.
 */
export const onBalanceAlert =
  (deps: { subscribers: Subscribers }) =>
  async <E extends 'billing.balance_low' | 'billing.balance_exhausted'>(
    envelope: CatalogEnvelope<E>,
    ctx: HandlerContext<Prisma.TransactionClient>,
  ): Promise<HandlerOutcome> => {
    const event = webhookEventOfTenantFact(deps.subscribers, envelope);
    if (!event) return SKIPPED;
    await ctx.transaction(async (tx) => {
      await recordMessages(tx, event);
    });
    return undefined;
  };
