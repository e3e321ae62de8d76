import type { Request as ExRequest } from 'express';
import {
  Controller,
  Example,
  Get,
  Header,
  Path,
  Post,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { requireKeyScope } from '../domain/browser/project-keys.js';
import { listDeliveries, listWebhooks } from '../domain/browser/webhooks.js';
import { readWorkflowRun, runWorkflow } from '../domain/browser/workflow-runs.js';
import { submissionContext, tenantOf } from './authentication.js';
import type { WebhookDeliveryPage, WebhookEndpointPage } from '../models/browser.js';
import type { PublicErrorBody, RateLimitedHeaders, RateLimitHeaders, RequestDetail, SubmissionResponse } from '../models/index.js';

/**
 * SPEC "Browser workflow API": reads with a key scoped to one project and one environment
 * (`X-API-Key: wdrp_…`, issued in the cabinet). A tenant key is 401; a path naming another project
 * or environment than the key's is 404, whoever owns it. Beyond the spec: running a workflow's
 * active version and reading its runs with the same key.
 *
 * Error descriptions name their codes (`CODE: when`); openapi-document.test.ts checks each code's status.
 */
@Route('api/v1/browser/projects/{projectId}/environments/{environmentId}')
@Tags('Browser workflow API')
@Security('project_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid or revoked project+environment key (a tenant key is not one)')
@Response<PublicErrorBody>(404, "NOT_FOUND: not the key's project and environment, or no such webhook, workflow or run")
export class BrowserWorkflowController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * The project+environment's webhook endpoints, redacted (URL origin only), a cursor page.
   * @summary List the webhook endpoints of the key's project and environment
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('webhooks')
  @Example<WebhookEndpointPage>({
    items: [
      {
        id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
        project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
        environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
        url_origin: 'https://hooks.example.com',
        event_types: ['request.completed', 'request.failed'],
        description: 'Results to the pricing pipeline',
        status: 'enabled',
        disabled_reason: null,
        disabled_at: null,
        created_at: '2026-11-25T12:05:00.000Z',
        updated_at: '2026-11-25T12:05:00.000Z',
      },
    ],
    next_cursor: null,
  })
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
  public async listWebhookEndpoints(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<WebhookEndpointPage> {
    const tenant = tenantOf(req);
    return listWebhooks(this.deps, tenant.tenantId, requireKeyScope(tenant, projectId, environmentId), { cursor, limit });
  }

  /**
   * A webhook's delivery attempts, newest first, redacted (no payload, no secret, no URL beyond
   * origins; the start of the receiver's answer, masked), a cursor page.
   * @summary List a webhook endpoint's delivery attempts
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('webhooks/{webhookId}/deliveries')
  @Example<WebhookDeliveryPage>({
    items: [
      {
        id: 'd4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70',
        message_id: '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
        event_type: 'request.completed',
        attempt: 2,
        outcome: 'delivered',
        status_code: 200,
        latency_ms: 143,
        response_excerpt: '{"received":true}',
        error: null,
        created_at: '2026-11-25T12:07:41.020Z',
      },
      {
        id: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
        message_id: '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
        event_type: 'request.completed',
        attempt: 1,
        outcome: 'failed',
        status_code: 503,
        latency_ms: 87,
        response_excerpt: 'upstream unavailable, see https://status.example.com',
        error: null,
        created_at: '2026-11-25T12:07:10.480Z',
      },
    ],
    next_cursor: null,
  })
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
  public async listWebhookDeliveries(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<WebhookDeliveryPage> {
    const tenant = tenantOf(req);
    return listDeliveries(this.deps, tenant.tenantId, requireKeyScope(tenant, projectId, environmentId), webhookId, { cursor, limit });
  }

  /**
   * Beyond the spec: run the workflow's active version as a browser request of the tenant, linked to
   * the key's project and environment (same validation, limits, pipeline and billing as a
   * submission; the project's budget cap holds every run within it). Its lifecycle events reach the
   * project's webhook endpoints. Answers like POST /api/v1/data/requests, with `workflow_run`.
   * @summary Run a workflow's active version
   * @param idempotencyKey Length 8..200. The same key for the same workflow in this environment answers the original run (even after another version was activated).
   */
  @Post('workflows/{workflowId}/runs')
  @SuccessResponse<RateLimitHeaders>(202, 'Accepted')
  @Example<SubmissionResponse>({
    id: '8e1f2a3b-4c5d-5e6f-8a7b-9c0d1e2f3a4b',
    url: 'https://shop.example.com',
    status: 'pending',
    cached: false,
    protected: false,
    pricing_version: 2,
    route_mode: 'browser',
    proxy_type: 'datacenter',
    base_tokens: 3,
    protected_tokens: 0,
    captcha_tokens: 0,
    quote: null,
    created_at: '2026-11-25T12:30:00.000Z',
    charged_tokens: 3,
    idempotent_replay: false,
    workflow_run: {
      project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
      environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
      workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
      workflow_version_id: '01a2129d-c820-7f83-8568-1edf5a7b9ca3',
    },
  })
  @Response<PublicErrorBody>(402, "INSUFFICIENT_CREDITS (the tenant's balance) or PROJECT_BUDGET_EXHAUSTED (the project's budget cap)")
  @Response<PublicErrorBody>(409, 'CONFLICT: the workflow has no active version; or IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(
    422,
    "VALIDATION_FAILED: the Idempotency-Key is not valid; BUDGET_BELOW_BASE_PRICE: the definition's max_credits_per_request is below the base price; or PROXY_GEO_VERIFICATION_FAILED",
  )
  @Response<PublicErrorBody, RateLimitedHeaders>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: a service this run needs is unreachable; retry shortly')
  public async runWorkflow(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() workflowId: string,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<SubmissionResponse> {
    const run = await runWorkflow(this.deps, submissionContext(req, idempotencyKey), projectId, environmentId, workflowId);
    this.setStatus(202);
    return run;
  }

  /**
   * Beyond the spec: a run of this project and environment, as GET /api/v1/data/requests/{id}
   * answers it (with `workflow_run`). Another request is a 404.
   * @summary Read a workflow run
   */
  @Get('runs/{runId}')
  @Example<RequestDetail>({
    id: '8e1f2a3b-4c5d-5e6f-8a7b-9c0d1e2f3a4b',
    batch_id: null,
    url: 'https://shop.example.com',
    status: 'completed',
    cached: false,
    protected: false,
    pricing_version: 2,
    base_tokens: 3,
    protected_tokens: 0,
    captcha_tokens: 0,
    captcha_type: null,
    token_state: 'settled',
    request: {
      url: 'https://shop.example.com/catalog',
      mode: 'browser',
      wait_for_selector: '#products',
      browser_actions: [{ type: 'click', selector: '#load-more' }],
      result_text_selector: '#products',
    },
    debug_artifacts: {},
    error: null,
    user_error: null,
    result_meta: {
      stage: 'browser',
      status_code: 200,
      content_type: 'text/html; charset=utf-8',
      bytes: 48213,
      redirects: 0,
      elapsed_ms: 2314,
    },
    proxy_used: 'platform',
    created_at: '2026-11-25T12:30:00.000Z',
    started_at: '2026-11-25T12:30:00.180Z',
    finished_at: '2026-11-25T12:30:02.640Z',
    result_expires_at: '2026-11-26T12:30:02.640Z',
    workflow_run: {
      project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
      environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
      workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
      workflow_version_id: '01a2129d-c820-7f83-8568-1edf5a7b9ca3',
    },
  })
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: fetch-orchestrator is unreachable; retry shortly')
  public async readWorkflowRun(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() runId: string,
  ): Promise<RequestDetail> {
    return readWorkflowRun(this.deps, { tenant: tenantOf(req) }, projectId, environmentId, runId);
  }
}
