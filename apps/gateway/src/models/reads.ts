/**
 * Public shapes of the read side of requests (list, events, result), of cancel and retry, and of
 * batches. The spec leaves the list `meta`, the event item and the nested batch job open: they are
 * designed here and documented in docs/api-reads.md.
 */
import type {
  CreateDataRequestBody,
  DataJobStatus,
  DataTokenState,
  DataVisibleStatus,
  ProxyNetworkType,
  RequestDetail,
  RouteMode,
  SubmissionResponse,
} from './index.js';

/** `meta` of a cursor page of requests. */
export interface RequestPageMeta {
  /**
   * Opaque base64url cursor: send it back unchanged as `cursor` to read the next page. Null on the
   * last page.
   */
  next_cursor: string | null;
  /** True when a next page exists (then `next_cursor` is set). */
  has_more: boolean;
  /**
   * The page size applied.
   * @isInt
   * @minimum 1
   * @maximum 100
   */
  limit: number;
}

/** GET /api/v1/data/requests: the tenant's requests, newest first. */
export interface RequestPage {
  data: RequestDetail[];
  meta: RequestPageMeta;
}

/**
 * One entry of a request's append-only event history; the same object is the `data` of a
 * Server-Sent Event. Payloads are provider-neutral: no vendor names, no internal hosts, no target
 * paths or queries.
 */
export interface RequestEvent {
  /**
   * Per-request sequence number, from 1 upwards without gaps; the SSE `id`, usable as `Last-Event-ID`.
   * @isInt
   * @minimum 1
   */
  id: number;
  /**
   * What happened: `request.accepted`, `request.running`, `request.completed`, `request.failed`,
   * `request.cancelled`, `tokens.settled`, `tokens.refunded` (more kinds may be added).
   */
  type: string;
  /** The request's status right after this event. */
  status: DataVisibleStatus;
  /** @format date-time */
  created_at: string;
  /** Kind-specific details, e.g. `{ error: { code, message } }` or `{ charged_tokens }`. */
  data: Record<string, unknown>;
}

/** GET /api/v1/data/requests/{id}/events. */
export interface RequestEventList {
  /** Ascending creation order. */
  data: RequestEvent[];
}

/** Response of POST /api/v1/data/requests/{id}/retry. */
export interface RetrySubmissionResponse extends SubmissionResponse {
  /**
   * The failed source request, kept unchanged for audit.
   * @format uuid
   */
  retried_from_id: string;
  /**
   * Present when an extraction request was retried.
   * @format uuid
   */
  retried_from_run_id?: string;
}

/**
 * Batch status, aggregated from its jobs' statuses as they show them (an extraction job's readiness):
 * `pending` while every job is pending; `running` while any job is not terminal; once all are terminal, `completed` (all completed), `cancelled` (all
 * cancelled), `failed` (none completed) or `partial` (some completed, some not).
 */
export type BatchStatus = 'pending' | 'running' | 'completed' | 'partial' | 'failed' | 'cancelled';

/**
 * The code a failed or cancelled request ends with (REQUEST_ERROR_CODES in `@wdr/contracts`: the HTTP
 * stage's, the browser stage's, the proxy route's and the orchestrator's own), or `FAILED` for a failure
 * that recorded none.
 */
export type RequestErrorCode =
  | 'TARGET_BLOCKED'
  | 'TARGET_UNREACHABLE'
  | 'TARGET_TIMEOUT'
  | 'TARGET_SERVER_ERROR'
  | 'TARGET_TOO_LARGE'
  | 'WAIT_FOR_SELECTOR_TIMEOUT'
  | 'WAIT_FOR_TEXT_TIMEOUT'
  | 'INVALID_SELECTOR'
  | 'BROWSER_ACTION_FAILED'
  | 'PROTECTION_NOT_PASSED'
  | 'BROWSER_CRASHED'
  | 'BROWSER_UNAVAILABLE'
  | 'CAPTCHA_NOT_SOLVED'
  | 'BUDGET_EXHAUSTED'
  | 'INSUFFICIENT_CREDITS'
  | 'RENDER_FAILED'
  | 'TOO_MANY_REDIRECTS'
  | 'EXIT_FAILED'
  | 'PROXY_UNAVAILABLE'
  | 'PROXY_GEO_VERIFICATION_FAILED'
  | 'TARGET_EXPIRED'
  | 'INVALID_OPTIONS'
  | 'CANCELLED'
  | 'FAILED';

/** Redacted error of a failed or cancelled batch job: a stable code and a tenant-facing message. */
export interface BatchJobError {
  code: RequestErrorCode;
  message: string;
}

/** A job nested in a batch read. */
export interface BatchJob {
  /** @format uuid */
  id: string;
  /**
   * Target origin only.
   * @format uri
   */
  url: string;
  /**
   * The job's status as its request detail shows it: for an extraction job (`result_kind:
   * extraction`) its readiness (`waiting_for_page`, `queued`, `running`, `completed`, `failed`),
   * with the page's status in `page_status`.
   */
  status: DataVisibleStatus;
  result_kind?: 'extraction';
  page_status?: DataJobStatus;
  /** An extraction job's page error (`error` is then the extraction's). */
  page_error?: BatchJobError | null;
  route_mode: RouteMode;
  proxy_type?: ProxyNetworkType;
  token_state: DataTokenState;
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
  /** @format date-time */
  created_at: string;
  /** @format date-time */
  started_at: string | null;
  /** @format date-time */
  finished_at: string | null;
  /** Set on failed and cancelled jobs only (an extraction job: its failed extraction's). */
  error: BatchJobError | null;
}

/** GET /api/v1/data/batches/{id}. */
export interface Batch {
  /** @format uuid */
  id: string;
  status: BatchStatus;
  /**
   * @isInt
   * @minimum 0
   */
  total_jobs: number;
  /**
   * @isInt
   * @minimum 0
   */
  completed_jobs: number;
  /**
   * @isInt
   * @minimum 0
   */
  failed_jobs: number;
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
  /** @format date-time */
  created_at: string;
  /**
   * When the last job finished; null while any job is not terminal.
   * @format date-time
   */
  finished_at: string | null;
  /** In submission order. */
  jobs: BatchJob[];
}

/** Body of POST /api/v1/client/batches and POST /api/v1/data/batches. */
export interface CreateBatchBody {
  /**
   * Each job takes the fields of a single request submission.
   * @minItems 1
   * @maxItems 1000
   */
  jobs: CreateDataRequestBody[];
}

/** A job of the cabinet batch response. */
export interface CabinetBatchJob {
  /** @format uuid */
  id: string;
  /**
   * Target origin only.
   * @format uri
   */
  url: string;
  /** As in a single submission's answer: an extraction job's readiness (`page_status` is the page's). */
  status: DataVisibleStatus;
  result_kind?: 'extraction';
  page_status?: DataJobStatus;
  cached: boolean;
  protected: boolean;
  /**
   * @isInt
   * @minimum 1
   */
  pricing_version: number;
  route_mode: RouteMode;
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
  /** @format date-time */
  created_at: string;
}

/** Response of a batch submission (cabinet and Data API). */
export interface CabinetBatchResponse {
  /** @format uuid */
  batch_id: string;
  status: BatchStatus;
  jobs: CabinetBatchJob[];
  /**
   * Tokens reserved by this submission; 0 on an idempotent replay.
   * @isInt
   * @minimum 0
   */
  charged_tokens: number;
  /**
   * @isInt
   * @minimum 1
   */
  pricing_version: number;
  /** The jobs' route mode when they share one, otherwise `mixed`. */
  route_mode: RouteMode;
  idempotent_replay: boolean;
}
