import { randomUUID } from 'node:crypto';
import {
  DSL_VERSION,
  RecipeCreateInput,
  RecipeUpdateInput,
  VersionCreateInput,
  type RecipeDefinition,
  type RecipeDetailView,
  type RecipeVersionOrigin,
  type RecipeVersionView,
} from '@wdr/contracts';
import { parseOrThrow, PublicError } from '@wdr/kit/errors';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { DslLimits } from './dsl/validate.js';
import { validateDefinition } from './dsl/validate.js';
import { fieldViews } from './dsl/schema.js';
import { idempotentWrite, type IdempotencyClaim } from './idempotency.js';
import { readRecipe, recipeOf, versionView } from './recipe-views.js';

type Tx = Prisma.TransactionClient;

export interface WriteDeps {
  db: PrismaClient;
  limits: DslLimits;
}

/**
 * The cabinet's recipe writes. Each runs under its idempotency claim (see idempotency.ts) and
 * answers what the gateway shows; definitions are checked against DSL v1 and the configured limits
 * before anything is stored.
 */
export async function createRecipe(deps: WriteDeps, tenantId: string, claim: IdempotencyClaim, input: unknown): Promise<RecipeDetailView> {
  const body = parseOrThrow(RecipeCreateInput, input);
  const definition = body.definition === undefined ? undefined : validateDefinition(body.definition, deps.limits);
  if (body.activate && !definition) {
    throw new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: [{ field: 'activate', issue: 'needs a definition to activate' }],
    });
  }
  return idempotentWrite(deps.db, tenantId, claim, async (tx) => {
    const id = randomUUID();
    await tx.recipe.create({
      data: {
        id,
        tenantId,
        name: body.name,
        description: body.description ?? '',
        sampleUrl: body.sample_url,
        advancedSchema: body.advanced_schema ?? false,
        autoRepairEnabled: body.auto_repair_enabled ?? false,
      },
    });
    if (definition) {
      const v = await saveVersion(tx, id, definition);
      if (body.activate) await activate(tx, id, v.id);
    }
    return readRecipe(tx, tenantId, id);
  });
}

export async function updateRecipe(
  deps: WriteDeps,
  tenantId: string,
  id: string,
  claim: IdempotencyClaim,
  input: unknown,
): Promise<RecipeDetailView> {
  const patch = parseOrThrow(RecipeUpdateInput, input);
  return idempotentWrite(deps.db, tenantId, claim, async (tx) => {
    await recipeOf(tx, tenantId, id);
    await tx.recipe.update({
      where: { id },
      data: {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.sample_url !== undefined ? { sampleUrl: patch.sample_url } : {}),
        ...(patch.advanced_schema !== undefined ? { advancedSchema: patch.advanced_schema } : {}),
        ...(patch.auto_repair_enabled !== undefined ? { autoRepairEnabled: patch.auto_repair_enabled } : {}),
        ...(patch.continuous_repair_confirmed !== undefined
          ? { continuousRepairConfirmedAt: patch.continuous_repair_confirmed ? new Date() : null }
          : {}),
        updatedAt: new Date(),
      },
    });
    return readRecipe(tx, tenantId, id);
  });
}

/** Deletes the recipe and its versions. Its runs stay readable; a run still waiting for its page fails when the page arrives. */
export async function deleteRecipe(deps: WriteDeps, tenantId: string, id: string, claim: IdempotencyClaim): Promise<{ deleted: true }> {
  return idempotentWrite(deps.db, tenantId, claim, async (tx) => {
    await recipeOf(tx, tenantId, id);
    await tx.recipe.delete({ where: { id } });
    return { deleted: true as const };
  });
}

export async function createVersion(
  deps: WriteDeps,
  tenantId: string,
  recipeId: string,
  claim: IdempotencyClaim,
  input: unknown,
): Promise<RecipeVersionView> {
  const body = parseOrThrow(VersionCreateInput, input);
  const definition = validateDefinition(body.definition, deps.limits);
  return idempotentWrite(deps.db, tenantId, claim, async (tx) => {
    await recipeOf(tx, tenantId, recipeId);
    const v = await saveVersion(tx, recipeId, definition);
    if (body.activate) await activate(tx, recipeId, v.id);
    else await tx.recipe.update({ where: { id: recipeId }, data: { updatedAt: new Date() } });
    return versionView(v);
  });
}

export async function activateVersion(
  deps: WriteDeps,
  tenantId: string,
  recipeId: string,
  versionId: string,
  claim: IdempotencyClaim,
): Promise<RecipeDetailView> {
  return idempotentWrite(deps.db, tenantId, claim, async (tx) => {
    await recipeOf(tx, tenantId, recipeId);
    await activate(tx, recipeId, versionId);
    return readRecipe(tx, tenantId, recipeId);
  });
}

/** Where a version comes from (generation and repair say so; the tenant's own versions are `created`). */
export interface VersionOrigin {
  reason: string;
  origin: RecipeVersionOrigin;
  repairReason?: string;
  repairedFromVersionId?: string;
}

/** The next version number comes from the recipe's counter (its row lock orders concurrent creates). */
export async function saveVersion(
  tx: Tx,
  recipeId: string,
  definition: RecipeDefinition,
  from: VersionOrigin = { reason: 'created', origin: 'tenant' },
) {
  const { lastVersion } = await tx.recipe.update({
    where: { id: recipeId },
    data: { lastVersion: { increment: 1 }, updatedAt: new Date() },
    select: { lastVersion: true },
  });
  return tx.recipeVersion.create({
    data: {
      id: randomUUID(),
      recipeId,
      version: lastVersion,
      dslVersion: DSL_VERSION,
      definition: definition as unknown as Prisma.InputJsonValue,
      fields: fieldViews(definition) as unknown as Prisma.InputJsonValue,
      reason: from.reason,
      origin: from.origin,
      repairReason: from.repairReason ?? null,
      repairedFromVersionId: from.repairedFromVersionId ?? null,
    },
  });
}

export async function activate(tx: Tx, recipeId: string, versionId: string): Promise<void> {
  const v = await tx.recipeVersion.findUnique({ where: { id: versionId } });
  if (!v || v.recipeId !== recipeId) throw new PublicError('NOT_FOUND', 'No such version of this recipe.');
  await tx.recipe.update({ where: { id: recipeId }, data: { activeVersionId: versionId, status: 'active', updatedAt: new Date() } });
}
