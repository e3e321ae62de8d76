// The examples of client-recipes.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type { RecipeCapabilities, RecipeDetail, RecipeGeneration, RecipeList, RecipeVersion } from '../index.js';

export const listClientRecipesExample: RecipeList = {
  total: 1,
  limit: 20,
  offset: 0,
  has_more: false,
  items: [
    {
      id: '0b9f7c1e-3a6d-4c1e-9a51-2f0c8d7e6b10',
      name: 'Product pages',
      description: '',
      sample_url: 'https://shop.example/p/trail-shoe-x',
      fields: [
        {
          name: 'title',
          type: 'string',
          required: true,
          multiple: false,
          description: '',
        },
        {
          name: 'price',
          type: 'number',
          required: true,
          multiple: false,
          description: '',
        },
      ],
      advanced_schema: false,
      status: 'active',
      active_version_id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
      auto_repair_enabled: true,
      continuous_repair_confirmed_at: null,
      created_at: '2026-11-25T10:00:00.000Z',
      updated_at: '2026-11-25T10:00:00.000Z',
    },
  ],
};

export const getRecipeCapabilitiesExample: RecipeCapabilities = {
  enabled: true,
  dsl_version: 1,
  generation_max_attempts: 3,
  limits: {
    default_page_size: 20,
    max_page_size: 100,
    max_prompt_length: 4000,
    max_schema_bytes: 65536,
    max_rules: 100,
    max_selectors_per_rule: 5,
  },
  extraction_fields: {
    scalar_types: ['string', 'number', 'integer', 'boolean', 'url', 'date'],
    scalar_source_types: ['text', 'attribute', 'html', 'json_ld', 'microdata', 'opengraph'],
    object_collections: true,
    max_object_nesting_depth: 2,
    collection_source_types: ['css'],
    collection_scope_selector: 'css',
  },
  auto_repair: { enabled: true, automatic_repairs_per_window: 3, window_hours: 24, continuous_repair_requires_confirmation: true },
  billing: {
    plan_id: 'standard',
    charge_currency: 'tokens',
    charge_basis: 'llm_usage',
    user_token_value_nano_usd: 100000,
    markup_basis_points: 2000,
    max_llm_charge_tokens: 500,
    preflight_required_balance_tokens: 50,
    exact_charge_available_after_completion: true,
    failed_operations_charged: false,
    deterministic_execution_uses_standard_scrape_pricing: true,
  },
};

export const createClientRecipeExample: RecipeDetail = {
  id: '0b9f7c1e-3a6d-4c1e-9a51-2f0c8d7e6b10',
  name: 'Product pages',
  description: '',
  sample_url: 'https://shop.example/p/trail-shoe-x',
  fields: [
    {
      name: 'title',
      type: 'string',
      required: true,
      multiple: false,
      description: '',
    },
    {
      name: 'price',
      type: 'number',
      required: true,
      multiple: false,
      description: '',
    },
  ],
  advanced_schema: false,
  status: 'active',
  active_version_id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
  auto_repair_enabled: true,
  continuous_repair_confirmed_at: null,
  created_at: '2026-11-25T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:00.000Z',
  versions: [
    {
      id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
      version: 1,
      dsl_version: 1,
      fields: [
        {
          name: 'title',
          type: 'string',
          required: true,
          multiple: false,
          description: '',
        },
        {
          name: 'price',
          type: 'number',
          required: true,
          multiple: false,
          description: '',
        },
      ],
      schema: {
        type: 'object',
        required: ['title', 'price'],
        properties: {
          title: {
            type: 'string',
          },
          price: {
            type: 'number',
          },
        },
      },
      definition: {
        dsl_version: 1,
        fields: [
          {
            name: 'title',
            type: 'string',
            required: true,
            selectors: ['h1.title'],
          },
          {
            name: 'price',
            type: 'number',
            required: true,
            selectors: ['.price'],
          },
        ],
      },
      reason: 'created',
      origin: 'tenant',
      repair_reason: null,
      repaired_from_version_id: null,
      created_at: '2026-11-25T10:00:00.000Z',
    },
  ],
  repairs: [],
};

