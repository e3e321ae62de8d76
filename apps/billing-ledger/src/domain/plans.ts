import { PublicError } from '@wdr/kit/errors';
import type { Plan, PrismaClient } from '../generated/prisma/client.js';
import { tenantAccount, tenantAccountId } from './accounts.js';
import { reviewBalanceAlert } from './balance-alerts.js';

/** The `billing` object of the recipe capabilities endpoint, from the tenant's plan. */
export interface RecipeBilling {
  plan_id: string;
  charge_currency: string;
  charge_basis: string;
  user_token_value_nano_usd: number;
  markup_basis_points: number;
  max_llm_charge_tokens: number;
  preflight_required_balance_tokens: number;
  exact_charge_available_after_completion: boolean;
  failed_operations_charged: boolean;
  deterministic_execution_uses_standard_scrape_pricing: boolean;
}

export interface PlanView {
  plan_id: string;
  pricing_version: number;
  guarded_pricing: boolean;
  low_balance_threshold_tokens: number;
  /** Effective prices of the pricing version for this plan (overrides applied). */
  prices: { network_class: string; tariff: string; tokens: number }[];
  recipe_billing: RecipeBilling;
}

function recipeBillingOf(p: Plan): RecipeBilling {
  return {
    plan_id: p.id,
    charge_currency: p.chargeCurrency,
    charge_basis: p.chargeBasis,
    user_token_value_nano_usd: Number(p.userTokenValueNanoUsd),
    markup_basis_points: p.markupBasisPoints,
    max_llm_charge_tokens: p.maxLlmChargeTokens,
    preflight_required_balance_tokens: p.preflightRequiredBalanceTokens,
    exact_charge_available_after_completion: p.exactChargeAvailableAfterCompletion,
    failed_operations_charged: p.failedOperationsCharged,
    deterministic_execution_uses_standard_scrape_pricing: p.deterministicExecutionUsesStandardScrapePricing,
  };
}

export async function planOf(db: PrismaClient, tenantId: string, pricingVersion: number): Promise<PlanView> {
  const account = await db.account.findUnique({ where: { id: tenantAccountId(tenantId) } });
  const plan = await db.plan.findUniqueOrThrow({ where: { id: account?.planId ?? 'standard' } });
  const prices = await db.$queryRawUnsafe<{ network_class: string; tariff: string; tokens: number }[]>(
    `SELECT DISTINCT ON (network_class, tariff) network_class, tariff, tokens FROM (
       SELECT network_class, tariff, tokens, 1 AS rank FROM plan_prices WHERE plan_id = $1 AND pricing_version = $2
       UNION ALL SELECT network_class, tariff, tokens, 2 AS rank FROM prices WHERE pricing_version = $2) p
     ORDER BY network_class, tariff, rank`,
    plan.id,
    pricingVersion,
  );
  return {
    plan_id: plan.id,
    pricing_version: pricingVersion,
    guarded_pricing: plan.guardedPricing,
    low_balance_threshold_tokens: plan.lowBalanceThresholdTokens,
    prices,
    recipe_billing: recipeBillingOf(plan),
  };
}

/** Move a tenant to another plan (operator command); applies to reservations made from now on. */
export async function setPlan(db: PrismaClient, tenantId: string, planId: string): Promise<{ plan_id: string }> {
  if (!(await db.plan.findUnique({ where: { id: planId } }))) {
    throw new PublicError('VALIDATION_FAILED', `No plan ${planId}.`, { details: [{ field: 'plan', issue: 'unknown plan' }] });
  }
  await db.$transaction(async (tx) => {
    const { id } = await tenantAccount(tx, tenantId);
    await tx.account.update({ where: { id }, data: { planId } });
    await reviewBalanceAlert(tx, id);
  });
  return { plan_id: planId };
}

export async function listPlans(db: PrismaClient): Promise<RecipeBilling[]> {
  return (await db.plan.findMany({ orderBy: { id: 'asc' } })).map(recipeBillingOf);
}
