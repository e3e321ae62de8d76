import type { Request as ExRequest } from 'express';
import { Controller, Example, Get, Query, Request, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { listRecipes } from '../domain/recipes/recipe-reads.js';
import { tenantOf } from './authentication.js';
import type { DataRecipeList, PublicErrorBody } from '../models/index.js';

@Route('api/v1/data/recipes')
@Tags('Data API: recipes')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key')
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
  @Example<DataRecipeList>({
    total: 1,
    limit: 20,
    offset: 0,
    has_more: false,
    items: [
      {
        id: '1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b',
        name: 'product',
        description: 'Title and price of a product page',
        sample_url: 'https://example.com/products/1',
        fields: [
          { name: 'title', type: 'string', required: true, multiple: false, description: 'Product title' },
          { name: 'price', type: 'number', required: false, multiple: false, description: 'Price in the page currency' },
        ],
        advanced_schema: false,
        status: 'draft',
        active_version_id: null,
        auto_repair_enabled: false,
        continuous_repair_confirmed_at: null,
        created_at: '2026-11-25T12:00:00.000Z',
        updated_at: '2026-11-25T12:00:00.000Z',
        active_version: null,
      },
    ],
  })
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or offset')
  public async listDataRecipes(
    @Request() req: ExRequest,
    @Query() limit: number = 20,
    @Query() offset: number = 0,
  ): Promise<DataRecipeList> {
    return listRecipes(this.deps, tenantOf(req).tenantId, { limit, offset }, 'data');
  }
}