export const getClientRecipeExample: RecipeDetail = {
  id: '0b9f7c1e-3a6d-4c1e-9a51-2f0c8d7e6b10',
  name: 'Product pages',
  description: '',
  sample_url: 'https://shop.example/p/trail-shoe-x',
  fields: [
    {
      name: 'title',
      type: 'string',
      required: true,
      multiple: false,
      description: '',
    },
    {
      name: 'price',
      type: 'number',
      required: true,
      multiple: false,
      description: '',
    },
  ],
  advanced_schema: false,
  status: 'active',
  active_version_id: '7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b',
  auto_repair_enabled: true,
  continuous_repair_confirmed_at: null,
  created_at: '2026-11-25T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:00.000Z',
  versions: [
    {
      id: '7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b',
      version: 2,
      dsl_version: 1,
      fields: [
        {
          name: 'title',
          type: 'string',
          required: true,
          multiple: false,
          description: '',
        },
        {
          name: 'price',
          type: 'number',
          required: true,
          multiple: false,
          description: '',
        },
      ],
      schema: {
        type: 'object',
        required: ['title', 'price'],
        properties: {
          title: {
            type: 'string',
          },
          price: {
            type: 'number',
          },
        },
      },
      definition: {
        dsl_version: 1,
        fields: [
          {
            name: 'title',
            type: 'string',
            required: true,
            selectors: ['h1.title'],
          },
          {
            name: 'price',
            type: 'number',
            required: true,
            selectors: ['.price'],
          },
        ],
      },
      reason: 'repaired:heuristic',
      origin: 'repair',
      repair_reason: 'REQUIRED_FIELDS_MISSING in 3 of the last 10 runs (price)',
      repaired_from_version_id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
      created_at: '2026-11-25T10:00:00.000Z',
    },
    {
      id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
      version: 1,
      dsl_version: 1,
      fields: [
        {
          name: 'title',
          type: 'string',
          required: true,
          multiple: false,
          description: '',
        },
        {
          name: 'price',
          type: 'number',
          required: true,
          multiple: false,
          description: '',
        },
      ],
      schema: {
        type: 'object',
        required: ['title', 'price'],
        properties: {
          title: {
            type: 'string',
          },
          price: {
            type: 'number',
          },
        },
      },
      definition: {
        dsl_version: 1,
        fields: [
          {
            name: 'title',
            type: 'string',
            required: true,
            selectors: ['h1.title'],
          },
          {
            name: 'price',
            type: 'number',
            required: true,
            selectors: ['.price'],
          },
        ],
      },
      reason: 'created',
      origin: 'tenant',
      repair_reason: null,
      repaired_from_version_id: null,
      created_at: '2026-11-25T10:00:00.000Z',
    },
  ],
  repairs: [
    {
      id: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d',
      status: 'succeeded',
      reason: 'REQUIRED_FIELDS_MISSING in 3 of the last 10 runs (price)',
      from_version_id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
      version_id: '7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b',
      trigger_request_id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
      method: 'heuristic',
      continuous: false,
      error: null,
      charged_tokens: 0,
      created_at: '2026-11-25T10:00:00.000Z',
      finished_at: '2026-11-25T10:00:00.000Z',
    },
  ],
};

export const updateClientRecipeExample: RecipeDetail = {
  id: '0b9f7c1e-3a6d-4c1e-9a51-2f0c8d7e6b10',
  name: 'Product pages',
  description: '',
  sample_url: 'https://shop.example/p/trail-shoe-x',
  fields: [
    {
      name: 'title',
      type: 'string',
      required: true,
      multiple: false,
      description: '',
    },
    {
      name: 'price',
      type: 'number',
      required: true,
      multiple: false,
      description: '',
    },
  ],
  advanced_schema: false,
  status: 'active',
  active_version_id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
  auto_repair_enabled: true,
  continuous_repair_confirmed_at: null,
  created_at: '2026-11-25T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:00.000Z',
  versions: [
    {
      id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
      version: 1,
      dsl_version: 1,
      fields: [
        {
          name: 'title',
          type: 'string',
          required: true,
          multiple: false,
          description: '',
        },
        {
          name: 'price',
          type: 'number',
          required: true,
          multiple: false,
          description: '',
        },
      ],
      schema: {
        type: 'object',
        required: ['title', 'price'],
        properties: {
          title: {
            type: 'string',
          },
          price: {
            type: 'number',
          },
        },
      },
      definition: {
        dsl_version: 1,
        fields: [
          {
            name: 'title',
            type: 'string',
            required: true,
            selectors: ['h1.title'],
          },
          {
            name: 'price',
            type: 'number',
            required: true,
            selectors: ['.price'],
          },
        ],
      },
      reason: 'created',
      origin: 'tenant',
      repair_reason: null,
      repaired_from_version_id: null,
      created_at: '2026-11-25T10:00:00.000Z',
    },
  ],
  repairs: [],
};

