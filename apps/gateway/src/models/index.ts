/**
 * The public resource shapes of the API (docs/api.md), in its words. tsoa turns these into the OpenAPI document
 * (packages/contracts/openapi/openapi.json); other services use the TS types generated from it.
 */

/** Status of a request as reported by create, retry and list. */
export type DataJobStatus = 'pending' | 'running' | 'solving_captcha' | 'completed' | 'failed' | 'cancelled';

/** Status of a request as reported by its detail. */
export type DataVisibleStatus = DataJobStatus | 'waiting_for_page' | 'queued';

export type DataTokenState = 'reserved' | 'settlement_pending' | 'settled' | 'refunded';

export type RequestMode = 'direct' | 'auto' | 'browser' | 'http' | 'residential' | 'residential_browser';

export type RouteMode = RequestMode | 'mixed';

export type ProxyNetworkType = 'datacenter' | 'residential' | 'premium';

export type ResourcePolicy = 'adaptive' | 'compatible';

export type ProxySetting = 'random' | 'off';

/**
 * Browser actions, version 1 (the declared set; validated rule by rule, executed in order in a
 * fresh isolated browser context). Every action may set `optional: true`: its failure is counted
 * and the next action runs instead of the request failing with BROWSER_ACTION_FAILED.
 */
interface BrowserActionBase {
  /** When true, a failure of this action does not fail the request. */
  optional?: boolean;
}

/** Click the first element matching `selector`. A click that would navigate, open a popup or start a download is blocked and reported as blocked. */
export interface ClickAction extends BrowserActionBase {
  type: 'click';
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector: string;
}

/** Replace the value of an input, textarea or contenteditable element (input and change events fire). */
export interface FillAction extends BrowserActionBase {
  type: 'fill';
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector: string;
  /** @maxLength 10000 */
  value: string;
}

/** Focus the element and type the text key by key. */
export interface TypeAction extends BrowserActionBase {
  type: 'type';
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector: string;
  /**
   * @minLength 1
   * @maxLength 10000
   */
  text: string;
  /**
   * Delay between keys.
   * @isInt
   * @minimum 0
   * @maximum 200
   */
  delay_ms?: number;
}

/** Press one key (`Enter`, `Tab`, `ArrowDown`, or a single character), optionally after focusing an element. */
export interface PressAction extends BrowserActionBase {
  type: 'press';
  /**
   * @minLength 1
   * @maxLength 32
   */
  key: string;
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector?: string;
}

/** Move the pointer over the element. */
export interface HoverAction extends BrowserActionBase {
  type: 'hover';
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector: string;
}

/** Choose the options of a `<select>` with these values. */
export interface SelectAction extends BrowserActionBase {
  type: 'select';
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector: string;
  /**
   * @minItems 1
   * @maxItems 50
   */
  values: string[];
}

/** Scroll an element into view, the page to `top` or `bottom` (the default), or by `y` pixels; at most one of the three. */
export interface ScrollAction extends BrowserActionBase {
  type: 'scroll';
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector?: string;
  to?: 'top' | 'bottom';
  /**
   * @isInt
   * @minimum -100000
   * @maximum 100000
   */
  y?: number;
}

/** Wait a fixed time. */
export interface WaitAction extends BrowserActionBase {
  type: 'wait';
  /**
   * @isInt
   * @minimum 1
   * @maximum 10000
   */
  ms: number;
}

/** Wait until an element matching `selector` exists (or is visible). */
export interface WaitForSelectorAction extends BrowserActionBase {
  type: 'wait_for_selector';
  /**
   * @minLength 1
   * @maxLength 500
   */
  selector: string;
  /**
   * Default and upper bound: min(timeout_ms, 30000).
   * @isInt
   * @minimum 1
   * @maximum 30000
   */
  timeout_ms?: number;
  visible?: boolean;
}

/** Wait until the page's text contains `text`. */
export interface WaitForTextAction extends BrowserActionBase {
  type: 'wait_for_text';
  /**
   * @minLength 1
   * @maxLength 1000
   */
  text: string;
  /**
   * Default and upper bound: min(timeout_ms, 30000).
   * @isInt
   * @minimum 1
   * @maximum 30000
   */
  timeout_ms?: number;
}

