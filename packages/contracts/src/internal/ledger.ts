import { z } from 'zod';
import type { components } from '../openapi/types.js';
import { PROXY_NETWORK_TYPES, ROUTE_MODES, STAGES, type TokenStateName } from '../vocabulary.js';
import { endpoint } from './endpoint.js';

/**
 * The internal HTTP API of billing-ledger (`/internal/v1/*`): reservations and steps (called by
 * fetch-orchestrator), accounts (called by the gateway and its admin CLI). Amounts are tokens.
 */

type Schemas = components['schemas'];

const uuid = z.uuid();
const reference = z.string().min(1).max(200);

/** One request to reserve the base price of. */
export const ReserveItem = z.object({
  request_id: uuid,
  route_mode: z.enum(ROUTE_MODES),
  proxy_type: z.enum(PROXY_NETWORK_TYPES).nullable(),
  max_credits: z.number().int().min(1).nullable(),
});

export const ReserveBody = ReserveItem.extend({ tenant_id: uuid });
export type ReserveBody = z.infer<typeof ReserveBody>;

export const ReserveBatchBody = z.object({
  tenant_id: uuid,
  items: z.array(ReserveItem).min(1).max(1000),
});

/** A further paid step of a request (CAPTCHA solves, the browser stage of `auto`, traffic); totals so far. */
export const StepBody = z.object({
  step_id: z.string().min(1).max(100),
  stage: z.enum(STAGES).optional(),
  captcha_solves: z.number().int().min(0).default(0),
  traffic_bytes: z.number().int().min(0).default(0),
});

/**
 * A grant credits the tenant; `reference` makes it idempotent. Top-ups and corrections mint or remove
 * credits and have no HTTP route: operators run them with the ledger's admin CLI, on its database.
 */
export const FundingBody = z.object({
  amount: z.number().int().min(1).max(1_000_000_000),
  reference,
  memo: z.string().max(500).optional(),
});