export const createClientRecipeVersionExample: RecipeVersion = {
  id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
  version: 1,
  dsl_version: 1,
  fields: [
    {
      name: 'title',
      type: 'string',
      required: true,
      multiple: false,
      description: '',
    },
    {
      name: 'price',
      type: 'number',
      required: true,
      multiple: false,
      description: '',
    },
  ],
  schema: {
    type: 'object',
    required: ['title', 'price'],
    properties: {
      title: {
        type: 'string',
      },
      price: {
        type: 'number',
      },
    },
  },
  definition: {
    dsl_version: 1,
    fields: [
      {
        name: 'title',
        type: 'string',
        required: true,
        selectors: ['h1.title'],
      },
      {
        name: 'price',
        type: 'number',
        required: true,
        selectors: ['.price'],
      },
    ],
  },
  reason: 'created',
  origin: 'tenant',
  repair_reason: null,
  repaired_from_version_id: null,
  created_at: '2026-11-25T10:00:00.000Z',
};

export const activateClientRecipeVersionExample: RecipeDetail = {
  id: '0b9f7c1e-3a6d-4c1e-9a51-2f0c8d7e6b10',
  name: 'Product pages',
  description: '',
  sample_url: 'https://shop.example/p/trail-shoe-x',
  fields: [
    {
      name: 'title',
      type: 'string',
      required: true,
      multiple: false,
      description: '',
    },
    {
      name: 'price',
      type: 'number',
      required: true,
      multiple: false,
      description: '',
    },
  ],
  advanced_schema: false,
  status: 'active',
  active_version_id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
  auto_repair_enabled: true,
  continuous_repair_confirmed_at: null,
  created_at: '2026-11-25T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:00.000Z',
  versions: [
    {
      id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
      version: 1,
      dsl_version: 1,
      fields: [
        {
          name: 'title',
          type: 'string',
          required: true,
          multiple: false,
          description: '',
        },
        {
          name: 'price',
          type: 'number',
          required: true,
          multiple: false,
          description: '',
        },
      ],
      schema: {
        type: 'object',
        required: ['title', 'price'],
        properties: {
          title: {
            type: 'string',
          },
          price: {
            type: 'number',
          },
        },
      },
      definition: {
        dsl_version: 1,
        fields: [
          {
            name: 'title',
            type: 'string',
            required: true,
            selectors: ['h1.title'],
          },
          {
            name: 'price',
            type: 'number',
            required: true,
            selectors: ['.price'],
          },
        ],
      },
      reason: 'created',
      origin: 'tenant',
      repair_reason: null,
      repaired_from_version_id: null,
      created_at: '2026-11-25T10:00:00.000Z',
    },
  ],
  repairs: [],
};

export const generateClientRecipeVersionExample: RecipeGeneration = {
  version: {
    id: '5d1e2f3a-4b5c-4d6e-8f70-819203a4b5c6',
    version: 1,
    dsl_version: 1,
    fields: [
      {
        name: 'title',
        type: 'string',
        required: true,
        multiple: false,
        description: '',
      },
      {
        name: 'price',
        type: 'number',
        required: true,
        multiple: false,
        description: '',
      },
    ],
    schema: {
      type: 'object',
      required: ['title', 'price'],
      properties: {
        title: {
          type: 'string',
        },
        price: {
          type: 'number',
        },
      },
    },
    definition: {
      dsl_version: 1,
      fields: [
        {
          name: 'title',
          type: 'string',
          required: true,
          selectors: ['h1.title'],
        },
        {
          name: 'price',
          type: 'number',
          required: true,
          selectors: ['.price'],
        },
      ],
    },
    reason: 'generated:llm',
    origin: 'generation',
    repair_reason: null,
    repaired_from_version_id: null,
    created_at: '2026-11-25T10:00:00.000Z',
  },
  method: 'llm',
  attempts: [
    {
      attempt: 1,
      method: 'llm',
      outcome: 'accepted',
      issues: [],
    },
  ],
  sample: {
    data: {
      title: 'Trail Shoe X',
      price: 129.9,
    },
    warnings: [],
  },
};