/** The debug artifacts of a failed request (read one with GET .../debug-artifacts/{name}). */
export interface DebugArtifacts {
  items?: DebugArtifactItem[];
  /**
   * When they are purged.
   * @format date-time
   */
  expires_at?: string;
}

export interface DebugArtifactItem {
  /** `screenshot.png` or `report.json`. */
  name: string;
  content_type: string;
  /** @isInt */
  bytes: number;
}

/** One browser action (version 1), chosen by `type`. */
export type BrowserAction =
  | ClickAction
  | FillAction
  | TypeAction
  | PressAction
  | HoverAction
  | SelectAction
  | ScrollAction
  | WaitAction
  | WaitForSelectorAction
  | WaitForTextAction;

/** Body of POST /api/v1/data/requests. */
export interface CreateDataRequestBody {
  /**
   * @format uri
   * @maxLength 4096
   */
  url: string;
  mode?: RequestMode;
  /**
   * ISO 3166-1 alpha-2 country code, normalized to upper case.
   * @minLength 2
   * @maxLength 2
   * @pattern ^[A-Za-z]{2}$
   */
  geo_country?: string;
  /**
   * Hard ceiling on the total credits of this request (the ledger stores it as a 32-bit integer).
   * @isInt
   * @minimum 1
   * @maximum 2147483647
   */
  max_credits_per_request?: number;
  proxy?: ProxySetting;
  /** `premium` cannot be combined with proxy `off`. */
  proxy_type?: ProxyNetworkType;
  /**
   * Extra request headers. Names are HTTP tokens; names and values must not contain control
   * characters; hop-by-hop and transport-controlled headers (Host, Connection, Content-Length,
   * Transfer-Encoding, Keep-Alive, Upgrade, TE, Trailer, Expect, HTTP2-Settings, Accept-Encoding,
   * Cookie, Forwarded, Via, X-Real-IP, Proxy-*, X-Forwarded-*) are rejected. At most 100 entries.
   */
  headers?: Record<string, string>;
  /** Cookies sent to the target: names are HTTP tokens, values without control characters or `;`. At most 100 entries. */
  cookies?: Record<string, string>;
  /**
   * @isInt
   * @minimum 5000
   * @maximum 300000
   * @default 45000
   */
  timeout_ms?: number;
  /** @default true */
  javascript?: boolean;
  /** @default "adaptive" */
  resource_policy?: ResourcePolicy;
  /**
   * @minLength 1
   * @maxLength 500
   */
  wait_for_selector?: string;
  /**
   * @minLength 1
   * @maxLength 1000
   */
  user_agent?: string;
  /**
   * @minLength 1
   * @maxLength 500
   */
  result_text_selector?: string;
  /** At most 10,000 characters. */
  wait_for_text?: string | null;
  /**
   * Ordered declarative browser actions (version 1), each at most 4 KiB as JSON. A non-empty list
   * promotes http, direct and auto to browser (residential to residential_browser), enables
   * JavaScript, uses a fresh isolated context and bypasses the cache; the list is kept for retry.
   * Only aggregates are reported: `result_meta.actions = {run, failed, blocked, elapsed_ms}`.
   * @maxItems 20
   */
  browser_actions?: BrowserAction[];
  /** @default false */
  debug_artifacts?: boolean;
  /** @default false */
  skip_cache?: boolean;
  /**
   * @isInt
   * @minimum 0
   * @maximum 3600
   * @default 300
   */
  cache_ttl_seconds?: number;
  /** Structured extraction: run a recipe over the fetched page (see GET .../{id}/extraction). */
  extraction?: ExtractionSettings | null;
}

/** Response of create and retry. */
export interface SubmissionResponse {
  /** @format uuid */
  id: string;
  /** Target origin only. */
  url?: string;
  /**
   * The request's status; for an extraction request (`result_kind: extraction`) its readiness, as
   * in the detail: `waiting_for_page` until the page ended, then the extraction's status
   * (`page_status` is the page's).
   */
  status: DataVisibleStatus;
  cached: boolean;
  protected: boolean;
  /** @isInt */
  pricing_version: number;
  route_mode: RouteMode;
  proxy_type?: ProxyNetworkType;
  /** @isInt */
  base_tokens: number;
  /** @isInt */
  protected_tokens: number;
  /** @isInt */
  captcha_tokens: number;
  quote?: Record<string, unknown> | null;
  /** @format date-time */
  created_at: string;
  /** @isInt */
  charged_tokens: number;
  idempotent_replay: boolean;
  result_kind?: 'extraction';
  page_status?: string;
  /** Runs of a browser workflow only: what the run belongs to. */
  workflow_run?: WorkflowRunOrigin;
}

