import { z } from 'zod';
import { extractorApi, ledgerApi } from '@wdr/contracts';
import { parseOrThrow } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { DataRecipeList, RecipeCapabilities, RecipeDetail, RecipeList } from '../../models/index.js';
import { requireUuid } from '../reads/request-reads.js';

/**
 * Recipe reads of the data API and the client API: recipes are recipe-extractor's; the gateway
 * checks the paging rules of the spec (data API offset 0..10000, client API any offset >= 0) and
 * adds `has_more`.
 */
export const RECIPE_PAGE = { defaultLimit: 20, maxLimit: 100, maxDataOffset: 10_000 } as const;

const page = (maxOffset: number) =>
  z.object({
    limit: z
      .number()
      .int('must be an integer')
      .min(1, `must be 1..${RECIPE_PAGE.maxLimit}`)
      .max(RECIPE_PAGE.maxLimit, `must be 1..${RECIPE_PAGE.maxLimit}`),
    offset: z
      .number()
      .int('must be an integer')
      .min(0, 'must be >= 0')
      .max(maxOffset, maxOffset === Number.MAX_SAFE_INTEGER ? 'must be a safe integer' : `must be 0..${maxOffset}`),
  });

export async function listRecipes(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  query: { limit: number; offset: number },
  surface: 'client',
): Promise<RecipeList>;
export async function listRecipes(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  query: { limit: number; offset: number },
  surface: 'data',
): Promise<DataRecipeList>;
export async function listRecipes(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  query: { limit: number; offset: number },
  surface: 'data' | 'client',
): Promise<RecipeList | DataRecipeList> {
  const { limit, offset } = parseOrThrow(page(surface === 'data' ? RECIPE_PAGE.maxDataOffset : Number.MAX_SAFE_INTEGER), query);
  const found = await callInternal(deps.extractor, extractorApi.listRecipes, {
    query: { tenant_id: tenantId, limit, offset, with_active_version: surface === 'data' ? 'true' : 'false' },
  });
  return { total: found.total, limit, offset, has_more: offset + found.items.length < found.total, items: found.items } as
    RecipeList | DataRecipeList;
}

export async function readRecipe(deps: Pick<GatewayDeps, 'extractor'>, tenantId: string, id: string): Promise<RecipeDetail> {
  return callInternal(deps.extractor, extractorApi.readRecipe, {
    params: { id: requireUuid(id) },
    query: { tenant_id: tenantId },
  }) as Promise<RecipeDetail>;
}

/**
 * What the recipe feature offers this tenant: DSL version, limits, field kinds and auto-repair as
 * recipe-extractor is configured, and the `billing` terms of the tenant's plan from billing-ledger.
 */
export async function recipeCapabilities(deps: Pick<GatewayDeps, 'extractor' | 'ledger'>, tenantId: string): Promise<RecipeCapabilities> {
  const [offered, plan] = await Promise.all([
    callInternal(deps.extractor, extractorApi.capabilities, {}),
    callInternal(deps.ledger, ledgerApi.plan, { params: { tenantId } }),
  ]);
  return { ...offered, billing: plan.recipe_billing };
}
