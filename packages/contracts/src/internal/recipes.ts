import { z } from 'zod';
import { endpoint } from './endpoint.js';

/**
 * recipe-extractor's internal HTTP API (`/internal/v1/*`), called by the gateway: recipes and their
 * versions (the cabinet's writes and both listings), the capabilities it is configured with, and
 * extraction runs (reserved at admission, read for the request detail and the extraction result).
 * Every call names the tenant; another tenant's recipe or run is a 404.
 *
 * The gateway has no PATCH or DELETE towards internal services (the kit's client speaks GET and
 * POST), so updates and deletes are POSTs to `.../update` and `.../delete`.
 */

const uuid = z.uuid();

// ---------------------------------------------------------------------------------------------
// DSL v1: a recipe version is a list of field rules. Each rule is both a field of the output
// schema (name, type, required, multiple, description) and how to find it in the page.

export const DSL_VERSION = 1;

/** Types a scalar field's value is coerced to. */
export const SCALAR_TYPES = ['string', 'number', 'integer', 'boolean', 'url', 'date'] as const;
export type ScalarType = (typeof SCALAR_TYPES)[number];

/** Where a scalar value is read from: the matched element, or structured data already in the page. */
export const SCALAR_SOURCE_TYPES = ['text', 'attribute', 'html', 'json_ld', 'microdata', 'opengraph'] as const;
export type ScalarSourceType = (typeof SCALAR_SOURCE_TYPES)[number];

/** How an object collection finds its items: a CSS scope selector, one item per match. */
export const COLLECTION_SOURCE_TYPES = ['css'] as const;

/** Sources that read an element matched by the rule's `selectors`. */
export const ELEMENT_SOURCES: readonly ScalarSourceType[] = ['text', 'attribute', 'html'];

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const ExtractionSource = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('html') }),
  z.strictObject({ type: z.literal('attribute'), name: z.string().min(1).max(200) }),
  /** A dotted path into the page's JSON-LD (`offers.price`), in the first object of `item_type` (`Product`) when given. */
  z.strictObject({ type: z.literal('json_ld'), path: z.string().min(1).max(500), item_type: z.string().min(1).max(200).optional() }),
  /** The first `[itemprop=...]` (inside the collection item when in one): its `content`, `href`/`src`, or text. */
  z.strictObject({ type: z.literal('microdata'), itemprop: z.string().min(1).max(200) }),
  /** `<meta property="og:title" content="...">`. */
  z.strictObject({ type: z.literal('opengraph'), property: z.string().min(1).max(200) }),
]);
export type ExtractionSource = z.infer<typeof ExtractionSource>;

export interface FieldRule {
  name: string;
  type: ScalarType | 'object';
  required?: boolean | undefined;
  multiple?: boolean | undefined;
  description?: string | undefined;
  /** CSS selectors tried in order; the first that matches wins (element sources). */
  selectors?: string[] | undefined;
  /** Default `{type: 'text'}`. */
  source?: ExtractionSource | undefined;
  /** Object fields: the CSS selector of each item; its `fields` are read inside it. */
  scope?: string | undefined;
  fields?: FieldRule[] | undefined;
}

export const FieldRule: z.ZodType<FieldRule> = z.lazy(() =>
  z.strictObject({
    name: z.string().regex(FIELD_NAME, 'must be an identifier of at most 64 characters'),
    type: z.enum([...SCALAR_TYPES, 'object']),
    required: z.boolean().optional(),
    multiple: z.boolean().optional(),
    description: z.string().max(1000).optional(),
    selectors: z.array(z.string().min(1).max(500)).optional(),
    source: ExtractionSource.optional(),
    scope: z.string().min(1).max(500).optional(),
    fields: z.array(FieldRule).optional(),
  }),
);

/** A recipe version's definition. */
export const RecipeDefinition = z.strictObject({
  dsl_version: z.literal(DSL_VERSION),
  fields: z.array(FieldRule).min(1),
});
export type RecipeDefinition = z.infer<typeof RecipeDefinition>;

// ---------------------------------------------------------------------------------------------
// Views (what recipe-extractor answers; the gateway passes them through).

export interface RecipeFieldView {
  name: string;
  type: string;
  required: boolean;
  multiple: boolean;
  description: string;
}

