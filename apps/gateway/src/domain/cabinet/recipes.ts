import { z } from 'zod';
import { ledgerApi } from '@wdr/contracts';
import { parseOrThrow } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../app.js';
import type { DataRecipeList, RecipeCapabilities, RecipeList } from '../../api/models.js';

/**
 * Recipe listings of the data API and the client API. Recipes will be owned by recipe-extractor;
 * until it serves them the tenant has none, and both listings answer an empty, well-formed page
 * (the paging rules are enforced already, so clients written now keep working).
 */
export const RECIPE_PAGE = { defaultLimit: 20, maxLimit: 100, maxDataOffset: 10_000 } as const;

const page = (maxOffset: number) =>
  z.object({
    limit: z.number().int('must be an integer').min(1, `must be 1..${RECIPE_PAGE.maxLimit}`).max(RECIPE_PAGE.maxLimit, `must be 1..${RECIPE_PAGE.maxLimit}`),
    offset: z.number().int('must be an integer').min(0, 'must be >= 0').max(maxOffset, maxOffset === Number.MAX_SAFE_INTEGER ? 'must be a safe integer' : `must be 0..${maxOffset}`),
  });

export async function listRecipes(
  _deps: GatewayDeps,
  _tenantId: string,
  query: { limit: number; offset: number },
  surface: 'client',
): Promise<RecipeList>;
export async function listRecipes(_deps: GatewayDeps, _tenantId: string, query: { limit: number; offset: number }, surface: 'data'): Promise<DataRecipeList>;
export async function listRecipes(
  _deps: GatewayDeps,
  _tenantId: string,
  query: { limit: number; offset: number },
  surface: 'data' | 'client',
): Promise<RecipeList | DataRecipeList> {
  const { limit, offset } = parseOrThrow(page(surface === 'data' ? RECIPE_PAGE.maxDataOffset : Number.MAX_SAFE_INTEGER), query);
  // TODO(recipe-extractor): read the tenant's recipes from recipe-extractor's internal API once it owns them.
  const total = 0;
  return { total, limit, offset, has_more: offset + limit < total, items: [] };
}

/**
 * What the recipe feature offers this tenant. The `billing` object is billing-ledger's: the terms
 * of the tenant's plan (plan, token value, markup, preflight balance), read from the ledger.
 * TODO(recipe-extractor): read the limits and DSL facts from recipe-extractor when it serves recipes.
 */
export async function recipeCapabilities(deps: Pick<GatewayDeps, 'env' | 'ledger'>, tenantId: string): Promise<RecipeCapabilities> {
  const env = deps.env;
  const plan = await callInternal(deps.ledger, ledgerApi.plan, { params: { tenantId } });
  return {
    enabled: env.RECIPES_ENABLED,
    dsl_version: 1,
    generation_max_attempts: 3,
    limits: {
      default_page_size: RECIPE_PAGE.defaultLimit,
      max_page_size: RECIPE_PAGE.maxLimit,
      max_prompt_length: 4_000,
      max_schema_bytes: 65_536,
      max_rules: 100,
      max_selectors_per_rule: 5,
    },
    extraction_fields: {
      scalar_types: ['string', 'number', 'integer', 'boolean', 'url', 'date'],
      scalar_source_types: ['text', 'attribute', 'html'],
      object_collections: true,
      max_object_nesting_depth: 2,
      collection_source_types: ['css'],
      collection_scope_selector: 'css',
    },
    auto_repair: {
      enabled: env.RECIPES_ENABLED,
      automatic_repairs_per_window: 3,
      window_hours: 24,
      continuous_repair_requires_confirmation: true,
    },
    billing: plan.recipe_billing,
  };
}
