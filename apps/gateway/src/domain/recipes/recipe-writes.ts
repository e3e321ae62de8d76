import { randomUUID } from 'node:crypto';
import { extractorApi } from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { RecipeDetail, RecipeGeneration, RecipeVersion } from '../../models/index.js';
import { requireUuid } from '../reads/request-reads.js';
import { inputHashOf, requestIdFor, validateIdempotencyKey } from '../requests/data-requests.js';

/**
 * The cabinet's recipe writes (beyond the spec; docs/api.md "Recipes"). Like the other client
 * writes they take an optional Idempotency-Key: the claim sent to recipe-extractor derives from
 * (tenant, key), and the input hash covers the operation, its path ids and its body, so the same
 * key repeating the same write replays its answer and anything else under that key is 409
 * IDEMPOTENCY_CONFLICT. Without the header the server generates a key (every call is new).
 */
function claimOf(tenantId: string, idempotencyKey: string | undefined, operation: string, input: unknown) {
  validateIdempotencyKey(idempotencyKey);
  return {
    key_id: requestIdFor(tenantId, `recipes:${idempotencyKey ?? `server:${randomUUID()}`}`),
    input_hash: inputHashOf({ operation, input }),
  };
}

export async function createRecipe(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  key: string | undefined,
  body: unknown,
): Promise<RecipeDetail> {
  return callInternal(deps.extractor, extractorApi.createRecipe, {
    body: { tenant_id: tenantId, idempotency: claimOf(tenantId, key, 'create', body), recipe: body },
  }) as Promise<RecipeDetail>;
}

export async function updateRecipe(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  key: string | undefined,
  id: string,
  body: unknown,
): Promise<RecipeDetail> {
  const recipeId = requireUuid(id);
  return callInternal(deps.extractor, extractorApi.updateRecipe, {
    params: { id: recipeId },
    body: { tenant_id: tenantId, idempotency: claimOf(tenantId, key, 'update', { recipeId, body }), patch: body },
  }) as Promise<RecipeDetail>;
}

export async function deleteRecipe(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  key: string | undefined,
  id: string,
): Promise<void> {
  const recipeId = requireUuid(id);
  await callInternal(deps.extractor, extractorApi.deleteRecipe, {
    params: { id: recipeId },
    body: { tenant_id: tenantId, idempotency: claimOf(tenantId, key, 'delete', { recipeId }) },
  });
}

export async function createRecipeVersion(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  key: string | undefined,
  id: string,
  body: unknown,
): Promise<RecipeVersion> {
  const recipeId = requireUuid(id);
  return callInternal(deps.extractor, extractorApi.createVersion, {
    params: { id: recipeId },
    body: { tenant_id: tenantId, idempotency: claimOf(tenantId, key, 'create_version', { recipeId, body }), version: body },
  }) as Promise<RecipeVersion>;
}

export async function activateRecipeVersion(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  key: string | undefined,
  id: string,
  versionId: string,
): Promise<RecipeDetail> {
  const recipeId = requireUuid(id);
  const vid = requireUuid(versionId, 'versionId');
  return callInternal(deps.extractor, extractorApi.activateVersion, {
    params: { id: recipeId, versionId: vid },
    body: { tenant_id: tenantId, idempotency: claimOf(tenantId, key, 'activate', { recipeId, vid }) },
  }) as Promise<RecipeDetail>;
}

/**
 * Generation (beyond the spec): synchronous, recipe-extractor answers once a version is saved or
 * every attempt failed; the wait is bounded by its attempts (each LLM call by LLM_TIMEOUT_MS) and
 * the sample page's fetch.
 */
export async function generateRecipeVersion(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  key: string | undefined,
  id: string,
  body: unknown,
): Promise<RecipeGeneration> {
  const recipeId = requireUuid(id);
  return callInternal(deps.extractor, extractorApi.generateVersion, {
    params: { id: recipeId },
    body: { tenant_id: tenantId, idempotency: claimOf(tenantId, key, 'generate', { recipeId, body }), generation: body },
    timeoutMs: 300_000,
  }) as Promise<RecipeGeneration>;
}