/** Response of GET /api/v1/data/requests/{id}. */
export interface RequestDetail {
  /** @format uuid */
  id: string;
  /** @format uuid */
  batch_id: string | null;
  /**
   * Target origin only.
   * @format uri
   */
  url: string;
  /** For structured extraction requests, the extraction-run status. */
  status: DataVisibleStatus;
  cached: boolean;
  protected: boolean;
  /**
   * @isInt
   * @minimum 1
   */
  pricing_version: number;
  /**
   * @isInt
   * @minimum 0
   */
  base_tokens: number;
  /**
   * @isInt
   * @minimum 0
   */
  protected_tokens: number;
  /**
   * @isInt
   * @minimum 0
   */
  captcha_tokens: number;
  captcha_type: 'captcha' | null;
  token_state: DataTokenState;
  /** The submitted options, without secrets: header and cookie values are reduced to their names. */
  request: Record<string, unknown>;
  /** What a failed request that opted in left for debugging; `{}` when nothing was kept. */
  debug_artifacts: DebugArtifacts;
  /** Set on failed and cancelled requests: `{code, message}` and where it failed (e.g. `stage`, `status_code`). */
  error: Record<string, unknown> | null;
  /** Set on failed and cancelled requests: `{code, message}` meant for the tenant. */
  user_error: Record<string, unknown> | null;
  /** Set on completed requests: `{stage, status_code, content_type, bytes, redirects, elapsed_ms}`. */
  result_meta: Record<string, unknown> | null;
  /** Redacted transport marker: `platform` or null. */
  proxy_used: 'platform' | null;
  /** @format date-time */
  created_at: string;
  /** @format date-time */
  started_at: string | null;
  /** @format date-time */
  finished_at: string | null;
  /** @format date-time */
  result_expires_at: string | null;
  /**
   * Present on a request created by a retry: the failed source request, kept unchanged.
   * @format uuid
   */
  retried_from_id?: string;
  /**
   * Extraction requests created by a retry: the source request's (failed) extraction run.
   * @format uuid
   */
  retried_from_run_id?: string;
  /** Extraction requests only. */
  result_kind?: 'extraction';
  /** Extraction requests only: the page fetch's status (`status` is the extraction run's). */
  page_status?: DataJobStatus;
  /** Extraction requests only: the page fetch's `error` (`error` is the run's). */
  page_error?: Record<string, unknown> | null;
  /** Extraction requests only: the page fetch's `user_error`. */
  page_user_error?: Record<string, unknown> | null;
  /** Extraction requests only. */
  extraction?: ExtractionState;
  /** Runs of a browser workflow only: what the run belongs to. */
  workflow_run?: WorkflowRunOrigin;
}

/** A request made by running a browser workflow (beyond the spec): its project, environment, workflow and version. */
export interface WorkflowRunOrigin {
  /** @format uuid */
  project_id: string;
  /** @format uuid */
  environment_id: string;
  /** @format uuid */
  workflow_id: string;
  /** @format uuid */
  workflow_version_id: string;
}

export interface FieldIssue {
  field: string;
  issue: string;
}

/**
 * The stable error codes of the public API, spelled out for the OpenAPI document (tsoa cannot read
 * the kit's `ERROR_CODES` array); openapi-document.test.ts fails when the two lists differ.
 * Each code has exactly one HTTP status: the kit's `ERROR_STATUS`, tabled in docs/api.md#errors.
 */
export type PublicErrorCode =
  | 'MALFORMED_REQUEST'
  | 'VALIDATION_FAILED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'IDEMPOTENCY_CONFLICT'
  | 'CONFLICT'
  | 'INSUFFICIENT_CREDITS'
  | 'PROJECT_BUDGET_EXHAUSTED'
  | 'BUDGET_BELOW_BASE_PRICE'
  | 'PAYLOAD_TOO_LARGE'
  | 'RESULT_EXPIRED'
  | 'RESULT_NOT_READY'
  | 'RATE_LIMITED'
  | 'CONCURRENCY_LIMITED'
  | 'PROXY_GEO_VERIFICATION_FAILED'
  | 'DEPENDENCY_UNAVAILABLE'
  | 'INTERNAL';

