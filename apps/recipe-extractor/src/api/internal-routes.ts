import { Router } from 'express';
import {
  COLLECTION_SOURCE_TYPES,
  DSL_VERSION,
  extractorApi as api,
  SCALAR_SOURCE_TYPES,
  SCALAR_TYPES,
  type ExtractorCapabilities,
} from '@wdr/contracts';
import { parseOrThrow as parse, PublicError } from '@wdr/kit/errors';
import { generationDepsOf, type ExtractorDeps } from '../deps.js';
import { listRecipes, readRecipeSnapshot } from '../domain/recipe-views.js';
import { activateVersion, createRecipe, createVersion, deleteRecipe, updateRecipe } from '../domain/recipe-writes.js';
import { createRun, lookupRuns, readRun } from '../domain/runs.js';
import { generateVersion } from '../domain/generation/generate.js';

/** What this deployment offers, from its configuration (the gateway adds the ledger's billing terms). */
export function capabilitiesOf(deps: Pick<ExtractorDeps, 'env'>): ExtractorCapabilities {
  const env = deps.env;
  return {
    enabled: env.RECIPES_ENABLED,
    dsl_version: DSL_VERSION,
    generation_max_attempts: env.RECIPE_GENERATION_MAX_ATTEMPTS,
    limits: {
      default_page_size: 20,
      max_page_size: 100,
      max_prompt_length: env.RECIPE_MAX_PROMPT_LENGTH,
      max_schema_bytes: env.RECIPE_MAX_SCHEMA_BYTES,
      max_rules: env.RECIPE_MAX_RULES,
      max_selectors_per_rule: env.RECIPE_MAX_SELECTORS_PER_RULE,
    },
    extraction_fields: {
      scalar_types: [...SCALAR_TYPES],
      scalar_source_types: [...SCALAR_SOURCE_TYPES],
      object_collections: true,
      max_object_nesting_depth: env.RECIPE_MAX_OBJECT_NESTING_DEPTH,
      collection_source_types: [...COLLECTION_SOURCE_TYPES],
      collection_scope_selector: 'css',
    },
    auto_repair: {
      enabled: env.RECIPES_ENABLED && env.RECIPE_AUTO_REPAIR_ENABLED,
      automatic_repairs_per_window: env.RECIPE_AUTO_REPAIRS_PER_WINDOW,
      window_hours: env.RECIPE_REPAIR_WINDOW_HOURS,
      continuous_repair_requires_confirmation: true,
    },
  };
}

/**
 * RECIPES_ENABLED=false: nothing new is made. Creating a recipe, a version or a generation is
 * refused (and so is a submission naming a recipe, in createRun); the tenant's existing recipes
 * stay readable, and updating, activating or deleting them still works (a tenant can tidy up).
 */
function refuseWhenDisabled(deps: Pick<ExtractorDeps, 'env'>, what: string): void {
  if (deps.env.RECIPES_ENABLED) return;
  throw new PublicError(
    'VALIDATION_FAILED',
    `Structured extraction is not enabled on this deployment: ${what} is refused (capabilities: enabled false).`,
    {
      details: [{ field: 'recipes', issue: 'structured extraction is not enabled' }],
    },
  );
}

/** Internal API for the gateway; not exposed outside the cluster. Every call names the tenant. */
export function internalRoutes(deps: ExtractorDeps): Router {
  const r = Router();
  const writes = { db: deps.db, limits: deps.limits };

  r.get(api.capabilities.route, (_req, res) => {
    res.json(capabilitiesOf(deps));
  });
  r.get(api.listRecipes.route, async (req, res) => {
    const q = parse(api.listRecipes.query, req.query);
    res.json(
      await listRecipes(deps.db, {
        tenantId: q.tenant_id,
        limit: q.limit,
        offset: q.offset,
        withActiveVersion: q.with_active_version === 'true',
      }),
    );
  });
  r.post(api.createRecipe.route, async (req, res) => {
    const b = parse(api.createRecipe.body, req.body);
    refuseWhenDisabled(deps, 'creating a recipe');
    res.status(201).json(await createRecipe(writes, b.tenant_id, b.idempotency, b.recipe));
  });
  r.get(api.readRecipe.route, async (req, res) => {
    const id = parse(api.readRecipe.params.id, req.params['id']);
    const tenantId = parse(api.readRecipe.query.shape.tenant_id, req.query['tenant_id']);
    res.json(await readRecipeSnapshot(deps.db, tenantId, id));
  });
  r.post(api.updateRecipe.route, async (req, res) => {
    const id = parse(api.updateRecipe.params.id, req.params['id']);
    const b = parse(api.updateRecipe.body, req.body);
    res.json(await updateRecipe(writes, b.tenant_id, id, b.idempotency, b.patch));
  });
  r.post(api.deleteRecipe.route, async (req, res) => {
    const id = parse(api.deleteRecipe.params.id, req.params['id']);
    const b = parse(api.deleteRecipe.body, req.body);
    res.json(await deleteRecipe(writes, b.tenant_id, id, b.idempotency));
  });
  r.post(api.createVersion.route, async (req, res) => {
    const id = parse(api.createVersion.params.id, req.params['id']);
    const b = parse(api.createVersion.body, req.body);
    refuseWhenDisabled(deps, 'creating a version');
    res.status(201).json(await createVersion(writes, b.tenant_id, id, b.idempotency, b.version));
  });
  r.post(api.activateVersion.route, async (req, res) => {
    const id = parse(api.activateVersion.params.id, req.params['id']);
    const versionId = parse(api.activateVersion.params.versionId, req.params['versionId']);
    const b = parse(api.activateVersion.body, req.body);
    res.json(await activateVersion(writes, b.tenant_id, id, versionId, b.idempotency));
  });
  r.post(api.generateVersion.route, async (req, res) => {
    const id = parse(api.generateVersion.params.id, req.params['id']);
    const b = parse(api.generateVersion.body, req.body);
    refuseWhenDisabled(deps, 'generating a version');
    res.status(201).json(await generateVersion(generationDepsOf(deps), b.tenant_id, id, b.idempotency, b.generation));
  });
  r.post(api.createRun.route, async (req, res) => {
    const b = parse(api.createRun.body, req.body);
    res.status(201).json(await createRun(deps.db, deps.env.RECIPES_ENABLED, b));
  });
  // Before readRun: `lookup` is not a request id.
  r.post(api.lookupRuns.route, async (req, res) => {
    const b = parse(api.lookupRuns.body, req.body);
    res.json(await lookupRuns(deps.db, b.tenant_id, b.request_ids));
  });
  r.get(api.readRun.route, async (req, res) => {
    const requestId = parse(api.readRun.params.requestId, req.params['requestId']);
    const tenantId = parse(api.readRun.query.shape.tenant_id, req.query['tenant_id']);
    res.json(await readRun(deps.db, tenantId, requestId));
  });
  return r;
}
