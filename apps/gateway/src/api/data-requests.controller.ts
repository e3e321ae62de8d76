import type { Request as ExRequest } from 'express';
import {
  Body,
  Controller,
  Example,
  Get,
  Header,
  Path,
  Post,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { getDataRequest, submitRequest } from '../domain/requests/data-requests.js';
import { submissionContext, tenantOf } from './authentication.js';
import type {
  CreateDataRequestBody,
  PublicErrorBody,
  RateLimitedHeaders,
  RateLimitHeaders,
  RequestDetail,
  SubmissionResponse,
} from '../models/index.js';
import { createRequestExample, getRequestExample } from '../models/examples/data-requests.js';
import {
  dependencyUnavailableError,
  idempotencyConflictError,
  insufficientCreditsError,
  internalError,
  malformedRequestError,
  notFoundError,
  payloadTooLargeError,
  rateLimitedError,
  validationFailedError,
} from '../models/examples/errors.js';

// Error descriptions name their codes (`CODE: when`); openapi-document.test.ts checks each code's status.
@Route('api/v1/data/requests')
@Tags('Data API: requests')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key', {
  code: 'UNAUTHENTICATED',
  message: 'A valid X-API-Key header is required.',
  request_id: '0b0c6f2e-3a41-4f7d-9a57-5f1d2c8e9b10',
})
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
@Response<PublicErrorBody>(
  503,
  'DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly',
  dependencyUnavailableError,
)
export class DataRequestsController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Submit a request to fetch a page. The request runs asynchronously; poll its detail or follow
   * its events. Every rule of the body is checked (422 `VALIDATION_FAILED` lists each offending
   * field in `details`, e.g. `headers.Host`); unknown fields are rejected.
   * Submissions count against the tenant's rate (`RateLimit-*` headers on every answer) and
   * concurrency limits (429 `RATE_LIMITED` / `CONCURRENCY_LIMITED` with `Retry-After`).
   * @summary Submit a page to fetch
   * @example body {"url": "https://example.com/products/42", "mode": "http", "timeout_ms": 30000}
   * @example body.browser {"url": "https://example.com/app", "wait_for_selector": "#list", "browser_actions": [{"type": "click", "selector": "#more"}], "max_credits_per_request": 10}
   * @param idempotencyKey Length 8..200; the same key with an identical body replays the first answer for free (kept as long as the request, at least 24 h); with a different body it is a 409.
   */
  @Post()
  @SuccessResponse<RateLimitHeaders>(202, 'Accepted')
  @Example<SubmissionResponse>(createRequestExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(
    402,
    'INSUFFICIENT_CREDITS: the balance cannot cover the base price; nothing is created',
    insufficientCreditsError,
  )
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body', idempotencyConflictError)
  @Response<PublicErrorBody>(413, 'PAYLOAD_TOO_LARGE: body larger than 1 MB', payloadTooLargeError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED (one `details` entry per problem) or BUDGET_BELOW_BASE_PRICE', {
    code: 'VALIDATION_FAILED',
    message: 'The request body is not valid.',
    request_id: '0b0c6f2e-3a41-4f7d-9a57-5f1d2c8e9b10',
    details: [
      { field: 'headers.Host', issue: 'is a hop-by-hop or transport-controlled header' },
      { field: 'timeout_ms', issue: 'must be 5000..300000' },
    ],
  })
  @Response<PublicErrorBody, RateLimitedHeaders>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)', rateLimitedError)
  @Response<PublicErrorBody>(
    503,
    'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly',
    dependencyUnavailableError,
  )
  public async createRequest(
    @Request() req: ExRequest,
    @Body() body: CreateDataRequestBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<SubmissionResponse> {
    const result = await submitRequest(this.deps, submissionContext(req, idempotencyKey), body, 'data');
    this.setStatus(202);
    return result;
  }

  /**
   * Read one request of the caller. Another tenant's id is a 404.
   * @summary Read one request
   */
  @Get('{id}')
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<RequestDetail>(getRequestExample)
  @Response<PublicErrorBody>(404, "NOT_FOUND: no such request (or another tenant's)", notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a UUID', validationFailedError)
  public async getRequest(@Request() req: ExRequest, @Path() id: string): Promise<RequestDetail> {
    return getDataRequest(this.deps, tenantOf(req).tenantId, id);
  }
}