/** The one error body of the API. */
export interface PublicErrorBody {
  /** Stable machine-readable code; each has exactly one HTTP status (docs/api.md, Errors). */
  code: PublicErrorCode;
  message: string;
  request_id: string;
  details?: FieldIssue[];
}

/** Response of POST /api/v1/client/requests (the cabinet's submission). */
export interface CabinetRequestResponse {
  /** @format uuid */
  id: string;
  /** Target origin only. */
  url?: string;
  /** As SubmissionResponse's: an extraction request's readiness. */
  status: DataVisibleStatus;
  cached: boolean;
  protected: boolean;
  /** @isInt */
  base_tokens: number;
  /** @isInt */
  protected_tokens: number;
  /** @isInt */
  captcha_tokens: number;
  /** @format date-time */
  created_at: string;
  /** @isInt */
  charged_tokens: number;
  /** @isInt */
  pricing_version: number;
  route_mode: RouteMode;
  idempotent_replay: boolean;
  result_kind?: 'extraction';
  page_status?: string;
}

export interface RecipeField {
  name: string;
  /** A scalar type (`string`, `number`, `integer`, `boolean`, `url`, `date`) or `object`. */
  type: string;
  required: boolean;
  multiple: boolean;
  description: string;
}

/** An extraction recipe. Its `fields` are those of its active version (while a draft, of its latest version). */
export interface Recipe {
  /** @format uuid */
  id: string;
  name: string;
  description: string;
  /** @format uri */
  sample_url: string;
  fields: RecipeField[];
  advanced_schema: boolean;
  /** `draft` until a version is activated, then `active`. */
  status: string;
  /**
   * Null while no version is active.
   * @format uuid
   */
  active_version_id: string | null;
  auto_repair_enabled: boolean;
  /**
   * When continuous repair was confirmed; null when it was not.
   * @format date-time
   */
  continuous_repair_confirmed_at: string | null;
  /** @format date-time */
  created_at: string;
  /** @format date-time */
  updated_at: string;
}

/** Scalar types of DSL v1; values found in the page are coerced to them. */
export type RecipeScalarType = 'string' | 'number' | 'integer' | 'boolean' | 'url' | 'date';

/** The matched element's text (whitespace collapsed). */
export interface TextSource {
  type: 'text';
}
/** The matched element's inner HTML. */
export interface HtmlSource {
  type: 'html';
}
/** One attribute of the matched element (`href`, `src`, `content`, `datetime`...). */
export interface AttributeSource {
  type: 'attribute';
  /**
   * @minLength 1
   * @maxLength 200
   */
  name: string;
}
/** A dotted path (`offers.price`) into the page's JSON-LD, in the first object of `item_type` when given. Takes no selectors. */
export interface JsonLdSource {
  type: 'json_ld';
  /**
   * @minLength 1
   * @maxLength 500
   */
  path: string;
  /**
   * @minLength 1
   * @maxLength 200
   */
  item_type?: string;
}
/** The first `[itemprop]` of that name (inside the collection item when in one): its `content`, `href`/`src`, or text. Takes no selectors. */
export interface MicrodataSource {
  type: 'microdata';
  /**
   * @minLength 1
   * @maxLength 200
   */
  itemprop: string;
}
/** `<meta property="og:...">` content. Takes no selectors. */
export interface OpenGraphSource {
  type: 'opengraph';
  /**
   * @minLength 1
   * @maxLength 200
   */
  property: string;
}
export type ExtractionSource = TextSource | HtmlSource | AttributeSource | JsonLdSource | MicrodataSource | OpenGraphSource;

/**
 * One rule of DSL v1: a field of the output and how to find it. Scalar fields read `source`
 * (default text) from the first of `selectors` that matches (all matches when `multiple`).
 * `object` fields find their items with the CSS `scope` and read their own `fields` inside each
 * (one object, or an array when `multiple`), nested at most `max_object_nesting_depth` deep.
 */
