/**
 * The public resource shapes of SPEC.md, in its words. tsoa turns these into the OpenAPI document
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
  /** Structured extraction settings, at most 64 KiB as JSON. */
  extraction?: Record<string, unknown> | null;
}

/** Response of create and retry. */
export interface SubmissionResponse {
  /** @format uuid */
  id: string;
  /** Target origin only. */
  url?: string;
  status: DataJobStatus;
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
}

export interface FieldIssue {
  field: string;
  issue: string;
}

/** The one error body of the API. */
export interface PublicErrorBody {
  /** Stable machine-readable code, e.g. `VALIDATION_FAILED`, `IDEMPOTENCY_CONFLICT`. */
  code: string;
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
  status: DataJobStatus;
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
  type: string;
  required: boolean;
  multiple: boolean;
  description: string;
}

/** An extraction recipe. */
export interface Recipe {
  /** @format uuid */
  id: string;
  name: string;
  description: string;
  /** @format uri */
  sample_url: string;
  fields: RecipeField[];
  advanced_schema: boolean;
  /** `draft` is one value. */
  status: string;
  /** @format uuid */
  active_version_id: string;
  auto_repair_enabled: boolean;
  /** @format date-time */
  continuous_repair_confirmed_at: string;
  /** @format date-time */
  created_at: string;
  /** @format date-time */
  updated_at: string;
}

/** A recipe version with its field schema (data API listings include the active one). */
export interface RecipeVersion {
  /** @format uuid */
  id: string;
  /** @isInt */
  version: number;
  fields: RecipeField[];
  schema: Record<string, unknown>;
  /** @format date-time */
  created_at: string;
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
