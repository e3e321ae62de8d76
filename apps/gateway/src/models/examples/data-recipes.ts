// The examples of data-recipes.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type { DataRecipeList } from '../index.js';

export const listDataRecipesExample: DataRecipeList = {
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
};
