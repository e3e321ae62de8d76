import type { BatchHandler, EventHandler } from '@wdr/kit/kafka';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { RawSql } from '@wdr/kit/db';
import type { Prisma } from '../generated/prisma/client.js';
import { settle, settleBatch, type SettlementFlows, type SettlementResult } from '../domain/settlement.js';
import { tokenFlowMetrics } from '../metrics.js';

type Tx = Prisma.TransactionClient;

/** billing.commands -> resolve the reservation exactly once (one command; the fallback of onSettlementBatch). */
export const onSettlementRequested =
  (metrics: ServiceMetrics): EventHandler<Tx, 'billing.settlement_requested'> =>
  async (envelope, ctx) => {
    const { data } = envelope;
    let outcome = 'redelivered';
    const flows: SettlementFlows = { charged: 0, released: 0 };
    await ctx.transaction(async (tx) => {
      outcome = await settle(tx, data, flows);
    });
    // Here the transaction has committed (a rollback throws before this line): count the tokens.
    countSettlements(metrics, [outcome === 'redelivered' ? 'redelivered' : { outcome: outcome as SettlementResult['outcome'], flows }]);
  };

/**
 * billing.commands, a run of them -> resolve every reservation exactly once, in one transaction
 * that also records every command as processed (settleBatch: a fixed number of statements per
 * batch). Commands already processed are left out by the consumer; a batch that fails is handled
 * again one command at a time (onSettlementRequested).
 */
export const onSettlementBatch =
  (metrics: ServiceMetrics): BatchHandler<Tx, 'billing.settlement_requested'> =>
  async (envelopes, ctx) => {
    let results: SettlementResult[] = [];
    const work = async (tx: RawSql, todo: typeof envelopes) => {
      results = await settleBatch(
        tx,
        todo.map((e) => e.data),
        todo.map((e) => ctx.requestIdOf(e)),
      );
    };
    // settleBatch is raw SQL only: on the consumer's node-postgres connections when it has them.
    const fresh = ctx.transactionOnSql ? await ctx.transactionOnSql(work) : await ctx.transaction(work);
    // Committed: count each command once.
    countSettlements(metrics, [...results, ...Array.from({ length: envelopes.length - fresh.length }, () => 'redelivered' as const)]);
  };

function countSettlements(metrics: ServiceMetrics, results: (SettlementResult | 'redelivered')[]): void {
  const settlements = metrics.counter('settlements_total', 'Settlement commands applied, by outcome.', ['outcome']);
  const tokens = tokenFlowMetrics(metrics);
  for (const r of results) {
    settlements.inc({ outcome: r === 'redelivered' ? r : r.outcome });
    if (r !== 'redelivered' && r.outcome !== 'duplicate') countSettlement(tokens, r.outcome, r.flows);
  }
}

/** Counts a committed settlement's token flows (src/metrics.ts). */
export function countSettlement(tokens: ReturnType<typeof tokenFlowMetrics>, state: 'settled' | 'refunded', flows: SettlementFlows): void {
  tokens.charged(flows.charged);
  tokens.refunded(state, flows.released);
}
