import type { EventHandler } from '@wdr/kit/kafka';
import type { SettlementRequested } from '@wdr/contracts';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { z } from 'zod';
import type { Prisma } from '../generated/prisma/client.js';
import { settle } from '../domain/settlement.js';

type Tx = Prisma.TransactionClient;

/** billing.commands -> resolve the reservation exactly once. */
export const onSettlementRequested =
  (metrics: ServiceMetrics): EventHandler<Tx> =>
  async (envelope, ctx) => {
    const settlements = metrics.counter('settlements_total', 'Settlement commands applied, by outcome.', ['outcome']);
    const data = envelope.data as z.infer<typeof SettlementRequested>;
    let outcome = 'redelivered';
    await ctx.transaction(async (tx) => {
      outcome = await settle(tx, data);
    });
    settlements.inc({ outcome });
  };
