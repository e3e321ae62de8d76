import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isDependencyFailure } from './dependency-failure.js';

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

export const INTERNAL_MESSAGE = 'An internal error occurred.';

export function requestIdOf(res: { locals: Record<string, unknown> }): string {
  const id = res.locals['requestId'];
  return typeof id === 'string' ? id : 'unknown';
}

/** Turn anything thrown into a PublicError; the text of an unexpected error is never shown. */
export function toPublicError(err: unknown): PublicError {
  if (err instanceof PublicError) return err;
  const e = err as { type?: string; status?: number; name?: string; fields?: Record<string, { message: string }> } | undefined;
  // tsoa's model validation.
  if (e?.name === 'ValidateError' && e.fields) {
    const details = Object.entries(e.fields).map(([path, f]) => ({
      field: path.replace(/^(body|requestBody)\.?/, '') || 'body',
      issue: f.message,
    }));
    return new PublicError('VALIDATION_FAILED', 'The request is not valid.', { details });
  }
  // The database, the broker or an internal service is down or saturated (see isDependencyFailure).
  if (isDependencyFailure(err)) return new DependencyUnavailableError(DEPENDENCY_MESSAGE, err);
  // body-parser errors: malformed JSON, too large, bad charset.
  if (e?.type === 'entity.parse.failed') return new PublicError('MALFORMED_REQUEST', 'The request body is not valid JSON.');
  if (e?.type === 'entity.too.large') return new PublicError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (e?.type && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new PublicError('MALFORMED_REQUEST', 'The request body could not be read.');
  }
  return new PublicError('INTERNAL', INTERNAL_MESSAGE, { cause: err });
}

export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new PublicError('NOT_FOUND', 'No such resource.'));
};

export function errorHandler(onUnexpected: (err: unknown) => void): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    const pe = toPublicError(err);
    if (pe.code === 'INTERNAL' || pe.code === 'DEPENDENCY_UNAVAILABLE') onUnexpected(pe.cause ?? err);
    if (pe.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(pe.retryAfterSeconds));
    const body = pe.toBody(requestIdOf(res));
    // The text of an internal failure (another service's answer, a driver's message) stays in the
    // logs: a client sees the code and a fixed sentence.
    if (pe.code === 'INTERNAL') body.message = INTERNAL_MESSAGE;
    else if (pe instanceof DependencyUnavailableError) body.message = DEPENDENCY_MESSAGE;
    res.status(pe.status).json(body);
  };
}

/** Parse with a zod schema; failures become VALIDATION_FAILED with one detail per issue. */
export function parseOrThrow<T>(
  schema: {
    safeParse: (
      v: unknown,
    ) => { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  value: unknown,
): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    throw new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: r.error.issues.map((i) => ({ field: i.path.map(String).join('.') || 'body', issue: i.message })),
    });
  }
  return r.data;
}
