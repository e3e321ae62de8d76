import type { EventHandler } from '@wdr/kit/kafka';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { Prisma } from '../generated/prisma/client.js';
import { settle, type SettlementFlows } from '../domain/settlement.js';
import { tokenFlowMetrics } from '../metrics.js';

type Tx = Prisma.TransactionClient;

/** billing.commands -> resolve the reservation exactly once. */
export const onSettlementRequested =
  (metrics: ServiceMetrics): EventHandler<Tx, 'billing.settlement_requested'> =>
  async (envelope, ctx) => {
    const settlements = metrics.counter('settlements_total', 'Settlement commands applied, by outcome.', ['outcome']);
    const { data } = envelope;
    let outcome = 'redelivered';
    const flows: SettlementFlows = { charged: 0, released: 0 };
    await ctx.transaction(async (tx) => {
      outcome = await settle(tx, data, flows);
    });
    settlements.inc({ outcome });
    // Here the transaction has committed (a rollback throws before this line): count the tokens.
    if (outcome === 'settled' || outcome === 'refunded') countSettlement(tokenFlowMetrics(metrics), outcome, flows);
  };

/** Counts a committed settlement's token flows (src/metrics.ts). */
export function countSettlement(tokens: ReturnType<typeof tokenFlowMetrics>, state: 'settled' | 'refunded', flows: SettlementFlows): void {
  tokens.charged(flows.charged);
  tokens.refunded(state, flows.released);
}
