import type { Request as ExRequest } from 'express';
import {
  Body,
  Controller,
  Delete,
  Example,
  Get,
  Header,
  Patch,
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
import {
  cabinetScope,
  createWebhook,
  deleteWebhook,
  disableWebhook,
  listDeliveries,
  listWebhooks,
  readWebhook,
  redeliverWebhookMessage,
  rotateWebhookSecret,
  updateWebhook,
} from '../domain/browser/webhooks.js';
import { tenantOf } from './authentication.js';
import type {
  CreateWebhookBody,
  RotateWebhookSecretBody,
  UpdateWebhookBody,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointWithSecret,
  WebhookMessage,
} from '../models/browser.js';
import type { PublicErrorBody } from '../models/index.js';
import {
  createBrowserWebhookExample,
  disableBrowserWebhookExample,
  getBrowserWebhookExample,
  listBrowserWebhookDeliveriesExample,
  listBrowserWebhooksExample,
  redeliverBrowserWebhookMessageExample,
  rotateBrowserWebhookSecretExample,
  updateBrowserWebhookExample,
} from '../models/examples/client-browser.js';
import {
  conflictError,
  dependencyUnavailableError,
  idempotencyConflictError,
  internalError,
  malformedRequestError,
  notFoundError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Browser workflows in the cabinet: the webhook endpoints of a project environment, and their deliveries. The conventions (Idempotency-Key, 204 writes, 404 for another tenant's ids) are ClientBrowserWorkspacesController's. */
@Route('api/v1/client/browser')
@Tags('Client API: browser workflows')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientBrowserWebhooksController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Beyond the spec: create a webhook endpoint of a project and environment. The signing secret
   * (`whsec_…`) is in this answer only. A URL whose host is a private, loopback, link-local or
   * metadata address is refused (422).
   * @summary Create a webhook endpoint
   * @param idempotencyKey Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`).
   * @example body {"url": "https://hooks.example.com/wdr", "event_types": ["request.completed", "request.failed"], "description": "Order pipeline"}
   */
  @Post('projects/{projectId}/environments/{environmentId}/webhooks')
  @SuccessResponse(201, 'Created')
  @Example<WebhookEndpointWithSecret>(createBrowserWebhookExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the body is not valid, or the URL is refused (private, loopback, link-local or metadata address)',
    validationFailedError,
  )
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async createBrowserWebhook(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Body() body: CreateWebhookBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<WebhookEndpointWithSecret> {
    const tenantId = tenantOf(req).tenantId;
    const created = await createWebhook(
      this.deps,
      tenantId,
      idempotencyKey,
      await cabinetScope(this.deps, tenantId, projectId, environmentId),
      body,
    );
    this.setStatus(201);
    return created;
  }

  /**
   * Beyond the spec: the webhook endpoints of a project and environment (the cabinet's view of the browser-workflow listing).
   * @summary List a project+environment's webhook endpoints
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('projects/{projectId}/environments/{environmentId}/webhooks')
  @Example<WebhookEndpointPage>(listBrowserWebhooksExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async listBrowserWebhooks(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<WebhookEndpointPage> {
    const tenantId = tenantOf(req).tenantId;
    return listWebhooks(this.deps, tenantId, await cabinetScope(this.deps, tenantId, projectId, environmentId), { cursor, limit });
  }

  /**
   * Beyond the spec: one webhook endpoint, redacted.
   * @summary Read a webhook endpoint
   */
  @Get('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}')
  @Example<WebhookEndpoint>(getBrowserWebhookExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook', notFoundError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async getBrowserWebhook(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
  ): Promise<WebhookEndpoint> {
    const tenantId = tenantOf(req).tenantId;
    return readWebhook(this.deps, tenantId, await cabinetScope(this.deps, tenantId, projectId, environmentId), webhookId);
  }

  /**
   * Beyond the spec: change an endpoint's URL, event types or description; `enabled: true` re-enables it.
   * @summary Update or re-enable a webhook endpoint
   * @param idempotencyKey Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`).
   * @example body {"event_types": ["request.completed"], "enabled": true}
   */
  @Patch('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}')
  @Example<WebhookEndpoint>(updateBrowserWebhookExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the body is not valid, or the URL is refused (private, loopback, link-local or metadata address)',
    validationFailedError,
  )
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async updateBrowserWebhook(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
    @Body() body: UpdateWebhookBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<WebhookEndpoint> {
    const tenantId = tenantOf(req).tenantId;
    return updateWebhook(
      this.deps,
      tenantId,
      idempotencyKey,
      await cabinetScope(this.deps, tenantId, projectId, environmentId),
      webhookId,
      body,
    );
  }

  /**
   * Beyond the spec: disable an endpoint (its pending deliveries wait; it takes no new events until re-enabled).
   * @summary Disable a webhook endpoint
   * @param idempotencyKey Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`).
   */
  @Post('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/disable')
  @Example<WebhookEndpoint>(disableBrowserWebhookExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async disableBrowserWebhook(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<WebhookEndpoint> {
    const tenantId = tenantOf(req).tenantId;
    return disableWebhook(
      this.deps,
      tenantId,
      idempotencyKey,
      await cabinetScope(this.deps, tenantId, projectId, environmentId),
      webhookId,
    );
  }

  /**
   * Beyond the spec: delete an endpoint with its pending deliveries and attempts.
   * @summary Delete a webhook endpoint
   * @param idempotencyKey Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`).
   */
  @Delete('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}')
  @SuccessResponse(204, 'Deleted')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async deleteBrowserWebhook(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    const tenantId = tenantOf(req).tenantId;
    await deleteWebhook(this.deps, tenantId, idempotencyKey, await cabinetScope(this.deps, tenantId, projectId, environmentId), webhookId);
    this.setStatus(204);
  }

  /**
   * Beyond the spec: a new signing secret, in this answer only; the previous one keeps signing beside
   * it for `previous_valid_seconds` (default a day; 0 revokes it at once).
   * @summary Rotate a webhook endpoint's signing secret
   * @param idempotencyKey Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`).
   * @example body {"previous_valid_seconds": 3600}
   */
  @Post('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/rotate-secret')
  @Example<WebhookEndpointWithSecret>(rotateBrowserWebhookSecretExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: previous_valid_seconds is not an integer 0..604800', validationFailedError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async rotateBrowserWebhookSecret(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
    @Body() body: RotateWebhookSecretBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<WebhookEndpointWithSecret> {
    const tenantId = tenantOf(req).tenantId;
    return rotateWebhookSecret(
      this.deps,
      tenantId,
      idempotencyKey,
      await cabinetScope(this.deps, tenantId, projectId, environmentId),
      webhookId,
      body,
    );
  }

  /**
   * Beyond the spec: an endpoint's delivery attempts, redacted (the cabinet's view of the browser-workflow listing).
   * @summary List a webhook endpoint's delivery attempts
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/deliveries')
  @Example<WebhookDeliveryPage>(listBrowserWebhookDeliveriesExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async listBrowserWebhookDeliveries(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<WebhookDeliveryPage> {
    const tenantId = tenantOf(req).tenantId;
    return listDeliveries(this.deps, tenantId, await cabinetScope(this.deps, tenantId, projectId, environmentId), webhookId, {
      cursor,
      limit,
    });
  }

  /**
   * Beyond the spec: deliver one message again now (by its `webhook-id`, the deliveries list's
   * `message_id`), whatever its status: same webhook-id and body, its retry schedule started over.
   * @summary Redeliver a webhook message
   * @param messageId The message's `webhook-id` (`msg_…`).
   */
  @Post('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/deliveries/{messageId}/redeliver')
  @Example<WebhookMessage>(redeliverBrowserWebhookMessageExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment, webhook or message', notFoundError)
  @Response<PublicErrorBody>(409, 'CONFLICT: the message is being delivered right now', conflictError)
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly', dependencyUnavailableError)
  public async redeliverBrowserWebhookMessage(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() webhookId: string,
    @Path() messageId: string,
  ): Promise<WebhookMessage> {
    const tenantId = tenantOf(req).tenantId;
    return redeliverWebhookMessage(
      this.deps,
      tenantId,
      await cabinetScope(this.deps, tenantId, projectId, environmentId),
      webhookId,
      messageId,
    );
  }
}
