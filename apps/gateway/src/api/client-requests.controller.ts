import type { Request as ExRequest } from 'express';
import { Body, Controller, Header, Post, Request, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../app.js';
import { cabinetView, submitRequest } from '../domain/requests/data-requests.js';
import { submissionContext } from './authentication.js';
import type { CabinetRequestResponse, CreateDataRequestBody, PublicErrorBody, RateLimitedHeaders, RateLimitHeaders } from './models.js';

/** Cabinet submissions: the body and rules of the data API's, answered with the cabinet's shape. */
@Route('api/v1/client/requests')
@Tags('Client API: requests')
@Security('bearer')
@Response<PublicErrorBody>(401, 'Missing, invalid, expired or revoked bearer token')
export class ClientRequestsController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Submit a request from the cabinet. Same body, validation, limits and billing as
   * POST /api/v1/data/requests.
   * @param idempotencyKey Length 8..200. When omitted the server generates one, so every call creates a new request.
   */
  @Post()
  @SuccessResponse<RateLimitHeaders>(202, 'Accepted')
  @Response<PublicErrorBody>(400, 'Malformed JSON')
  @Response<PublicErrorBody>(402, 'Not enough tokens')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(413, 'Body larger than 1 MB')
  @Response<PublicErrorBody>(422, 'Validation failed')
  @Response<PublicErrorBody, RateLimitedHeaders>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED')
  @Response<PublicErrorBody>(503, 'A dependency is unavailable')
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
