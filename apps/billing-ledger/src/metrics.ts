import type { ServiceMetrics } from '@wdr/kit/metrics';

/**
 * Token flows through the ledger, as counters an SRE can rate() and compare (docs/operations.md,
 * "Metrics"):
 *
 * - `billing_ledger_tokens_reserved_total`: tokens put on hold at admission (reserve, batch reserve);
 *   a replay holds nothing and counts nothing.
 * - `billing_ledger_tokens_charged_total`: tokens taken from tenants when a request is settled
 *   (from its holds, plus deferred items taken from the balance).
 * - `billing_ledger_tokens_refunded_total{state}`: held tokens given back to the tenant when a request
 *   is resolved: `state="refunded"` for a failed, cancelled or expired request (the whole hold),
 *   `state="settled"` for the part of a completed request's hold above what it cost.
 *
 * Every increment happens after the transaction that wrote the transfers committed, so an attempt
 * that rolled back (and is retried) is never counted; reserved - charged - refunded over a window
 * is then the change in tokens on hold.
 */
export interface TokenFlowMetrics {
  reserved(tokens: number): void;
  charged(tokens: number): void;
  refunded(state: 'settled' | 'refunded', tokens: number): void;
}

export function tokenFlowMetrics(metrics: ServiceMetrics): TokenFlowMetrics {
  const reserved = metrics.counter('tokens_reserved_total', 'Tokens put on hold at admission (replays excluded), counted after commit.', []);
  const charged = metrics.counter('tokens_charged_total', 'Tokens charged to tenants at settlement (holds + deferred items), counted after commit.', []);
  const refunded = metrics.counter(
    'tokens_refunded_total',
    'Held tokens returned to tenants at resolution, by resolved state (refunded: failed/cancelled/expired; settled: the hold above the cost), counted after commit.',
    ['state'],
  );
  // Label values exist from the start, so rate() and absent() work before the first settlement.
  refunded.inc({ state: 'settled' }, 0);
  refunded.inc({ state: 'refunded' }, 0);
  return {
    reserved: (n) => {
      if (n > 0) reserved.inc(n);
    },
    charged: (n) => {
      if (n > 0) charged.inc(n);
    },
    refunded: (state, n) => {
      if (n > 0) refunded.inc({ state }, n);
    },
  };
}
