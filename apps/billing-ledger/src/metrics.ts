import type { ServiceMetrics } from '@wdr/kit/metrics';

/**
 * Token flows through the ledger, as counters an SRE can rate() and compare (docs/operations.md,
 * "Metrics"), each by `source`: `request` (data requests: reservations and their settlement) or
 * `llm` (paid LLM operations: preflight hold and exact charge):
 *
 * - `billing_ledger_tokens_reserved_total`: tokens put on hold (reserve, batch reserve, a step's
 *   extra hold; an LLM preflight hold); a replay holds nothing and counts nothing.
 * - `billing_ledger_tokens_charged_total`: tokens taken from tenants when the request or operation is
 *   settled (from its holds, plus what the balance covered beyond them).
 * - `billing_ledger_tokens_refunded_total{state}`: held tokens given back to the tenant:
 *   `state="refunded"` for a failed, cancelled or expired request or a released LLM operation (the
 *   whole hold), `state="settled"` for the part of a hold above what was charged.
 *
 * Every increment happens after the transaction that wrote the transfers committed, so an attempt
 * that rolled back (and is retried) is never counted; per source, reserved - charged - refunded over
 * a window is the change in tokens on hold (charges beyond the hold aside).
 */
export type TokenSource = 'request' | 'llm';

export interface TokenFlowMetrics {
  reserved(tokens: number, source?: TokenSource): void;
  charged(tokens: number, source?: TokenSource): void;
  refunded(state: 'settled' | 'refunded', tokens: number, source?: TokenSource): void;
}

export function tokenFlowMetrics(metrics: ServiceMetrics): TokenFlowMetrics {
  const reserved = metrics.counter(
    'tokens_reserved_total',
    'Tokens put on hold (replays excluded), by source (request, llm), counted after commit.',
    ['source'],
  );
  const charged = metrics.counter(
    'tokens_charged_total',
    'Tokens charged to tenants at settlement, by source (request, llm), counted after commit.',
    ['source'],
  );
  const refunded = metrics.counter(
    'tokens_refunded_total',
    'Held tokens returned to tenants, by source and resolved state (refunded: failed/cancelled/expired/released; settled: the hold above the charge), counted after commit.',
    ['source', 'state'],
  );
  // Series exist from the start, so rate() and absent() work before the first movement.
  for (const source of ['request', 'llm'] as const) {
    reserved.inc({ source }, 0);
    charged.inc({ source }, 0);
    refunded.inc({ source, state: 'settled' }, 0);
    refunded.inc({ source, state: 'refunded' }, 0);
  }
  return {
    reserved: (n, source = 'request') => {
      if (n > 0) reserved.inc({ source }, n);
    },
    charged: (n, source = 'request') => {
      if (n > 0) charged.inc({ source }, n);
    },
    refunded: (state, n, source = 'request') => {
      if (n > 0) refunded.inc({ source, state }, n);
    },
  };
}
