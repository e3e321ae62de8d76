import type { Request as ExRequest } from 'express';
import { Body, Controller, Get, Header, Path, Post, Request, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../app.js';
import { getDataRequest, submitRequest } from '../domain/requests/data-requests.js';
import { submissionContext, tenantOf } from './authentication.js';
import type { CreateDataRequestBody, PublicErrorBody, RateLimitedHeaders, RateLimitHeaders, RequestDetail, SubmissionResponse } from './models.js';

@Route('api/v1/data/requests')
@Tags('Data API: requests')
@Security('api_key')
@Response<PublicErrorBody>(401, 'Missing or invalid API key')
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
   * @param idempotencyKey Length 8..200; the same key with an identical body replays the first answer for free (kept as long as the request, at least 24 h); with a different body it is a 409.
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
  public async createRequest(
    @Request() req: ExRequest,
    @Body() body: CreateDataRequestBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<SubmissionResponse> {
    const result = await submitRequest(this.deps, submissionContext(req, idempotencyKey), body, 'data');
    this.setStatus(202);
    return result;
  }

  /** Read one request of the caller. Another tenant's id is a 404. */
  @Get('{id}')
  @Response<PublicErrorBody>(404, 'No such request')
  public async getRequest(@Request() req: ExRequest, @Path() id: string): Promise<RequestDetail> {
    return getDataRequest(this.deps, tenantOf(req).tenantId, id);
  }
}