export const StatementQuery = z.object({
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/** The admission quote (guarded pricing policy only). */
export interface LedgerQuote {
  policy: 'guarded';
  pricing_version: number;
  estimate_tokens: number;
  worst_case_tokens: number;
  max_credits_per_request: number | null;
  balance_after_tokens: number;
}

/** The ledger's answer to a reservation (single, or one item of a batch). */
export interface LedgerReservation {
  request_id: string;
  pricing_version: number;
  plan_id: string;
  route_mode: string;
  proxy_type: string;
  /** Base tokens held at admission: the submission's base_tokens. */
  base_tokens: number;
  /** Everything held for this request now (base, or the worst case, plus step holds). */
  held_tokens: number;
  /** Tokens charged by this call: 0 when it replays an existing reservation. */
  charged_tokens: number;
  balance_tokens: number;
  quote: LedgerQuote | null;
  replay: boolean;
  token_state: Exclude<TokenStateName, 'settlement_pending'>;
}

export interface LedgerReservationBatch {
  items: LedgerReservation[];
  balance_tokens: number;
  base_tokens: number;
  charged_tokens: number;
  held_tokens: number;
  replay: boolean;
}

export interface LedgerReservationDetail extends Omit<LedgerReservation, 'charged_tokens' | 'replay'> {
  tenant_id: string;
  max_credits: number | null;
  end_reason: string | null;
  charged_tokens: number | null;
  charged_base_tokens: number;
  captcha_solves: number;
  captcha_tokens: number;
  traffic_tokens: number;
  uncollected_tokens: number;
  created_at: string;
  resolved_at: string | null;
}

/** May the request take its next step? */
export interface LedgerStepAnswer {
  allowed: boolean;
  reason: 'budget_exhausted' | 'insufficient_credits' | null;
  projected_tokens: number;
  held_tokens: number;
  max_credits: number | null;
  remaining_tokens: number | null;
}

export interface LedgerFundingResult {
  transfer_id: string;
  created: boolean;
  balance_tokens: number;
}

/** The tenant's plan: prices of the pricing version and the recipe `billing` object. */
export interface LedgerPlan {
  plan_id: string;
  pricing_version: number;
  guarded_pricing: boolean;
  low_balance_threshold_tokens: number;
  prices: { network_class: string; tariff: string; tokens: number }[];
  recipe_billing: Schemas['RecipeBilling'];
}

/**
 * A credit lease's grant (issue 24): fetch-orchestrator asks for a block of the tenant's tokens to
 * admit its common requests from, without a ledger call each. `(lease_id, n)` is the idempotency
 * key of one grant: `n` = 1 opens the lease, each top-up is the next `n`; a replay answers the
 * amount first posted. The request that prompted it (`route_mode`, `proxy_type`) prices the
 * refusal: 402 `INSUFFICIENT_CREDITS`, nothing written, when the balance cannot cover even that
 * request, exactly as its reservation would be refused.
 */
export const LeaseGrantBody = z.object({
  tenant_id: uuid,
  lease_id: uuid,
  n: z.number().int().min(1).max(1_000_000),
  block_tokens: z.number().int().min(1).max(1_000_000_000),
  route_mode: z.enum(ROUTE_MODES),
  proxy_type: z.enum(PROXY_NETWORK_TYPES).nullable(),
});
export type LeaseGrantBody = z.infer<typeof LeaseGrantBody>;

/** A price row of the lease's pricing version, the plan's overrides applied. */
export interface LedgerPriceRow {
  network_class: string;
  tariff: 'http' | 'browser' | 'traffic_gib' | 'captcha';
  tokens: number;
}

/**
 * The answer to a grant: what was posted to the lease (`granted_tokens`, 0 when nothing was: the
 * lease no longer admits, or the plan's policy is not `standard`, which leases do not serve), and
 * what the orchestrator prices its admissions with (the same pure pricing as the ledger's,
 * `@wdr/kit/pricing`).
 */
export interface LedgerLeaseGrant {
  lease_id: string;
  n: number;
  granted_tokens: number;
  /** Everything granted to this lease so far. */
  lease_granted_tokens: number;
  plan_id: string;
  policy: 'standard' | 'guarded';
  pricing_version: number;
  prices: LedgerPriceRow[];
  /** Admissions from this lease end then; the ledger returns what is left at `return_after`. */
  admit_until: string;
  return_after: string;
  balance_tokens: number;
  replay: boolean;
}

/**
 * The early return of a lease that no longer admits: every token no request was admitted against
 * (granted - `held_tokens`, the sum of the holds its slot took) goes back to the tenant at once,
 * instead of at `return_after`; what the held requests do not use returns then. Idempotent per
 * lease: a repeat answers the amount first released.
 */
export const LeaseReleaseBody = z.object({
  tenant_id: uuid,
  held_tokens: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type LeaseReleaseBody = z.infer<typeof LeaseReleaseBody>;

export interface LedgerLeaseRelease {
  lease_id: string;
  released_tokens: number;
  replay: boolean;
}

/** What an LLM operation was for; the statement line's `type` says it too. */
export const LLM_OPERATION_KINDS = ['recipe_generation', 'recipe_repair'] as const;
export type LlmOperationKind = (typeof LLM_OPERATION_KINDS)[number];

/**
 * Preflight of a paid LLM operation (recipe generation or repair): hold the plan's
 * `preflight_required_balance_tokens` before any model is called (402 INSUFFICIENT_CREDITS, nothing
 * written, when the balance cannot cover it). `operation_id` is the idempotency key of the whole
 * operation: the same id holds once.
 */
export const LlmChargeHoldBody = z.object({
  tenant_id: uuid,
  operation_id: reference,
  kind: z.enum(LLM_OPERATION_KINDS),
  /** What the operation is, shown on the statement (e.g. the recipe). */
  memo: z.string().min(1).max(500),
});
export type LlmChargeHoldBody = z.infer<typeof LlmChargeHoldBody>;

/**
 * The operation ended: the exact charge, from the model's usage and the provider's cost, under the
 * plan's markup and token value, capped by `max_llm_charge_tokens`; a failed operation is charged
 * only when the plan's `failed_operations_charged`. Resolves the hold exactly once.
 */
export const LlmChargeSettleBody = z.object({
  tenant_id: uuid,
  outcome: z.enum(['succeeded', 'failed']),
  /** Model calls made, and their token usage as the provider reported it. */
  calls: z.number().int().min(0).max(1000),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  /** The provider's price of that usage, in nano-USD (the caller knows its model's prices). */
  provider_cost_nano_usd: z.number().int().min(0),
  memo: z.string().min(1).max(500),
});
export type LlmChargeSettleBody = z.infer<typeof LlmChargeSettleBody>;

export interface LedgerLlmCharge {
  operation_id: string;
  kind: LlmOperationKind;
  /** `held` (preflight passed, operation running), `charged`, `released` (nothing charged). */
  state: 'held' | 'charged' | 'released';
  held_tokens: number;
  /** Posted once settled (0 while held); never above max_llm_charge_tokens. */
  charged_tokens: number;
  /** Part of the charge the balance could not cover (written off, never overdrawn). */
  uncollected_tokens: number;
  balance_tokens: number;
  /** true when this call changed nothing (a repeated hold or settlement). */
  replay: boolean;
}

const reservationPath = '/internal/v1/reservations/:requestId';
const accountPath = '/internal/v1/accounts/:tenantId';
const tenant = { tenantId: uuid };

export const ledgerApi = {
  reserve: endpoint<LedgerReservation>()({
    method: 'POST',
    callers: ['fetch-orchestrator'],
    route: '/internal/v1/reservations',
    params: {},
    body: ReserveBody,
  }),
  reserveBatch: endpoint<LedgerReservationBatch>()({
    method: 'POST',
    callers: ['fetch-orchestrator'],
    route: '/internal/v1/reservations/batch',
    params: {},
    body: ReserveBatchBody,
  }),
  /** No service reads it back today; the reservation's holder may (tests and diagnostics read as the orchestrator). */
  readReservation: endpoint<LedgerReservationDetail>()({
    method: 'GET',
    callers: ['fetch-orchestrator'],
    route: reservationPath,
    params: { requestId: uuid },
  }),
  authorizeStep: endpoint<LedgerStepAnswer>()({
    method: 'POST',
    callers: ['fetch-orchestrator'],
    route: `${reservationPath}/steps`,
    params: { requestId: uuid },
    body: StepBody,
  }),
  /** Credit leases (issue 24): a grant or top-up of a lease, idempotent on (lease_id, n). */
  grantLease: endpoint<LedgerLeaseGrant>()({
    method: 'POST',
    callers: ['fetch-orchestrator'],
    route: '/internal/v1/leases',
    params: {},
    body: LeaseGrantBody,
  }),
  /** Credit leases: the early return of what a lease that stopped admitting never held. */
  releaseLease: endpoint<LedgerLeaseRelease>()({
    method: 'POST',
    callers: ['fetch-orchestrator'],
    route: '/internal/v1/leases/:leaseId/release',
    params: { leaseId: uuid },
    body: LeaseReleaseBody,
  }),
  grant: endpoint<LedgerFundingResult>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${accountPath}/grants`,
    params: tenant,
    body: FundingBody,
  }),
  balance: endpoint<Schemas['TokenBalance']>()({ method: 'GET', callers: ['gateway'], route: `${accountPath}/balance`, params: tenant }),
  statement: endpoint<Schemas['StatementPage']>()({
    method: 'GET',
    callers: ['gateway'],
    route: `${accountPath}/statement`,
    params: tenant,
    query: StatementQuery,
  }),
  usage: endpoint<Schemas['ProxyTrafficUsage']>()({ method: 'GET', callers: ['gateway'], route: `${accountPath}/usage`, params: tenant }),
  plan: endpoint<LedgerPlan>()({ method: 'GET', callers: ['gateway'], route: `${accountPath}/plan`, params: tenant }),
  /** Paid LLM operations (recipe generation and repair): preflight hold, then the exact charge. */
  holdLlmCharge: endpoint<LedgerLlmCharge>()({
    method: 'POST',
    callers: ['recipe-extractor'],
    route: '/internal/v1/llm-charges',
    params: {},
    body: LlmChargeHoldBody,
  }),
  settleLlmCharge: endpoint<LedgerLlmCharge>()({
    method: 'POST',
    callers: ['recipe-extractor'],
    route: '/internal/v1/llm-charges/:operationId/settle',
    params: { operationId: reference },
    body: LlmChargeSettleBody,
  }),
} as const;
