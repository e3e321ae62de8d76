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

export interface BrowserAction {
  type: string;
  [key: string]: unknown;
}

/** Body of POST /api/v1/data/requests. */
export interface CreateDataRequestBody {
  /**
   * @format uri
   * @maxLength 4096
   */
  url: string;
  mode?: RequestMode;
  /**
   * @minLength 2
   * @maxLength 2
   */
  geo_country?: string;
  /**
   * @isInt
   * @minimum 1
   */
  max_credits_per_request?: number;
  proxy?: ProxySetting;
  proxy_type?: ProxyNetworkType;
  headers?: Record<string, string>;
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
  wait_for_text?: string | null;
  /** @maxItems 20 */
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
  batch_id: string | null;
  url: string;
  status: DataVisibleStatus;
  cached: boolean;
  protected: boolean;
  /** @isInt */
  pricing_version: number;
  /** @isInt */
  base_tokens: number;
  /** @isInt */
  protected_tokens: number;
  /** @isInt */
  captcha_tokens: number;
  captcha_type: 'captcha' | null;
  token_state: DataTokenState;
  request: Record<string, unknown>;
  debug_artifacts: Record<string, unknown>;
  error: Record<string, unknown> | null;
  user_error: Record<string, unknown> | null;
  result_meta: Record<string, unknown> | null;
  proxy_used: 'platform' | null;
  /** @format date-time */
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
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
