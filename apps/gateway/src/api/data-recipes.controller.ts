import type { Request as ExRequest } from 'express';
import { Controller, Example, Get, Query, Request, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { listRecipes } from '../domain/recipes/recipe-reads.js';
import { tenantOf } from './authentication.js';
import type { DataRecipeList, PublicErrorBody, RateLimitedHeaders } from '../models/index.js';
import { listDataRecipesExample } from '../models/examples/data-recipes.js';
import {
  dependencyUnavailableError,
  internalError,
  unauthenticatedError,
  validationFailedError,
  rateLimitedError,
} from '../models/examples/errors.js';

@Route('api/v1/data/recipes')
@Tags('Data API: recipes')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
@Response<PublicErrorBody>(
  503,
  'DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly',
  dependencyUnavailableError,
)
export class DataRecipesController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * The tenant's extraction recipes with each active version and its field schema, as an offset page.
   * @summary List extraction recipes
   * @param limit Page size, 1..100.
   * @param offset Items to skip, 0..10000.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @isInt offset
   * @minimum offset 0
   * @maximum offset 10000
   */
  @Get()
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<DataRecipeList>(listDataRecipesExample)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or offset', validationFailedError)
  public async listDataRecipes(
    @Request() req: ExRequest,
    @Query() limit: number = 20,
    @Query() offset: number = 0,
  ): Promise<DataRecipeList> {
    return listRecipes(this.deps, tenantOf(req).tenantId, { limit, offset }, 'data');
  }
}
