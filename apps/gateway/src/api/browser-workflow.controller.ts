import type { Request as ExRequest } from 'express';
import { Controller, Get, Path, Query, Request, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../app.js';
import { requireKeyScope } from '../domain/browser/project-keys.js';
import { listDeliveries, listWebhooks } from '../domain/browser/webhooks.js';
import { tenantOf } from './authentication.js';
import type { WebhookDeliveryPage, WebhookEndpointPage } from './models-browser.js';
import type { PublicErrorBody } from './models.js';

/**
 * SPEC "Browser workflow API": reads with a key scoped to one project and one environment
 * (`X-API-Key: wdrp_…`, issued in the cabinet). A tenant key is 401; a path naming another project
 * or environment than the key's is 404, whoever owns it.
 */
@Route('api/v1/browser/projects/{projectId}/environments/{environmentId}')
@Tags('Browser workflow API')
@Security('project_key')
@Response<PublicErrorBody>(401, 'Missing, invalid or revoked project+environment key (a tenant key is not one)')
@Response<PublicErrorBody>(404, 'Not the key\'s project and environment, or no such webhook')
export class BrowserWorkflowController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * The project+environment's webhook endpoints, redacted (URL origin only), a cursor page.
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('webhooks')
  @Response<PublicErrorBody>(422, 'Bad limit or cursor')
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
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('webhooks/{webhookId}/deliveries')
  @Response<PublicErrorBody>(422, 'Bad limit or cursor')
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
}
