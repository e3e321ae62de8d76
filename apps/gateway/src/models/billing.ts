/**
 * Public shapes of the tenant's money: proxy traffic usage (SPEC "Proxy traffic usage"), and, beyond
 * the spec, the token balance and the itemised statement. All amounts are tokens; billing-ledger
 * owns them and the gateway passes them through.
 */
import type { ProxyNetworkType } from './index.js';

/** The six traffic counters of the usage report. */
export interface ProxyTrafficCounters {
  /** @isInt */
  request_bytes: number;
  /** @isInt */
  response_bytes: number;
  /** @isInt */
  total_bytes: number;
  /**
   * Tokens charged for proxy traffic.
   * @isInt
   */
  charged_tokens: number;
  /**
   * Requests charged for their traffic.
   * @isInt
   */
  charged_jobs: number;
  /**
   * Requests whose traffic could not be measured: counted here, never as zero bytes.
   * @isInt
   */
  measurement_unavailable_jobs: number;
}

export interface ProxyTrafficByType extends ProxyTrafficCounters {
  proxy_type: ProxyNetworkType;
}

export interface ProxyTraffic extends ProxyTrafficCounters {
  /** One entry per proxy type (datacenter, residential, premium), zeros included. */
  by_proxy_type: ProxyTrafficByType[];
}

/** GET /api/v1/data/usage: proxy traffic of the last 30 days. */
export interface ProxyTrafficUsage {
  /** @format date-time */
  period_start: string;
  /** @format date-time */
  period_end: string;
  /** @isInt */
  period_days: number;
  proxy_traffic: ProxyTraffic;
}

/** GET /api/v1/data/balance. */
export interface TokenBalance {
  /**
   * Tokens available for new requests now.
   * @isInt
   */
  balance_tokens: number;
  /**
   * Tokens held by requests in flight (released or charged when they finish), including what the
   * tenant's open credit leases still hold for requests to come (returned when the lease expires).
   * @isInt
   */
  reserved_tokens: number;
  plan_id: string;
  /**
   * Below this balance a `billing.balance_low` notification is sent.
   * @isInt
   */
  low_balance_threshold_tokens: number;
}

/**
 * One transfer on the tenant's account. `type`: `reservation` (tokens held at admission),
 * `step_hold` (more held during execution), `settlement` (a hold resolved: the charged part posted,
 * the rest released), `refund` (a hold released in full), `deferred_charge` (CAPTCHA or traffic
 * above what was held), `top_up`, `grant`, `correction`; with credit leases on: `lease_grant` (a
 * block of tokens set aside to admit requests from), `lease_use` (a request's charge taken from
 * it: balance effect 0, the grant already took it), `lease_return` (what the lease did not use).
 */
export interface StatementItem {
  transfer_id: string;
  /** @format date-time */
  created_at: string;
  type: string;
  /** `pending` (held), `post_pending` (hold resolved with a charge), `void_pending` (hold released), `posted`. */
  kind: 'pending' | 'post_pending' | 'void_pending' | 'posted';
  /** @isInt */
  amount_tokens: number;
  /**
   * What it did to the available balance (negative: less to spend). The effects of all items add
   * up to `balance_tokens`.
   * @isInt
   */
  balance_effect_tokens: number;
  /** The request it belongs to, if any. */
  request_id: string | null;
  /** Operator's note on top-ups, grants and corrections. */
  memo: string | null;
}

/** GET /api/v1/data/statement: newest first, cursor-paged. */
export interface StatementPage {
  items: StatementItem[];
  /** Opaque cursor for the next (older) page; null on the last page. */
  next_cursor: string | null;
}
