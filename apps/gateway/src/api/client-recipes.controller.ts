import type { Request as ExRequest } from 'express';
import {
  Body,
  Controller,
  Delete,
  Example,
  Get,
  Header,
  Patch,
  Path,
  Post,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { listRecipes, readRecipe, recipeCapabilities } from '../domain/recipes/recipe-reads.js';
import {
  activateRecipeVersion,
  createRecipe,
  createRecipeVersion,
  deleteRecipe,
  generateRecipeVersion,
  updateRecipe,
} from '../domain/recipes/recipe-writes.js';
import { tenantOf } from './authentication.js';
import type {
  CreateRecipeBody,
  CreateRecipeVersionBody,
  GenerateRecipeBody,
  PublicErrorBody,
  RecipeCapabilities,
  RecipeDetail,
  RecipeGeneration,
  RecipeList,
  RecipeVersion,
  UpdateRecipeBody,
} from '../models/index.js';
import {
  activateClientRecipeVersionExample,
  createClientRecipeExample,
  createClientRecipeVersionExample,
  generateClientRecipeVersionExample,
  getClientRecipeExample,
  getRecipeCapabilitiesExample,
  listClientRecipesExample,
  updateClientRecipeExample,
} from '../models/examples/client-recipes.js';
import {
  dependencyUnavailableError,
  idempotencyConflictError,
  insufficientCreditsError,
  internalError,
  malformedRequestError,
  notFoundError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/**
 * The tenant's extraction recipes. The listing and the capabilities are the spec's; the writes
 * (create, read, update, delete, versions, activation) are this service's design, documented in
 * docs/api.md "Recipes". Every write takes an optional Idempotency-Key (8..200): the same key with
 * the same write replays its answer, with another write it is 409 IDEMPOTENCY_CONFLICT; without it
 * every call is a new write.
 */
@Route('api/v1/client/recipes')
@Tags('Client API: recipes')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  503,
  'DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly',
  dependencyUnavailableError,
)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientRecipesController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * The tenant's extraction recipes, oldest first, as an offset page.
   * @param limit Page size, 1..100.
   * @param offset Items to skip, >= 0.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @isInt offset
   * @minimum offset 0
   * @summary List the tenant's recipes (cabinet)
   */
  @Example<RecipeList>(listClientRecipesExample)
  @Get()
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: limit or offset out of range', validationFailedError)
  public async listClientRecipes(@Request() req: ExRequest, @Query() limit: number = 20, @Query() offset: number = 0): Promise<RecipeList> {
    return listRecipes(this.deps, tenantOf(req).tenantId, { limit, offset }, 'client');
  }

  /**
   * What the recipe feature offers: DSL version, limits, extraction field kinds, auto-repair and billing terms.
   * @summary Read the recipe capabilities
   */
  @Example<RecipeCapabilities>(getRecipeCapabilitiesExample)
  @Get('capabilities')
  public async getRecipeCapabilities(@Request() req: ExRequest): Promise<RecipeCapabilities> {
    return recipeCapabilities(this.deps, tenantOf(req).tenantId);
  }

  /**
   * Create a recipe (status `draft`). With `definition` its version 1 is created too (checked
   * against DSL v1 and the capability limits: 422 VALIDATION_FAILED names each offending rule), and
   * `activate: true` makes it active at once.
   * @param idempotencyKey Length 8..200.
   * @summary Create a recipe
   * @example body {"name": "Product pages", "sample_url": "https://shop.example/p/trail-shoe-x", "definition": {"dsl_version": 1, "fields": [{"name": "title", "type": "string", "required": true, "selectors": ["h1.title"]}, {"name": "price", "type": "number", "required": true, "selectors": [".price"]}]}, "activate": true}
   */
  @Example<RecipeDetail>(createClientRecipeExample)
  @Post()
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @SuccessResponse(201, 'Created')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: a field, a rule of the definition or a capability limit, each named in details',
    validationFailedError,
  )
  public async createClientRecipe(
    @Request() req: ExRequest,
    @Body() body: CreateRecipeBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<RecipeDetail> {
    const recipe = await createRecipe(this.deps, tenantOf(req).tenantId, idempotencyKey, body);
    this.setStatus(201);
    return recipe;
  }

  /**
   * One recipe of the tenant with all its versions, newest first, and its automatic repairs (why
   * each was made, how it ended, what it cost). Another tenant's recipe is a 404.
   * @summary Read a recipe with its versions and repairs
   */
  @Example<RecipeDetail>(getClientRecipeExample)
  @Get('{id}')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such recipe', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid', validationFailedError)
  public async getClientRecipe(@Request() req: ExRequest, @Path() id: string): Promise<RecipeDetail> {
    return readRecipe(this.deps, tenantOf(req).tenantId, id);
  }

  /**
   * Change a recipe's name, description, sample URL or flags. Its rules change by adding a version.
   * `auto_repair_enabled` turns automatic repair on; `continuous_repair_confirmed: true` records
   * the confirmation that allows repairs beyond `automatic_repairs_per_window` (false withdraws it).
   * @param idempotencyKey Length 8..200.
   * @summary Update a recipe's settings
   * @example body {"name": "Product pages (v2)", "auto_repair_enabled": true}
   */
  @Example<RecipeDetail>(updateClientRecipeExample)
  @Patch('{id}')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such recipe', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: a field, a rule of the definition or a capability limit, each named in details',
    validationFailedError,
  )
  public async updateClientRecipe(
    @Request() req: ExRequest,
    @Path() id: string,
    @Body() body: UpdateRecipeBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<RecipeDetail> {
    return updateRecipe(this.deps, tenantOf(req).tenantId, idempotencyKey, id, body);
  }

  /**
   * Delete a recipe and its versions. Extraction results already stored stay readable; a request
   * still waiting for its page when its recipe is deleted ends with a failed run (RECIPE_VERSION_GONE).
   * @param idempotencyKey Length 8..200.
   * @summary Delete a recipe
   */
  @Delete('{id}')
  @SuccessResponse(204, 'Deleted')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such recipe', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  public async deleteClientRecipe(
    @Request() req: ExRequest,
    @Path() id: string,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    await deleteRecipe(this.deps, tenantOf(req).tenantId, idempotencyKey, id);
    this.setStatus(204);
  }

  /**
   * Add a version (the next number) with new rules; `activate: true` makes it the active one.
   * @param idempotencyKey Length 8..200.
   * @summary Add a recipe version
   * @example body {"definition": {"dsl_version": 1, "fields": [{"name": "title", "type": "string", "required": true, "selectors": ["h1.title"]}, {"name": "price", "type": "number", "required": true, "selectors": [".price"]}]}, "activate": true}
   */
  @Example<RecipeVersion>(createClientRecipeVersionExample)
  @Post('{id}/versions')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @SuccessResponse(201, 'Created')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such recipe', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: a field, a rule of the definition or a capability limit, each named in details',
    validationFailedError,
  )
  public async createClientRecipeVersion(
    @Request() req: ExRequest,
    @Path() id: string,
    @Body() body: CreateRecipeVersionBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<RecipeVersion> {
    const version = await createRecipeVersion(this.deps, tenantOf(req).tenantId, idempotencyKey, id, body);
    this.setStatus(201);
    return version;
  }

  /**
   * Make a version the active one (status becomes `active`); also how to roll back to an earlier version.
   * Submissions naming the recipe without a version use the active one.
   * @param idempotencyKey Length 8..200.
   * @summary Activate a recipe version
   */
  @Example<RecipeDetail>(activateClientRecipeVersionExample)
  @Post('{id}/versions/{versionId}/activate')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such recipe or version', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  public async activateClientRecipeVersion(
    @Request() req: ExRequest,
    @Path() id: string,
    @Path() versionId: string,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<RecipeDetail> {
    return activateRecipeVersion(this.deps, tenantOf(req).tenantId, idempotencyKey, id, versionId);
  }

  /**
   * Generate a version from a prompt and a sample page (beyond the spec), synchronously: at most
   * `generation_max_attempts` attempts, each one's rules run on the sample page; the first that
   * finds every required field (and something) is saved as a new version, a draft unless
   * `activate`. The offline heuristic reads structured data (JSON-LD, microdata, OpenGraph), the
   * `<h1>`, label/value pairs and repeated blocks; the LLM (when the deployment has one) any
   * chat-completions server. No attempt worked: 422 with each attempt's issues, nothing saved.
   * Model calls are billed per the capabilities' `billing` terms: a preflight hold of
   * `preflight_required_balance_tokens` before the first call (402 INSUFFICIENT_CREDITS, nothing
   * called, when the balance is short), then the exact charge of the model's usage, shown on the
   * statement as `recipe_generation`; a failed generation is charged only when
   * `failed_operations_charged`. The heuristic (`method: heuristic`) is not charged.
   * @param idempotencyKey Length 8..200; a replay answers the saved generation without generating again.
   * @summary Generate a recipe version from a prompt
   * @example body {"prompt": "the product's title and price", "sample_url": "https://shop.example/p/trail-shoe-x", "method": "auto", "activate": true}
   */
  @Example<RecipeGeneration>(generateClientRecipeVersionExample)
  @Post('{id}/generate')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @SuccessResponse(201, 'Created')
  @Response<PublicErrorBody>(402, 'INSUFFICIENT_CREDITS: the balance does not cover the LLM preflight', insufficientCreditsError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such recipe', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the body, the sample page could not be read, or no attempt worked (details per attempt)',
    validationFailedError,
  )
  public async generateClientRecipeVersion(
    @Request() req: ExRequest,
    @Path() id: string,
    @Body() body: GenerateRecipeBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<RecipeGeneration> {
    const generation = await generateRecipeVersion(this.deps, tenantOf(req).tenantId, idempotencyKey, id, body);
    this.setStatus(201);
    return generation;
  }
}
