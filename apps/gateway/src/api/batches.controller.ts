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
import { getBatch, submitBatch } from '../domain/batches/batches.js';
import { submissionContext, tenantOf } from './authentication.js';
import type { PublicErrorBody, RateLimitedHeaders } from '../models/index.js';
import type { Batch, CabinetBatchResponse, CreateBatchBody } from '../models/reads.js';
import { createCabinetBatchExample, createDataBatchExample, getDataBatchExample } from '../models/examples/batches.js';
import {
  dependencyUnavailableError,
  idempotencyConflictError,
  insufficientCreditsError,
  internalError,
  notFoundError,
  rateLimitedError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Data API batches. */
@Route('api/v1/data/batches')
@Tags('Data API: batches')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key', unauthenticatedError)
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
export class DataBatchesController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Submit up to 1,000 jobs as one batch (beyond the spec; the Data API twin of the cabinet's
   * POST /api/v1/client/batches, same body and answer). All jobs are admitted together or not at
   * all: when the balance cannot reserve every job's base price the answer is 402 and nothing is
   * created. Without an `Idempotency-Key` every submission is a new batch.
   * @summary Submit a batch of pages to fetch
   * @example body {"jobs": [{"url": "https://example.com", "mode": "http"}, {"url": "https://example.org", "mode": "http"}]}
   * @param idempotencyKey Length 8..200; the same key with an identical body replays the first answer for free.
   */
  @Post()
  @SuccessResponse(202, 'Accepted')
  @Example<CabinetBatchResponse>(createDataBatchExample)
  @Response<PublicErrorBody>(
    402,
    'INSUFFICIENT_CREDITS: the balance cannot reserve every job; nothing is created',
    insufficientCreditsError,
  )
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body', idempotencyConflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED (details name jobs.<index>.<field>), BUDGET_BELOW_BASE_PRICE', validationFailedError)
  @Response<PublicErrorBody>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)', rateLimitedError)
  @Response<PublicErrorBody>(
    503,
    'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly',
    dependencyUnavailableError,
  )
  public async createDataBatch(
    @Request() req: ExRequest,
    @Body() body: CreateBatchBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<CabinetBatchResponse> {
    const result = await submitBatch(this.deps, submissionContext(req, idempotencyKey), body);
    this.setStatus(202);
    return result;
  }

  /**
   * One batch of the tenant: status aggregated from its jobs, counters, token sums and the jobs
   * themselves (failed jobs carry a redacted error). Another tenant's batch is a 404.
   * @summary Read one batch and its jobs
   */
  @Get('{id}')
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<Batch>(getDataBatchExample)
  @Response<PublicErrorBody>(404, "NOT_FOUND: no such batch (or another tenant's)", notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid', validationFailedError)
  public async getDataBatch(@Request() req: ExRequest, @Path() id: string): Promise<Batch> {
    return getBatch(this.deps, tenantOf(req).tenantId, id);
  }
}

/** Client (cabinet) API batches. */
@Route('api/v1/client/batches')
@Tags('Client API: batches')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class CabinetBatchesController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Submit up to 1,000 jobs as one batch; each job takes the fields of a single request
   * submission. All jobs are admitted together or not at all (402 and nothing created when the
   * balance cannot reserve them all). When the `Idempotency-Key` header is omitted the server
   * generates an internal key, so the submission is new.
   * @summary Submit a batch of pages to fetch (cabinet)
   * @example body {"jobs": [{"url": "https://example.com", "mode": "http"}, {"url": "https://example.org", "mode": "http"}]}
   * @param idempotencyKey Length 8..200; the same key with an identical body replays the first answer for free.
   */
  @Post()
  @SuccessResponse(202, 'Accepted')
  @Example<CabinetBatchResponse>(createCabinetBatchExample)
  @Response<PublicErrorBody>(
    402,
    'INSUFFICIENT_CREDITS: the balance cannot reserve every job; nothing is created',
    insufficientCreditsError,
  )
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body', idempotencyConflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED (details name jobs.<index>.<field>), BUDGET_BELOW_BASE_PRICE', validationFailedError)
  @Response<PublicErrorBody>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)', rateLimitedError)
  @Response<PublicErrorBody>(
    503,
    'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly',
    dependencyUnavailableError,
  )
  public async createCabinetBatch(
    @Request() req: ExRequest,
    @Body() body: CreateBatchBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<CabinetBatchResponse> {
    const result = await submitBatch(this.deps, submissionContext(req, idempotencyKey), body);
    this.setStatus(202);
    return result;
  }
}