export interface RecipeVersionView {
  id: string;
  version: number;
  dsl_version: number;
  fields: RecipeFieldView[];
  /** JSON Schema (2020-12) of the output, derived from the rules. */
  schema: Record<string, unknown>;
  definition: RecipeDefinition;
  /** Why it exists: `created` (by the tenant), `generated:<method>`, `repaired:<method>`. */
  reason: string;
  /** Who made it: the tenant, a generation, or an automatic repair. */
  origin: RecipeVersionOrigin;
  /** Repairs only: what failed on live pages (e.g. `REQUIRED_FIELDS_MISSING in 3 of the last 5 runs: price`). */
  repair_reason: string | null;
  /** Repairs only: the active version that was failing. */
  repaired_from_version_id: string | null;
  created_at: string;
}

export const RECIPE_VERSION_ORIGINS = ['tenant', 'generation', 'repair'] as const;
export type RecipeVersionOrigin = (typeof RECIPE_VERSION_ORIGINS)[number];

export const RECIPE_REPAIR_STATUSES = ['queued', 'succeeded', 'failed'] as const;

/**
 * One automatic repair attempt (the audit trail beside the versions): triggered by the run that
 * crossed the failure threshold, ended with a new active version or a failure saying why.
 */
/** Why a recipe repair failed (recipe-extractor, `domain/repairs/run-repair.ts`). */
export const REPAIR_ERROR_CODES = ['REPAIR_FAILED', 'NOTHING_TO_REPAIR', 'PAGE_UNAVAILABLE', 'RECIPE_VERSION_GONE'] as const;
export type RepairErrorCode = (typeof REPAIR_ERROR_CODES)[number];

export interface RecipeRepairView {
  id: string;
  status: (typeof RECIPE_REPAIR_STATUSES)[number];
  reason: string;
  from_version_id: string;
  /** The version the repair saved; null unless it succeeded. */
  version_id: string | null;
  trigger_request_id: string;
  /** How the repaired rules were found (`heuristic` or `llm`); null until it ended. */
  method: 'heuristic' | 'llm' | null;
  /** Beyond the per-window allowance, allowed by the recipe's continuous-repair confirmation. */
  continuous: boolean;
  error: { code: RepairErrorCode; message: string; details?: { field: string; issue: string }[] } | null;
  /** Tokens charged for LLM calls (0 for the heuristic). */
  charged_tokens: number;
  created_at: string;
  finished_at: string | null;
}

