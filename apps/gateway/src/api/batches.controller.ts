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
import type { PublicErrorBody } from '../models/index.js';
import type { Batch, CabinetBatchResponse, CreateBatchBody } from '../models/reads.js';

/** Data API batches. */
@Route('api/v1/data/batches')
@Tags('Data API: batches')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key')
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
  @Example<CabinetBatchResponse>({
    batch_id: '8a1e4c2d-6b3f-4d5e-8f70-1a2b3c4d5e6f',
    status: 'pending',
    jobs: [
      {
        id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
        url: 'https://example.com',
        status: 'pending',
        cached: false,
        protected: false,
        pricing_version: 2,
        route_mode: 'http',
        base_tokens: 1,
        protected_tokens: 0,
        captcha_tokens: 0,
        created_at: '2026-11-25T12:00:00.000Z',
      },
      {
        id: '9c2d5e3f-7a4b-4e6f-9a81-2b3c4d5e6f70',
        url: 'https://example.org',
        status: 'pending',
        cached: false,
        protected: false,
        pricing_version: 2,
        route_mode: 'http',
        base_tokens: 1,
        protected_tokens: 0,
        captcha_tokens: 0,
        created_at: '2026-11-25T12:00:00.000Z',
      },
    ],
    charged_tokens: 2,
    pricing_version: 2,
    route_mode: 'http',
    idempotent_replay: false,
  })
  @Response<PublicErrorBody>(402, 'INSUFFICIENT_CREDITS: the balance cannot reserve every job; nothing is created')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED (details name jobs.<index>.<field>), BUDGET_BELOW_BASE_PRICE')
  @Response<PublicErrorBody>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly')
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
  @Example<Batch>({
    id: '8a1e4c2d-6b3f-4d5e-8f70-1a2b3c4d5e6f',
    status: 'partial',
    total_jobs: 2,
    completed_jobs: 1,
    failed_jobs: 1,
    base_tokens: 2,
    protected_tokens: 0,
    captcha_tokens: 0,
    created_at: '2026-11-25T12:00:00.000Z',
    finished_at: '2026-11-25T12:00:02.310Z',
    jobs: [
      {
        id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
        url: 'https://example.com',
        status: 'completed',
        route_mode: 'http',
        proxy_type: 'datacenter',
        token_state: 'settled',
        cached: false,
        protected: false,
        pricing_version: 2,
        base_tokens: 1,
        protected_tokens: 0,
        captcha_tokens: 0,
        created_at: '2026-11-25T12:00:00.000Z',
        started_at: '2026-11-25T12:00:00.120Z',
        finished_at: '2026-11-25T12:00:00.410Z',
        error: null,
      },
      {
        id: '9c2d5e3f-7a4b-4e6f-9a81-2b3c4d5e6f70',
        url: 'https://example.org',
        status: 'failed',
        route_mode: 'http',
        proxy_type: 'datacenter',
        token_state: 'refunded',
        cached: false,
        protected: false,
        pricing_version: 2,
        base_tokens: 1,
        protected_tokens: 0,
        captcha_tokens: 0,
        created_at: '2026-11-25T12:00:00.000Z',
        started_at: '2026-11-25T12:00:00.130Z',
        finished_at: '2026-11-25T12:00:02.310Z',
        error: { code: 'TARGET_TIMEOUT', message: 'The target did not answer in time.' },
      },
    ],
  })
  @Response<PublicErrorBody>(404, "NOT_FOUND: no such batch (or another tenant's)")
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid')
  public async getDataBatch(@Request() req: ExRequest, @Path() id: string): Promise<Batch> {
    return getBatch(this.deps, tenantOf(req).tenantId, id);
  }
}

/** Client (cabinet) API batches. */
@Route('api/v1/client/batches')
@Tags('Client API: batches')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token')
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
  @Example<CabinetBatchResponse>({
    batch_id: '8a1e4c2d-6b3f-4d5e-8f70-1a2b3c4d5e6f',
    status: 'pending',
    jobs: [
      {
        id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
        url: 'https://example.com',
        status: 'pending',
        cached: false,
        protected: false,
        pricing_version: 2,
        route_mode: 'http',
        base_tokens: 1,
        protected_tokens: 0,
        captcha_tokens: 0,
        created_at: '2026-11-25T12:00:00.000Z',
      },
      {
        id: '9c2d5e3f-7a4b-4e6f-9a81-2b3c4d5e6f70',
        url: 'https://example.org',
        status: 'pending',
        cached: false,
        protected: false,
        pricing_version: 2,
        route_mode: 'http',
        base_tokens: 1,
        protected_tokens: 0,
        captcha_tokens: 0,
        created_at: '2026-11-25T12:00:00.000Z',
      },
    ],
    charged_tokens: 2,
    pricing_version: 2,
    route_mode: 'http',
    idempotent_replay: false,
  })
  @Response<PublicErrorBody>(402, 'INSUFFICIENT_CREDITS: the balance cannot reserve every job; nothing is created')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED (details name jobs.<index>.<field>), BUDGET_BELOW_BASE_PRICE')
  @Response<PublicErrorBody>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly')
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
