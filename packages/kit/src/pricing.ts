import { PublicError } from './errors.js';

/**
 * The fleet's pure pricing: what admission holds for a request and what a finished request costs,
 * from a price book (a pricing version's rows with a plan's overrides). billing-ledger prices every
 * reservation and settlement with it; fetch-orchestrator prices a request admitted from a credit
 * lease with the same code and the price rows the lease's grant answered, so both sides agree.
 */

export type NetworkClass = 'datacenter' | 'residential' | 'premium';
export type Stage = 'http' | 'browser';
export type Tariff = Stage | 'traffic_gib' | 'captcha';

const RESIDENTIAL_MODES = new Set(['residential', 'residential_browser']);
const BROWSER_MODES = new Set(['browser', 'residential_browser']);
const GIB = 1n << 30n;

/**
 * The prices one reservation is billed with: the rows of one pricing version, with the plan's
 * overrides on top. Loaded once per transaction and kept on nothing else: prices are data.
 */
export interface PriceBook {
  pricingVersion: number;
  planId: string;
  prices: ReadonlyMap<string, number>;
}

const key = (networkClass: string, tariff: Tariff) => `${networkClass}:${tariff}`;

/** One price row: a version's (`override` false) or a plan's override of it. */
export type PriceRow = { network_class: string; tariff: Tariff; tokens: number; override: boolean };

export function priceBookOf(planId: string, pricingVersion: number, rows: PriceRow[]): PriceBook {
  const prices = new Map<string, number>();
  for (const r of rows) if (!r.override) prices.set(key(r.network_class, r.tariff), r.tokens);
  for (const r of rows) if (r.override) prices.set(key(r.network_class, r.tariff), r.tokens);
  return { planId, pricingVersion, prices };
}

export function priceOf(book: PriceBook, networkClass: string, tariff: Tariff): number | undefined {
  return book.prices.get(key(networkClass, tariff));
}

/** The per-request tariff of a stage; an unpriced network (premium without a plan price) is refused. */
export function stagePrice(book: PriceBook, networkClass: NetworkClass, stage: Stage): number {
  const tokens = priceOf(book, networkClass, stage);
  if (tokens === undefined) {
    throw new PublicError('VALIDATION_FAILED', `The ${networkClass} network is not priced for this plan.`, {
      details: [{ field: 'proxy_type', issue: `${networkClass} is not available` }],
    });
  }
  return tokens;
}

/** Items billed after execution; an item the plan does not price costs nothing. */
export const captchaPrice = (book: PriceBook) => priceOf(book, 'any', 'captcha') ?? 0;
export const trafficPricePerGib = (book: PriceBook, networkClass: string) => priceOf(book, networkClass, 'traffic_gib') ?? 0;

/** Measured proxy traffic in tokens, rounded up per request. */
export function trafficTokens(bytes: bigint, tokensPerGib: number): bigint {
  if (bytes <= 0n || tokensPerGib <= 0) return 0n;
  return (bytes * BigInt(tokensPerGib) + GIB - 1n) / GIB;
}

/** The network class the tariff is taken from: residential modes are residential; otherwise the selected proxy_type. */
export function networkClassOf(routeMode: string, proxyType: string | null): NetworkClass {
  if (RESIDENTIAL_MODES.has(routeMode)) return 'residential';
  return (proxyType as NetworkClass | null) ?? 'datacenter';
}

/** The stages a mode may end in: `auto` tries HTTP, then the browser. */
export function stagesOf(routeMode: string): Stage[] {
  if (BROWSER_MODES.has(routeMode)) return ['browser'];
  if (routeMode === 'auto') return ['http', 'browser'];
  return ['http'];
}

/** The stage a finished request is billed at: `auto` is billed at the stage it ended in (HTTP unless told). */
export function terminalStageOf(routeMode: string, terminalStage: Stage | undefined): Stage {
  if (routeMode === 'auto') return terminalStage ?? 'http';
  return stagesOf(routeMode)[0]!;
}

export interface Admission {
  networkClass: NetworkClass;
  /** Cheapest stage the mode can end in: the floor of max_credits_per_request. */
  minBase: number;
  /** Base tokens held at admission: the dearest stage, never above the ceiling. */
  base: number;
  /** What is held: `base`, or under the guarded policy the worst case. */
  hold: number;
  estimate: number;
  worstCase: number;
}

export interface PlanPolicy {
  guardedPricing: boolean;
  worstCaseCaptchaSolves: number;
  worstCaseTrafficBytes: bigint;
}

/**
 * What admission holds for a request. Standard policy: the base price of the dearest stage the mode
 * can end in. Guarded policy: the worst case (dearest stage + the plan's CAPTCHA and traffic
 * allowances), capped by max_credits_per_request, which is the hard ceiling of everything.
 */
export function admissionOf(
  book: PriceBook,
  plan: PlanPolicy,
  cmd: { route_mode: string; proxy_type: string | null; max_credits: number | null },
): Admission {
  const networkClass = networkClassOf(cmd.route_mode, cmd.proxy_type);
  const stagePrices = stagesOf(cmd.route_mode).map((s) => stagePrice(book, networkClass, s));
  const minBase = Math.min(...stagePrices);
  const maxBase = Math.max(...stagePrices);
  const ceiling = cmd.max_credits;
  if (ceiling !== null && ceiling < minBase) {
    throw new PublicError('BUDGET_BELOW_BASE_PRICE', `max_credits_per_request is below the base price of ${minBase} tokens.`, {
      details: [{ field: 'max_credits_per_request', issue: `must be >= ${minBase}` }],
    });
  }
  const cap = (n: number) => (ceiling === null ? n : Math.min(n, ceiling));
  const unbounded =
    maxBase +
    plan.worstCaseCaptchaSolves * captchaPrice(book) +
    Number(trafficTokens(plan.worstCaseTrafficBytes, trafficPricePerGib(book, networkClass)));
  const base = cap(maxBase);
  const worstCase = cap(unbounded);
  return { networkClass, minBase, base, hold: plan.guardedPricing ? worstCase : base, estimate: minBase, worstCase };
}

export interface CostLines {
  base: bigint;
  captcha: bigint;
  traffic: bigint;
  total: bigint;
}

/**
 * The cost of a request, capped at its ceiling: deferred items are cut first (traffic, then CAPTCHA),
 * so the lines always add up to the total.
 */
export function costOf(lines: { base: bigint; captcha: bigint; traffic: bigint }, ceiling: number | null): CostLines {
  let { base, captcha, traffic } = lines;
  if (ceiling !== null) {
    let over = base + captcha + traffic - BigInt(ceiling);
    for (const cut of ['traffic', 'captcha', 'base'] as const) {
      if (over <= 0n) break;
      const v = cut === 'traffic' ? traffic : cut === 'captcha' ? captcha : base;
      const d = v < over ? v : over;
      if (cut === 'traffic') traffic -= d;
      else if (cut === 'captcha') captcha -= d;
      else base -= d;
      over -= d;
    }
  }
  return { base, captcha, traffic, total: base + captcha + traffic };
}