export interface RecipeView {
  id: string;
  name: string;
  description: string;
  sample_url: string;
  fields: RecipeFieldView[];
  advanced_schema: boolean;
  status: string;
  active_version_id: string | null;
  auto_repair_enabled: boolean;
  continuous_repair_confirmed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RecipeWithVersion extends RecipeView {
  active_version: RecipeVersionView | null;
}

export interface RecipeDetailView extends RecipeView {
  versions: RecipeVersionView[];
  /** Automatic repairs, newest first (at most the last 50). */
  repairs: RecipeRepairView[];
}

export interface RecipePage<T> {
  total: number;
  items: T[];
}

export interface RecipeLimitsView {
  default_page_size: number;
  max_page_size: number;
  max_prompt_length: number;
  max_schema_bytes: number;
  max_rules: number;
  max_selectors_per_rule: number;
}

/** The capabilities recipe-extractor is configured with (the gateway adds the ledger's billing terms). */
export interface ExtractorCapabilities {
  enabled: boolean;
  dsl_version: number;
  generation_max_attempts: number;
  limits: RecipeLimitsView;
  extraction_fields: {
    scalar_types: string[];
    scalar_source_types: string[];
    object_collections: boolean;
    max_object_nesting_depth: number;
    collection_source_types: string[];
    collection_scope_selector: string;
  };
  auto_repair: {
    enabled: boolean;
    automatic_repairs_per_window: number;
    window_hours: number;
    continuous_repair_requires_confirmation: boolean;
  };
}

export const EXTRACTION_RUN_STATUSES = ['waiting_for_page', 'queued', 'running', 'completed', 'failed'] as const;
export type ExtractionRunStatus = (typeof EXTRACTION_RUN_STATUSES)[number];

/** Why an extraction run failed (recipe-extractor writes these; the public document enumerates them, ExtractionError). */
export const EXTRACTION_ERROR_CODES = [
  'REQUIRED_FIELDS_MISSING',
  'PAGE_NOT_COMPLETED',
  'PAGE_UNAVAILABLE',
  'PAGE_TOO_LARGE',
  'RECIPE_VERSION_GONE',
  'SCHEMA_VIOLATION',
  'EXTRACTION_BUDGET_EXCEEDED',
] as const;
export type ExtractionErrorCode = (typeof EXTRACTION_ERROR_CODES)[number];

export interface ExtractionRunView {
  run_id: string;
  request_id: string;
  recipe_id: string;
  version_id: string;
  status: ExtractionRunStatus;
  /** The page fetch's terminal status as the extraction job reported it; null before. */
  page_status: string | null;
  /** `{code, message, details?}` of a failed run. */
  error: { code: ExtractionErrorCode; message: string; details?: { field: string; issue: string }[] } | null;
  /** The extracted object, validated against the version's field schema; null unless completed. */
  data: Record<string, unknown> | null;
  /** Optional fields that were not found or could not be coerced (the run still completed). */
  warnings: { field: string; issue: string }[];
  retried_from_run_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

// ---------------------------------------------------------------------------------------------
// Bodies.

/**
 * The idempotency of a client write: `key_id` derives from (tenant, Idempotency-Key) (the gateway
 * generates a key when the header is absent), `input_hash` from the operation, its path and its
 * body. The same key_id with the same hash replays the stored answer; with another hash it is 409.
 */
export const Idempotency = z.object({ key_id: uuid, input_hash: z.string().length(64) });

const recipeName = z.string().trim().min(1, 'must not be empty').max(200, 'length must be <= 200');
const recipeDescription = z.string().max(2000, 'length must be <= 2000');
const sampleUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(4096, 'length must be <= 4096');

/** What a tenant sends to create a recipe (the gateway checks the public model, recipe-extractor this). */
export const RecipeCreateInput = z.strictObject({
  name: recipeName,
  description: recipeDescription.optional(),
  sample_url: sampleUrl,
  advanced_schema: z.boolean().optional(),
  auto_repair_enabled: z.boolean().optional(),
  /** Version 1, created with the recipe. */
  definition: z.unknown().optional(),
  /** Activate version 1 at once (default false: the recipe stays `draft`). */
  activate: z.boolean().optional(),
});

export const RecipeUpdateInput = z.strictObject({
  name: recipeName.optional(),
  description: recipeDescription.optional(),
  sample_url: sampleUrl.optional(),
  advanced_schema: z.boolean().optional(),
  auto_repair_enabled: z.boolean().optional(),
  /** true records now as the confirmation of continuous repair; false withdraws it. */
  continuous_repair_confirmed: z.boolean().optional(),
});

export const VersionCreateInput = z.strictObject({
  definition: z.unknown(),
  activate: z.boolean().optional(),
});

/**
 * Ask recipe-extractor to generate a version (beyond the spec). `prompt` says what to extract;
 * the page is `sample_url` (default: the recipe's), fetched directly under the target policy, or
 * `sample_request_id`, a completed request of the tenant whose stored page is read back (the
 * platform's ordinary path: HTTP or browser, billed as a request). `method`: `auto` (LLM when one
 * is configured, the heuristic for the last attempt), `heuristic`, `llm`. Lengths and attempts are
 * checked against the capabilities by recipe-extractor.
 */
export const GenerateInput = z.strictObject({
  prompt: z.string().trim().min(1, 'must not be empty'),
  sample_url: sampleUrl.optional(),
  sample_request_id: uuid.optional(),
  method: z.enum(['auto', 'heuristic', 'llm']).optional(),
  activate: z.boolean().optional(),
});
export type GenerateInput = z.infer<typeof GenerateInput>;

/** One attempt of a generation: which generator, and why it was not kept (empty when kept). */
export interface GenerationAttemptView {
  attempt: number;
  method: 'heuristic' | 'llm';
  outcome: 'accepted' | 'rejected' | 'error';
  issues: { field: string; issue: string }[];
}

/** The answer of a generation: the version saved (a draft unless `activate`), how it was found, and its output on the sample page. */
export interface GenerationView {
  version: RecipeVersionView;
  method: 'heuristic' | 'llm';
  attempts: GenerationAttemptView[];
  sample: { data: Record<string, unknown>; warnings: { field: string; issue: string }[] };
}

const tenantScoped = { tenant_id: uuid };
const write = { tenant_id: uuid, idempotency: Idempotency };

export const ListRecipesQuery = z.object({
  tenant_id: uuid,
  limit: z.coerce.number().int().min(1).max(100),
  offset: z.coerce.number().int().min(0),
  /** `true`: each item carries its active version (the data API's listing). */
  with_active_version: z.enum(['true', 'false']).default('false'),
});

export const CreateRecipeBody = z.object({ ...write, recipe: z.unknown() });
export const UpdateRecipeBody = z.object({ ...write, patch: z.unknown() });
export const DeleteRecipeBody = z.object(write);
export const CreateVersionBody = z.object({ ...write, version: z.unknown() });
export const ActivateVersionBody = z.object(write);
export const RecipeScope = z.object(tenantScoped);
export const GenerateVersionBody = z.object({ ...write, generation: z.unknown() });

/**
 * The extraction run of a request. Admission calls it twice: with `validate_only` before the
 * request is created (a bad recipe is refused before anything is charged; nothing is written),
 * then for real once the request exists (idempotent by request id).
 */
export const CreateRunBody = z.object({
  validate_only: z.boolean().optional(),
  tenant_id: uuid,
  request_id: uuid,
  recipe_id: uuid,
  version_id: uuid.optional(),
  /** The target's origin (never its path): what relative URLs in the page resolve against. */
  page_origin: z.url().max(4096).optional(),
  retried_from_run_id: uuid.optional(),
});
export type CreateRunBody = z.infer<typeof CreateRunBody>;

/** The runs of several requests at once (a page of the request list): at most 100 ids. */
export const LookupRunsBody = z.object({ tenant_id: uuid, request_ids: z.array(uuid).max(100) });

const recipePath = '/internal/v1/recipes/:id';
const runPath = '/internal/v1/extraction-runs/:requestId';

export const extractorApi = {
  capabilities: endpoint<ExtractorCapabilities>()({ method: 'GET', callers: ['gateway'], route: '/internal/v1/capabilities', params: {} }),
  listRecipes: endpoint<RecipePage<RecipeWithVersion>>()({
    method: 'GET',
    callers: ['gateway'],
    route: '/internal/v1/recipes',
    params: {},
    query: ListRecipesQuery,
  }),
  createRecipe: endpoint<RecipeDetailView>()({
    method: 'POST',
    callers: ['gateway'],
    route: '/internal/v1/recipes',
    params: {},
    body: CreateRecipeBody,
  }),
  /** The tenant_id query is parsed on its own (`query.shape.tenant_id`). */
  readRecipe: endpoint<RecipeDetailView>()({
    method: 'GET',
    callers: ['gateway'],
    route: recipePath,
    params: { id: uuid },
    query: RecipeScope,
  }),
  updateRecipe: endpoint<RecipeDetailView>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${recipePath}/update`,
    params: { id: uuid },
    body: UpdateRecipeBody,
  }),
  deleteRecipe: endpoint<{ deleted: true }>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${recipePath}/delete`,
    params: { id: uuid },
    body: DeleteRecipeBody,
  }),
  createVersion: endpoint<RecipeVersionView>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${recipePath}/versions`,
    params: { id: uuid },
    body: CreateVersionBody,
  }),
  activateVersion: endpoint<RecipeDetailView>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${recipePath}/versions/:versionId/activate`,
    params: { id: uuid, versionId: uuid },
    body: ActivateVersionBody,
  }),
  /** Synchronous: answers once the version is saved (or every attempt failed); bounded by the attempts and LLM_TIMEOUT_MS. */
  generateVersion: endpoint<GenerationView>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${recipePath}/generate`,
    params: { id: uuid },
    body: GenerateVersionBody,
  }),
  createRun: endpoint<ExtractionRunView | null>()({
    method: 'POST',
    callers: ['gateway'],
    route: '/internal/v1/extraction-runs',
    params: {},
    body: CreateRunBody,
  }),
  /** The tenant_id query is parsed on its own (`query.shape.tenant_id`). */
  readRun: endpoint<ExtractionRunView>()({
    method: 'GET',
    callers: ['gateway'],
    route: runPath,
    params: { requestId: uuid },
    query: RecipeScope,
  }),
  /** The tenant's runs among `request_ids` (requests without one are left out). */
  lookupRuns: endpoint<{ items: ExtractionRunView[] }>()({
    method: 'POST',
    callers: ['gateway'],
    route: '/internal/v1/extraction-runs/lookup',
    params: {},
    body: LookupRunsBody,
  }),
} as const;
