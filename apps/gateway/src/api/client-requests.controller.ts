import type { Request as ExRequest } from 'express';
import { Body, Controller, Example, Header, Post, Request, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { cabinetView, submitRequest } from '../domain/requests/data-requests.js';
import { submissionContext } from './authentication.js';
import type {
  CabinetRequestResponse,
  CreateDataRequestBody,
  PublicErrorBody,
  RateLimitedHeaders,
  RateLimitHeaders,
} from '../models/index.js';
import { createClientRequestExample } from '../models/examples/client-requests.js';
import {
  dependencyUnavailableError,
  idempotencyConflictError,
  insufficientCreditsError,
  internalError,
  malformedRequestError,
  payloadTooLargeError,
  rateLimitedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Cabinet submissions: the body and rules of the data API's, answered with the cabinet's shape. */
@Route('api/v1/client/requests')
@Tags('Client API: requests')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', {
  code: 'UNAUTHENTICATED',
  message: 'A valid bearer token is required.',
  request_id: '0b0c6f2e-3a41-4f7d-9a57-5f1d2c8e9b10',
})
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientRequestsController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Submit a request from the cabinet. Same body, validation, limits and billing as
   * POST /api/v1/data/requests.
   * @summary Submit a page to fetch (cabinet)
   * @example body {"url": "https://example.com/products/42", "mode": "http", "timeout_ms": 30000}
   * @example body.browser {"url": "https://example.com/app", "wait_for_selector": "#list", "browser_actions": [{"type": "click", "selector": "#more"}], "max_credits_per_request": 10}
   * @param idempotencyKey Length 8..200. When omitted the server generates one, so every call creates a new request.
   */
  @Post()
  @SuccessResponse<RateLimitHeaders>(202, 'Accepted')
  @Example<CabinetRequestResponse>(createClientRequestExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(
    402,
    'INSUFFICIENT_CREDITS: the balance cannot cover the base price; nothing is created',
    insufficientCreditsError,
  )
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body', idempotencyConflictError)
  @Response<PublicErrorBody>(413, 'PAYLOAD_TOO_LARGE: body larger than 1 MB', payloadTooLargeError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED (one `details` entry per problem) or BUDGET_BELOW_BASE_PRICE', validationFailedError)
  @Response<PublicErrorBody, RateLimitedHeaders>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)', rateLimitedError)
  @Response<PublicErrorBody>(
    503,
    'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly',
    dependencyUnavailableError,
  )
  public async createClientRequest(
    @Request() req: ExRequest,
    @Body() body: CreateDataRequestBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<CabinetRequestResponse> {
    const result = await submitRequest(this.deps, submissionContext(req, idempotencyKey), body, 'client');
    this.setStatus(202);
    return cabinetView(result);
  }
}
