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
import {
  listWebhookDeliveriesExample,
  listWebhookEndpointsExample,
  readWorkflowRunExample,
  runWorkflowExample,
} from '../models/examples/browser-workflow.js';
import {
  conflictError,
  dependencyUnavailableError,
  insufficientCreditsError,
  internalError,
  notFoundError,
  rateLimitedError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

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
@Response<PublicErrorBody>(
  401,
  'UNAUTHENTICATED: missing, invalid or revoked project+environment key (a tenant key is not one)',
  unauthenticatedError,
)
@Response<PublicErrorBody>(404, "NOT_FOUND: not the key's project and environment, or no such webhook, workflow or run", notFoundError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
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
  @Example<WebhookEndpointPage>(listWebhookEndpointsExample)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
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
  @Example<WebhookDeliveryPage>(listWebhookDeliveriesExample)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
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
  @Example<SubmissionResponse>(runWorkflowExample)
  @Response<PublicErrorBody>(
    402,
    "INSUFFICIENT_CREDITS (the tenant's balance) or PROJECT_BUDGET_EXHAUSTED (the project's budget cap)",
    insufficientCreditsError,
  )
  @Response<PublicErrorBody>(409, 'CONFLICT: the workflow has no active version; or IDEMPOTENCY_CONFLICT', conflictError)
  @Response<PublicErrorBody>(
    422,
    "VALIDATION_FAILED: the Idempotency-Key is not valid; or BUDGET_BELOW_BASE_PRICE: the definition's max_credits_per_request is below the base price",
    validationFailedError,
  )
  @Response<PublicErrorBody, RateLimitedHeaders>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)', rateLimitedError)
  @Response<PublicErrorBody>(
    503,
    'DEPENDENCY_UNAVAILABLE: a service this run needs is unreachable; retry shortly',
    dependencyUnavailableError,
  )
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
  @Example<RequestDetail>(readWorkflowRunExample)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: fetch-orchestrator is unreachable; retry shortly', dependencyUnavailableError)
  public async readWorkflowRun(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() runId: string,
  ): Promise<RequestDetail> {
    return readWorkflowRun(this.deps, { tenant: tenantOf(req) }, projectId, environmentId, runId);
  }
}
