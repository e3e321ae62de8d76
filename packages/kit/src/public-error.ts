// The public API's error type and its codes; errors.ts turns anything thrown into one and answers it over HTTP.

/**
 * The stable error codes of the public API. Renaming one is a breaking change for tenants.
 * Every code has exactly one HTTP status in ERROR_STATUS (the compiler keeps the map exhaustive).
 */
export const ERROR_CODES = [
  'MALFORMED_REQUEST',
  'VALIDATION_FAILED',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'IDEMPOTENCY_CONFLICT',
  'CONFLICT',
  'INSUFFICIENT_CREDITS',
  'PROJECT_BUDGET_EXHAUSTED',
  'BUDGET_BELOW_BASE_PRICE',
  'PAYLOAD_TOO_LARGE',
  'RESULT_EXPIRED',
  'RESULT_NOT_READY',
  'RATE_LIMITED',
  'CONCURRENCY_LIMITED',
  'PROXY_GEO_VERIFICATION_FAILED',
  'DEPENDENCY_UNAVAILABLE',
  'INTERNAL',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ERROR_STATUS = {
  MALFORMED_REQUEST: 400,
  VALIDATION_FAILED: 422,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_CONFLICT: 409,
  CONFLICT: 409,
  INSUFFICIENT_CREDITS: 402,
  PROJECT_BUDGET_EXHAUSTED: 402,
  BUDGET_BELOW_BASE_PRICE: 422,
  PAYLOAD_TOO_LARGE: 413,
  RESULT_EXPIRED: 410,
  RESULT_NOT_READY: 409,
  RATE_LIMITED: 429,
  CONCURRENCY_LIMITED: 429,
  PROXY_GEO_VERIFICATION_FAILED: 422,
  DEPENDENCY_UNAVAILABLE: 503,
  INTERNAL: 500,
} as const satisfies Record<ErrorCode, number>;

export interface FieldIssue {
  /** Dotted path of the offending field, e.g. `headers.Host` or `timeout_ms`. */
  field: string;
  issue: string;
}

/** The one error body of the fleet, public and internal. */
export interface PublicErrorBody {
  code: ErrorCode;
  message: string;
  request_id: string;
  details?: FieldIssue[];
}

export class PublicError extends Error {
  readonly code: ErrorCode;
  readonly details: FieldIssue[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  /** A plain field, not a getter: frameworks (tsoa's auth middleware) assign `err.status`. */
  readonly status: number;

  constructor(code: ErrorCode, message: string, opts: { details?: FieldIssue[]; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PublicError';
    this.code = code;
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.status = ERROR_STATUS[code];
  }

  toBody(requestId: string): PublicErrorBody {
    const body: PublicErrorBody = { code: this.code, message: this.message, request_id: requestId };
    if (this.details && this.details.length > 0) body.details = this.details;
    return body;
  }

  static isCode(value: unknown): value is ErrorCode {
    return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
  }
}

/** What a client is told when a dependency failed: which one, and why, is for the logs. */
export const DEPENDENCY_MESSAGE = 'A service this request needs is unavailable; retry shortly.';

/**
 * A dependency (database, broker, another service) is down: retry later, never dead-letter for it.
 * `message` is for logs and operators; the HTTP answer says DEPENDENCY_MESSAGE (see errorHandler).
 */
export class DependencyUnavailableError extends PublicError {
  constructor(message: string, cause?: unknown) {
    super('DEPENDENCY_UNAVAILABLE', message, { cause, retryAfterSeconds: 1 });
    this.name = 'DependencyUnavailableError';
  }
}
