import type { Request as ExRequest } from 'express';
import { Controller, Get, Query, Request, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../app.js';
import { listRecipes, recipeCapabilities } from '../domain/cabinet/recipes.js';
import { tenantOf } from './authentication.js';
import type { PublicErrorBody, RecipeCapabilities, RecipeList } from './models.js';

@Route('api/v1/client/recipes')
@Tags('Client API: recipes')
@Security('bearer')
@Response<PublicErrorBody>(401, 'Missing, invalid, expired or revoked bearer token')
export class ClientRecipesController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * The tenant's extraction recipes, as an offset page.
   * @param limit Page size, 1..100.
   * @param offset Items to skip, >= 0.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @isInt offset
   * @minimum offset 0
   */
  @Get()
  @Response<PublicErrorBody>(422, 'Bad limit or offset')
  public async listClientRecipes(@Request() req: ExRequest, @Query() limit: number = 20, @Query() offset: number = 0): Promise<RecipeList> {
    return listRecipes(this.deps, tenantOf(req).tenantId, { limit, offset }, 'client');
  }

  /** What the recipe feature offers: DSL version, limits, extraction field kinds, auto-repair and billing terms. */
  @Get('capabilities')
  public async getRecipeCapabilities(@Request() req: ExRequest): Promise<RecipeCapabilities> {
    return recipeCapabilities(this.deps, tenantOf(req).tenantId);
  }
}