export interface RecipeFieldRule {
  /** @pattern ^[A-Za-z_][A-Za-z0-9_]{0,63}$ */
  name: string;
  type: RecipeScalarType | 'object';
  /** A required field that is not found fails the run. */
  required?: boolean;
  multiple?: boolean;
  /** @maxLength 1000 */
  description?: string;
  /** CSS selectors tried in order (at most `max_selectors_per_rule`, counting `scope`). */
  selectors?: string[];
  source?: ExtractionSource;
  /** Object fields only: the CSS selector of each item. */
  scope?: string;
  /** Object fields only. */
  fields?: RecipeFieldRule[];
}

/** A recipe version's rules (DSL v1), at most `max_schema_bytes` as JSON and `max_rules` rules in all. */
export interface RecipeDefinition {
  /** Only 1. */
  dsl_version: number;
  /** @minItems 1 */
  fields: RecipeFieldRule[];
}

/** A recipe version with its rules and field schema (data API listings include the active one). */
export interface RecipeVersion {
  /** @format uuid */
  id: string;
  /** @isInt */
  version: number;
  /** @isInt */
  dsl_version: number;
  fields: RecipeField[];
  /** JSON Schema (2020-12) of a run's output. */
  schema: Record<string, unknown>;
  definition: RecipeDefinition;
  /** Why the version exists: `created` by the tenant, `generated:<method>`, `repaired:<method>`. */
  reason: string;
  /** Who made it: the tenant, a generation, or an automatic repair. */
  origin: 'tenant' | 'generation' | 'repair';
  /** Repairs only: what was failing on live pages, e.g. `REQUIRED_FIELDS_MISSING in 3 of the last 10 runs (price)`. */
  repair_reason: string | null;
  /**
   * Repairs only: the active version that was failing.
   * @format uuid
   */
  repaired_from_version_id: string | null;
  /** @format date-time */
  created_at: string;
}

/** One automatic repair of a recipe (beyond the spec): what triggered it and how it ended. */
export interface RecipeRepair {
  /** @format uuid */
  id: string;
  /** `queued` until carried out, then `succeeded` (a new version) or `failed` (`error` says why). */
  status: 'queued' | 'succeeded' | 'failed';
  /** The failures on live pages that triggered it. */
  reason: string;
  /** @format uuid */
  from_version_id: string;
  /**
   * The version it saved (activated while the repaired version was still the active one).
   * @format uuid
   */
  version_id: string | null;
  /**
   * The request whose failing page the repair was verified on.
   * @format uuid
   */
  trigger_request_id: string;
  method: 'heuristic' | 'llm' | null;
  /** Beyond `automatic_repairs_per_window`, allowed by `continuous_repair_confirmed_at`. */
  continuous: boolean;
  error: { code: RepairErrorCode; message: string; details?: FieldIssue[] } | null;
  /**
   * Tokens charged for the repair's LLM calls (0 for the heuristic).
   * @isInt
   */
  charged_tokens: number;
  /** @format date-time */
  created_at: string;
  /** @format date-time */
  finished_at: string | null;
}

/** A recipe with all its versions, newest first, and its automatic repairs (the last 50, newest first). */
export interface RecipeDetail extends Recipe {
  versions: RecipeVersion[];
  repairs: RecipeRepair[];
}

/** Body of POST /api/v1/client/recipes. */
export interface CreateRecipeBody {
  /**
   * @minLength 1
   * @maxLength 200
   */
  name: string;
  /** @maxLength 2000 */
  description?: string;
  /**
   * @format uri
   * @maxLength 4096
   */
  sample_url: string;
  advanced_schema?: boolean;
  auto_repair_enabled?: boolean;
  /** Creates version 1 with the recipe. */
  definition?: RecipeDefinition;
  /** Activate version 1 at once (default false: the recipe stays a `draft`). */
  activate?: boolean;
}

/** Body of PATCH /api/v1/client/recipes/{id}: only the fields given change. */
export interface UpdateRecipeBody {
  /**
   * @minLength 1
   * @maxLength 200
   */
  name?: string;
  /** @maxLength 2000 */
  description?: string;
  /**
   * @format uri
   * @maxLength 4096
   */
  sample_url?: string;
  advanced_schema?: boolean;
  auto_repair_enabled?: boolean;
  /** true records now as `continuous_repair_confirmed_at`; false clears it. */
  continuous_repair_confirmed?: boolean;
}

