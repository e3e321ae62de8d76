import type { Request as ExRequest } from 'express';
import { Body, Controller, Get, Header, Path, Post, Request, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../app.js';
import { getDataRequest, submitDataRequest } from '../domain/requests/data-requests.js';
import { tenantOf } from './authentication.js';
import type { CreateDataRequestBody, PublicErrorBody, RequestDetail, SubmissionResponse } from './models.js';

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
   * its events.
   * @param idempotencyKey Length 8..200; the same key with an identical body replays the first answer for free.
   */
  @Post()
  @SuccessResponse(202, 'Accepted')
  @Response<PublicErrorBody>(400, 'Malformed JSON')
  @Response<PublicErrorBody>(402, 'Not enough tokens')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(422, 'Validation failed')
  @Response<PublicErrorBody>(503, 'A dependency is unavailable')
  public async createRequest(
    @Request() req: ExRequest,
    @Body() body: CreateDataRequestBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<SubmissionResponse> {
    const result = await submitDataRequest(this.deps, tenantOf(req).tenantId, body, idempotencyKey);
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
