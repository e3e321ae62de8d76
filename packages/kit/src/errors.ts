import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isDependencyFailure } from './dependency-failure.js';
import { PublicError, DependencyUnavailableError, DEPENDENCY_MESSAGE } from './public-error.js';

/** Keys a JSON body may not define at any depth (the reviver `noCoercionOverrides`, service.ts). */
export const COERCION_KEYS: ReadonlySet<string> = new Set(['toString', 'valueOf']);

/**
 * What the reviver throws for such a key. body-parser keeps only the message of the reviver's
 * error, so the error handler finds the key again by this text and names it in the 400.
 */
export const coercionOverrideRefusal = (key: string): string => `the body may not define "${key}"`;
const REFUSED_KEY = new Map([...COERCION_KEYS].map((k) => [coercionOverrideRefusal(k), k]));

export * from './public-error.js';

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
  if (e?.type === 'entity.parse.failed') {
    const key = REFUSED_KEY.get(String((err as Error).message));
    return new PublicError(
      'MALFORMED_REQUEST',
      key === undefined ? 'The request body is not valid JSON.' : `The request body may not define "${key}" (at any depth).`,
    );
  }
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