/** Body of POST /api/v1/client/recipes/{id}/versions. */
export interface CreateRecipeVersionBody {
  definition: RecipeDefinition;
  /** Activate the new version at once (default false). */
  activate?: boolean;
}

/**
 * Body of POST /api/v1/client/recipes/{id}/generate (beyond the spec).
 */
export interface GenerateRecipeBody {
  /** What to extract, in words; at most the capabilities' `limits.max_prompt_length` characters. */
  prompt: string;
  /**
   * The sample page, fetched directly over HTTP (no JavaScript, not billed); default the recipe's `sample_url`.
   * @format uri
   */
  sample_url?: string;
  /**
   * Instead of `sample_url`: a completed request of yours whose stored page is the sample (fetched
   * by the platform's ordinary path, HTTP or browser).
   * @format uuid
   */
  sample_request_id?: string;
  /** `auto` (default): the LLM when the deployment has one, the heuristic as the last attempt; `heuristic`; `llm`. */
  method?: 'auto' | 'heuristic' | 'llm';
  /** Activate the generated version at once (default false: it is saved as a draft version). */
  activate?: boolean;
}

/** One attempt of a generation. */
export interface GenerationAttempt {
  /** @isInt */
  attempt: number;
  method: 'heuristic' | 'llm';
  /** `accepted`: this attempt's rules worked on the sample page and were saved. */
  outcome: 'accepted' | 'rejected' | 'error';
  /** Why it was rejected; for an accepted heuristic attempt, the fields it left out. */
  issues: FieldIssue[];
}

/** Response of POST /api/v1/client/recipes/{id}/generate. */
export interface RecipeGeneration {
  /** The saved version (`reason`: `generated:heuristic` or `generated:llm`). */
  version: RecipeVersion;
  method: 'heuristic' | 'llm';
  /** At most `generation_max_attempts`. */
  attempts: GenerationAttempt[];
  /** The version's output on the sample page. */
  sample: { data: Record<string, unknown>; warnings: FieldIssue[] };
}

/** `extraction` of a submission: run this recipe over the fetched page. */
export interface ExtractionSettings {
  /** @format uuid */
  recipe_id: string;
  /**
   * A version of the recipe; default its active version (when it has none, the submission is refused).
   * @format uuid
   */
  version_id?: string;
}

/** Status of an extraction run: waiting for its page, queued, running, then completed or failed. */
export type ExtractionRunStatus = 'waiting_for_page' | 'queued' | 'running' | 'completed' | 'failed';

/** Why a recipe repair failed (recipe-extractor, `domain/repairs/run-repair.ts`). */
export type RepairErrorCode = 'REPAIR_FAILED' | 'NOTHING_TO_REPAIR' | 'PAGE_UNAVAILABLE' | 'RECIPE_VERSION_GONE';

/** The codes of a failed extraction run (recipe-extractor, `domain/run-extraction.ts`). */
export type ExtractionErrorCode =
  | 'REQUIRED_FIELDS_MISSING'
  | 'PAGE_NOT_COMPLETED'
  | 'PAGE_UNAVAILABLE'
  | 'PAGE_TOO_LARGE'
  | 'RECIPE_VERSION_GONE'
  | 'SCHEMA_VIOLATION'
  | 'EXTRACTION_BUDGET_EXCEEDED';

/** Why a run failed: `REQUIRED_FIELDS_MISSING` (details name each field), `PAGE_NOT_COMPLETED`, `PAGE_UNAVAILABLE`, `PAGE_TOO_LARGE`, `RECIPE_VERSION_GONE`, `SCHEMA_VIOLATION`, `EXTRACTION_BUDGET_EXCEEDED`. */
export interface ExtractionError {
  code: ExtractionErrorCode;
  message: string;
  details?: FieldIssue[];
}

/** The extraction state of a request (in its detail). */
export interface ExtractionState {
  /** @format uuid */
  run_id: string;
  /** @format uuid */
  recipe_id: string;
  /** @format uuid */
  version_id: string;
  status: ExtractionRunStatus;
  error: ExtractionError | null;
  /** @format uuid */
  retried_from_run_id: string | null;
}

