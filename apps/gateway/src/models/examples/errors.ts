// One example error body per code (docs/api.md, Errors) for the `@Response` decorators of the controllers (tsoa reads
// each constant into the OpenAPI document: plain literals only, no spreads, `as const` or `satisfies`).
import type { PublicErrorBody } from '../index.js';

export const malformedRequestError: PublicErrorBody = {
  code: 'MALFORMED_REQUEST',
  message: 'The body is not valid JSON.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const validationFailedError: PublicErrorBody = {
  code: 'VALIDATION_FAILED',
  message: 'The request is not valid.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
  details: [{ field: 'url', issue: 'must be an absolute http(s) URL' }],
};

export const unauthenticatedError: PublicErrorBody = {
  code: 'UNAUTHENTICATED',
  message: 'Missing, unknown or revoked API key.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const forbiddenError: PublicErrorBody = {
  code: 'FORBIDDEN',
  message: 'This credential may not do that.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const notFoundError: PublicErrorBody = {
  code: 'NOT_FOUND',
  message: 'No such resource.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const methodNotAllowedError: PublicErrorBody = {
  code: 'METHOD_NOT_ALLOWED',
  message: 'Method not allowed.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const idempotencyConflictError: PublicErrorBody = {
  code: 'IDEMPOTENCY_CONFLICT',
  message: 'The Idempotency-Key was used with a different body.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const conflictError: PublicErrorBody = {
  code: 'CONFLICT',
  message: 'The resource is in a state that does not allow this.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const insufficientCreditsError: PublicErrorBody = {
  code: 'INSUFFICIENT_CREDITS',
  message: 'The balance (3 tokens) cannot cover the base price (5 tokens).',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const projectBudgetExhaustedError: PublicErrorBody = {
  code: 'PROJECT_BUDGET_EXHAUSTED',
  message: "The project's budget cap has no room left.",
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const budgetBelowBasePriceError: PublicErrorBody = {
  code: 'BUDGET_BELOW_BASE_PRICE',
  message: 'max_credits_per_request 2 is below the base price 5.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
  details: [{ field: 'max_credits_per_request', issue: 'below the base price 5' }],
};

export const payloadTooLargeError: PublicErrorBody = {
  code: 'PAYLOAD_TOO_LARGE',
  message: 'The body is larger than 1 MB.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const resultExpiredError: PublicErrorBody = {
  code: 'RESULT_EXPIRED',
  message: 'The result was purged after its retention.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const resultNotReadyError: PublicErrorBody = {
  code: 'RESULT_NOT_READY',
  message: 'The request has not completed yet.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const rateLimitedError: PublicErrorBody = {
  code: 'RATE_LIMITED',
  message: 'Too many submissions; retry after Retry-After seconds.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const concurrencyLimitedError: PublicErrorBody = {
  code: 'CONCURRENCY_LIMITED',
  message: 'Too many requests in flight; retry after Retry-After seconds.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const proxyGeoVerificationFailedError: PublicErrorBody = {
  code: 'PROXY_GEO_VERIFICATION_FAILED',
  message: 'The exit did not verify in the requested country.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const dependencyUnavailableError: PublicErrorBody = {
  code: 'DEPENDENCY_UNAVAILABLE',
  message: 'A service this request needs is unreachable; retry shortly.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};

export const internalError: PublicErrorBody = {
  code: 'INTERNAL',
  message: 'An internal error occurred.',
  request_id: '5f0c2a4e-8d1b-4c3a-9e7f-2b6d1a0c9e84',
};
