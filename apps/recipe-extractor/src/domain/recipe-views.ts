import type {
  RecipeDefinition,
  RecipeDetailView,
  RecipeFieldView,
  RecipePage,
  RecipeRepairView,
  RecipeVersionOrigin,
  RecipeVersionView,
  RecipeView,
  RecipeWithVersion,
} from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { Prisma, PrismaClient, Recipe, RecipeRepair, RecipeVersion } from '../generated/prisma/client.js';
import { outputSchema } from './dsl/schema.js';

type Db = PrismaClient | Prisma.TransactionClient;

export function versionView(v: RecipeVersion): RecipeVersionView {
  const definition = v.definition as unknown as RecipeDefinition;
  return {
    id: v.id,
    version: v.version,
    dsl_version: v.dslVersion,
    fields: v.fields as unknown as RecipeFieldView[],
    schema: outputSchema(definition),
    definition,
    reason: v.reason,
    origin: v.origin as RecipeVersionOrigin,
    repair_reason: v.repairReason,
    repaired_from_version_id: v.repairedFromVersionId,
    created_at: v.createdAt.toISOString(),
  };
}

export function repairView(r: RecipeRepair): RecipeRepairView {
  return {
    id: r.id,
    status: r.status as RecipeRepairView['status'],
    reason: r.reason,
    from_version_id: r.fromVersionId,
    version_id: r.versionId,
    trigger_request_id: r.triggerRequestId,
    method: (r.method as RecipeRepairView['method']) ?? null,
    continuous: r.continuous,
    error: (r.error as RecipeRepairView['error']) ?? null,
    charged_tokens: r.chargedTokens,
    created_at: r.createdAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

/** A recipe's fields are its active version's, or while it is a draft its latest version's. */
export function recipeView(r: Recipe, shown: RecipeVersion | undefined): RecipeView {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    sample_url: r.sampleUrl,
    fields: (shown?.fields as unknown as RecipeFieldView[] | undefined) ?? [],
    advanced_schema: r.advancedSchema,
    status: r.status,
    active_version_id: r.activeVersionId,
    auto_repair_enabled: r.autoRepairEnabled,
    continuous_repair_confirmed_at: r.continuousRepairConfirmedAt?.toISOString() ?? null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

/** The tenant's recipe, or 404 (another tenant's recipe is indistinguishable from a missing one). */
export async function recipeOf(db: Db, tenantId: string, id: string): Promise<Recipe> {
  const r = await db.recipe.findUnique({ where: { id } });
  if (!r || r.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No such recipe.');
  return r;
}

/**
 * readRecipe as of one moment, for reads outside a write: the recipe, its versions and its repairs
 * come from three queries, and an automatic repair commits its version, the activation and its own
 * ending together. Under READ COMMITTED a repair committing between the queries showed up
 * `succeeded` with a version_id missing from `versions` (or the old active_version_id beside the
 * new version); one REPEATABLE READ snapshot sees the repair whole or not at all.
 */
export async function readRecipeSnapshot(db: PrismaClient, tenantId: string, id: string): Promise<RecipeDetailView> {
  return db.$transaction((tx) => readRecipe(tx, tenantId, id), { isolationLevel: 'RepeatableRead' });
}

export async function readRecipe(db: Db, tenantId: string, id: string): Promise<RecipeDetailView> {
  const r = await recipeOf(db, tenantId, id);
  const [versions, repairs] = await Promise.all([
    db.recipeVersion.findMany({ where: { recipeId: id }, orderBy: { version: 'desc' } }),
    db.recipeRepair.findMany({ where: { recipeId: id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 50 }),
  ]);
  const shown = versions.find((v) => v.id === r.activeVersionId) ?? versions[0];
  return { ...recipeView(r, shown), versions: versions.map(versionView), repairs: repairs.map(repairView) };
}

/** An offset page of the tenant's recipes, oldest first (stable while paging); optionally each with its active version. */
export async function listRecipes(
  db: PrismaClient,
  q: { tenantId: string; limit: number; offset: number; withActiveVersion: boolean },
): Promise<RecipePage<RecipeView | RecipeWithVersion>> {
  const [total, page] = await Promise.all([
    db.recipe.count({ where: { tenantId: q.tenantId } }),
    db.recipe.findMany({ where: { tenantId: q.tenantId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], skip: q.offset, take: q.limit }),
  ]);
  if (page.length === 0) return { total, items: [] };
  const activeIds = page.map((r) => r.activeVersionId).filter((v): v is string => v !== null);
  const drafts = page.filter((r) => r.activeVersionId === null).map((r) => r.id);
  const [active, latest] = await Promise.all([
    activeIds.length ? db.recipeVersion.findMany({ where: { id: { in: activeIds } } }) : [],
    drafts.length
      ? db.recipeVersion.findMany({
          where: { recipeId: { in: drafts } },
          orderBy: [{ recipeId: 'asc' }, { version: 'desc' }],
          distinct: ['recipeId'],
        })
      : [],
  ]);
  const byId = new Map(active.map((v) => [v.id, v]));
  const latestOf = new Map(latest.map((v) => [v.recipeId, v]));
  const items = page.map((r) => {
    const activeVersion = r.activeVersionId ? byId.get(r.activeVersionId) : undefined;
    const view = recipeView(r, activeVersion ?? latestOf.get(r.id));
    return q.withActiveVersion ? { ...view, active_version: activeVersion ? versionView(activeVersion) : null } : view;
  });
  return { total, items };
}