/** Response of GET /api/v1/data/requests/{id}/extraction. */
export interface ExtractionResult extends ExtractionState {
  /** @format uuid */
  request_id: string;
  /** Status of the page fetch. */
  page_status: DataJobStatus;
  /** The extracted object, valid against the version's field schema; null unless completed. */
  data: Record<string, unknown> | null;
  /** Optional fields that were not found or not of their type (null or left out of a list). */
  warnings: FieldIssue[];
  /** @format date-time */
  created_at: string;
  /** @format date-time */
  started_at: string | null;
  /** @format date-time */
  finished_at: string | null;
}

export interface DataRecipe extends Recipe {
  active_version: RecipeVersion | null;
}

/** Recipe list envelope of the client API. */
export interface RecipeList {
  /**
   * @isInt
   * @minimum 0
   */
  total: number;
  /**
   * @isInt
   * @minimum 1
   */
  limit: number;
  /**
   * @isInt
   * @minimum 0
   */
  offset: number;
  has_more: boolean;
  items: Recipe[];
}

/** Recipe list envelope of the data API: each item carries its active version and field schema. */
export interface DataRecipeList {
  /**
   * @isInt
   * @minimum 0
   */
  total: number;
  /**
   * @isInt
   * @minimum 1
   */
  limit: number;
  /**
   * @isInt
   * @minimum 0
   */
  offset: number;
  has_more: boolean;
  items: DataRecipe[];
}

export interface RecipeLimits {
  /** @isInt */
  default_page_size: number;
  /** @isInt */
  max_page_size: number;
  /** @isInt */
  max_prompt_length: number;
  /** @isInt */
  max_schema_bytes: number;
  /** @isInt */
  max_rules: number;
  /** @isInt */
  max_selectors_per_rule: number;
}

export interface RecipeExtractionFields {
  scalar_types: string[];
  scalar_source_types: string[];
  object_collections: boolean;
  /** @isInt */
  max_object_nesting_depth: number;
  collection_source_types: string[];
  collection_scope_selector: string;
}

export interface RecipeAutoRepair {
  enabled: boolean;
  /** @isInt */
  automatic_repairs_per_window: number;
  /** @isInt */
  window_hours: number;
  continuous_repair_requires_confirmation: boolean;
}

export interface RecipeBilling {
  plan_id: string;
  charge_currency: string;
  charge_basis: string;
  /** @isInt */
  user_token_value_nano_usd: number;
  /** @isInt */
  markup_basis_points: number;
  /** @isInt */
  max_llm_charge_tokens: number;
  /** @isInt */
  preflight_required_balance_tokens: number;
  exact_charge_available_after_completion: boolean;
  failed_operations_charged: boolean;
  deterministic_execution_uses_standard_scrape_pricing: boolean;
}

/** Response of GET /api/v1/client/recipes/capabilities. */
export interface RecipeCapabilities {
  enabled: boolean;
  /** @isInt */
  dsl_version: number;
  /** @isInt */
  generation_max_attempts: number;
  limits: RecipeLimits;
  extraction_fields: RecipeExtractionFields;
  auto_repair: RecipeAutoRepair;
  billing: RecipeBilling;
}

/** Headers on every answer to a submission (IETF RateLimit draft). */
export interface RateLimitHeaders {
  'RateLimit-Limit': string;
  'RateLimit-Remaining': string;
  'RateLimit-Reset': string;
  'RateLimit-Policy': string;
}

/** Headers on a 429: when to come back, plus the policy's. */
export interface RateLimitedHeaders extends RateLimitHeaders {
  'Retry-After': string;
}

export type TenantApiKeyState = 'active' | 'revoked' | 'expired';

/**
 * One of the tenant's data API keys as the cabinet lists it: never the key itself (it is stored
 * only as a peppered HMAC and shown once, when issued). Last use is not tracked.
 */
export interface TenantApiKey {
  id: string;
  /** The key's lookup prefix: a key reads `wdr_<prefix>_<secret>`, so the tenant can tell which key this is. */
  prefix: string;
  label: string;
  created_at: string;
  /** Null: the key does not expire. */
  expires_at: string | null;
  /** When the key was revoked (by the tenant or an operator); null while it was not. */
  revoked_at: string | null;
  /** `expired`: past `expires_at` and not revoked. */
  state: TenantApiKeyState;
}

/** Response of GET /api/v1/client/api-keys. */
export interface TenantApiKeyList {
  items: TenantApiKey[];
}
