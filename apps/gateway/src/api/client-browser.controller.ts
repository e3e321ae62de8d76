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
import { issueProjectKey, listProjectKeys, revokeProjectKey } from '../domain/browser/project-keys.js';
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
import {
  activateVersion,
  createDraftVersion,
  createWorkflow,
  listWorkflows,
  publishVersion,
  readWorkflow,
  updateDraftVersion,
} from '../domain/browser/workflows.js';
import {
  createProject,
  createWorkspace,
  listMembers,
  listProjects,
  listWorkspaces,
  putMember,
  readProject,
  removeMember,
} from '../domain/browser/workspaces.js';
import { tenantOf } from './authentication.js';
import type {
  ActivateWorkflowVersionBody,
  AddMemberBody,
  CreateProjectBody,
  CreateProjectKeyBody,
  CreateWebhookBody,
  CreateWorkflowBody,
  CreateWorkflowVersionBody,
  CreateWorkspaceBody,
  Project,
  ProjectKey,
  ProjectPage,
  PublishWorkflowVersionBody,
  RotateWebhookSecretBody,
  UpdateWebhookBody,
  UpdateWorkflowVersionBody,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointWithSecret,
  WebhookMessage,
  Workflow,
  WorkflowDetail,
  WorkflowPage,
  WorkflowVersion,
  Workspace,
  WorkspaceMemberPage,
  WorkspacePage,
} from '../models/browser.js';
import type { PublicErrorBody } from '../models/index.js';
import {
  createBrowserWebhookExample,
  createBrowserWorkflowExample,
  createBrowserWorkflowVersionExample,
  createBrowserWorkspaceExample,
  disableBrowserWebhookExample,
  getBrowserProjectExample,
  getBrowserWebhookExample,
  getBrowserWorkflowExample,
  issueBrowserProjectKeyExample,
  listBrowserMembersExample,
  listBrowserProjectKeysExample,
  listBrowserProjectsExample,
  listBrowserWebhookDeliveriesExample,
  listBrowserWebhooksExample,
  listBrowserWorkflowsExample,
  listBrowserWorkspacesExample,
  redeliverBrowserWebhookMessageExample,
  rotateBrowserWebhookSecretExample,
  updateBrowserWebhookExample,
  updateBrowserWorkflowVersionExample,
} from '../models/examples/client-browser.js';

/**
 * Browser workflows in the cabinet (SPEC "Client (cabinet) API"): the spec's four writes (create a
 * project, add or update a member, publish a version, activate a version) answer 204 with no body;
 * everything else here is beyond the spec (docs/api.md "Browser workflows"). Writes to the gateway's
 * own records take an optional Idempotency-Key (8..200): the same key with the same write replays it
 * (204 again, the same answer), with another write it is 409 IDEMPOTENCY_CONFLICT; without it every
 * call is a new write. Another tenant's ids are 404.
 *
 * Error descriptions name their codes (`CODE: when`); openapi-document.test.ts checks each code's status.
 */
@Route('api/v1/client/browser')
@Tags('Client API: browser workflows')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token')
export class ClientBrowserController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Beyond the spec: create a workspace with its first owner.
   * @summary Create a workspace
   * @param idempotencyKey Length 8..200.
   */
  @Post('workspaces')
  @SuccessResponse(201, 'Created')
  @Example<Workspace>(createBrowserWorkspaceExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the body or the Idempotency-Key is not valid (one `details` entry per problem)')
  public async createBrowserWorkspace(
    @Request() req: ExRequest,
    @Body() body: CreateWorkspaceBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<Workspace> {
    const w = await createWorkspace(this.deps, tenantOf(req).tenantId, idempotencyKey, body);
    this.setStatus(201);
    return w;
  }

  /**
   * Beyond the spec: the tenant's workspaces, a cursor page in creation order.
   * @summary List workspaces
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('workspaces')
  @Example<WorkspacePage>(listBrowserWorkspacesExample)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  public async listBrowserWorkspaces(@Request() req: ExRequest, @Query() cursor?: string, @Query() limit?: number): Promise<WorkspacePage> {
    return listWorkspaces(this.deps, tenantOf(req).tenantId, { cursor, limit });
  }

  /**
   * SPEC: create a project in the workspace, with its environments `production` and `staging`.
   * Answers 204 with no body; the new project's address is in `Location`
   * (`/api/v1/client/browser/projects/{projectId}`). A slug already used in the workspace is 409 CONFLICT.
   * @summary Create a project
   * @param idempotencyKey Length 8..200.
   */
  @Post('workspaces/{workspaceId}/projects')
  @SuccessResponse(204, 'Created (no body; Location names the project)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace')
  @Response<PublicErrorBody>(409, 'CONFLICT: the slug is taken in the workspace; or IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: name, slug, budget_cap_tokens or the Idempotency-Key is not valid')
  public async createBrowserProject(
    @Request() req: ExRequest,
    @Path() workspaceId: string,
    @Body() body: CreateProjectBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    const { project_id } = await createProject(this.deps, tenantOf(req).tenantId, idempotencyKey, workspaceId, body);
    this.setHeader('Location', `/api/v1/client/browser/projects/${project_id}`);
    this.setStatus(204);
  }

  /**
   * Beyond the spec: the workspace's projects with their environments, a cursor page in creation order.
   * @summary List a workspace's projects
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('workspaces/{workspaceId}/projects')
  @Example<ProjectPage>(listBrowserProjectsExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  public async listBrowserProjects(
    @Request() req: ExRequest,
    @Path() workspaceId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<ProjectPage> {
    return listProjects(this.deps, tenantOf(req).tenantId, workspaceId, { cursor, limit });
  }

  /**
   * SPEC: add a member to the workspace, or change an existing member's role. Answers 204 with no
   * body. Demoting the workspace's last owner is 409 CONFLICT.
   * @summary Add a member or change its role
   * @param idempotencyKey Length 8..200.
   */
  @Post('workspaces/{workspaceId}/members')
  @SuccessResponse(204, 'Added or updated (no body)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace')
  @Response<PublicErrorBody>(409, 'CONFLICT: the change would demote the last owner; or IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: user_id, role or the Idempotency-Key is not valid')
  public async putBrowserMember(
    @Request() req: ExRequest,
    @Path() workspaceId: string,
    @Body() body: AddMemberBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    await putMember(this.deps, tenantOf(req).tenantId, idempotencyKey, workspaceId, body);
    this.setStatus(204);
  }

  /**
   * Beyond the spec: the workspace's members by user id, a cursor page.
   * @summary List a workspace's members
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('workspaces/{workspaceId}/members')
  @Example<WorkspaceMemberPage>(listBrowserMembersExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  public async listBrowserMembers(
    @Request() req: ExRequest,
    @Path() workspaceId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<WorkspaceMemberPage> {
    return listMembers(this.deps, tenantOf(req).tenantId, workspaceId, { cursor, limit });
  }

  /**
   * Beyond the spec: remove a member. Removing the workspace's last owner is 409 CONFLICT.
   * @summary Remove a member
   * @param idempotencyKey Length 8..200.
   * @isInt userId
   */
  @Delete('workspaces/{workspaceId}/members/{userId}')
  @SuccessResponse(204, 'Removed')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace or member')
  @Response<PublicErrorBody>(409, 'CONFLICT: the member is the last owner; or IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: userId is not an integer, or the Idempotency-Key is not valid')
  public async removeBrowserMember(
    @Request() req: ExRequest,
    @Path() workspaceId: string,
    @Path() userId: number,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    await removeMember(this.deps, tenantOf(req).tenantId, idempotencyKey, workspaceId, userId);
    this.setStatus(204);
  }

  /**
   * Beyond the spec: one project with its environments.
   * @summary Read a project
   */
  @Get('projects/{projectId}')
  @Example<Project>(getBrowserProjectExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project')
  public async getBrowserProject(@Request() req: ExRequest, @Path() projectId: string): Promise<Project> {
    return readProject(this.deps, tenantOf(req).tenantId, projectId);
  }

  /**
   * Beyond the spec: issue a key of the browser-workflow API for one project and environment. The
   * key (`api_key`) is in this answer only; it is stored hashed.
   * @summary Issue a project+environment key
   * @param idempotencyKey Length 8..200.
   */
  @Post('projects/{projectId}/environments/{environmentId}/api-keys')
  @SuccessResponse(201, 'Issued')
  @Example<ProjectKey>(issueBrowserProjectKeyExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the label or the Idempotency-Key is not valid')
  public async issueBrowserProjectKey(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Body() body: CreateProjectKeyBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<ProjectKey> {
    const key = await issueProjectKey(this.deps, tenantOf(req).tenantId, idempotencyKey, projectId, environmentId, body);
    this.setStatus(201);
    return key;
  }

  /**
   * Beyond the spec: the unrevoked keys of a project and environment (never the keys themselves).
   * @summary List a project+environment's keys
   */
  @Get('projects/{projectId}/environments/{environmentId}/api-keys')
  @Example<{ items: ProjectKey[] }>(listBrowserProjectKeysExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment')
  public async listBrowserProjectKeys(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
  ): Promise<{ items: ProjectKey[] }> {
    return listProjectKeys(this.deps, tenantOf(req).tenantId, projectId, environmentId);
  }

  /**
   * Beyond the spec: revoke a key (at once; revoking twice is harmless).
   * @summary Revoke a project+environment key
   */
  @Delete('projects/{projectId}/environments/{environmentId}/api-keys/{keyId}')
  @SuccessResponse(204, 'Revoked')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or key')
  public async revokeBrowserProjectKey(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() keyId: string,
  ): Promise<void> {
    await revokeProjectKey(this.deps, tenantOf(req).tenantId, projectId, environmentId, keyId);
    this.setStatus(204);
  }

  /**
   * Beyond the spec: create a webhook endpoint of a project and environment. The signing secret
   * (`whsec_…`) is in this answer only. A URL whose host is a private, loopback, link-local or
   * metadata address is refused (422).
   * @summary Create a webhook endpoint
   * @param idempotencyKey Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`).
   */
  @Post('projects/{projectId}/environments/{environmentId}/webhooks')
  @SuccessResponse(201, 'Created')
  @Example<WebhookEndpointWithSecret>(createBrowserWebhookExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the body is not valid, or the URL is refused (private, loopback, link-local or metadata address)',
  )
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
   */
  @Patch('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}')
  @Example<WebhookEndpoint>(updateBrowserWebhookExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the body is not valid, or the URL is refused (private, loopback, link-local or metadata address)',
  )
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
   */
  @Post('projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/rotate-secret')
  @Example<WebhookEndpointWithSecret>(rotateBrowserWebhookSecretExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: previous_valid_seconds is not an integer 0..604800')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or webhook')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment, webhook or message')
  @Response<PublicErrorBody>(409, 'CONFLICT: the message is being delivered right now')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly')
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

  /**
   * Beyond the spec: create a workflow in a project (no version yet).
   * @summary Create a workflow
   * @param idempotencyKey Length 8..200.
   */
  @Post('projects/{projectId}/workflows')
  @SuccessResponse(201, 'Created')
  @Example<Workflow>(createBrowserWorkflowExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the name or the Idempotency-Key is not valid')
  public async createBrowserWorkflow(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Body() body: CreateWorkflowBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<Workflow> {
    const w = await createWorkflow(this.deps, tenantOf(req).tenantId, idempotencyKey, projectId, body);
    this.setStatus(201);
    return w;
  }

  /**
   * Beyond the spec: a project's workflows, a cursor page in creation order.
   * @summary List a project's workflows
   * @param cursor `next_cursor` of the previous page.
   * @param limit 1..100, default 50.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('projects/{projectId}/workflows')
  @Example<WorkflowPage>(listBrowserWorkflowsExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  public async listBrowserWorkflows(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<WorkflowPage> {
    return listWorkflows(this.deps, tenantOf(req).tenantId, projectId, { cursor, limit });
  }

  /**
   * Beyond the spec: a workflow with its `workflow_version`, its active version and every version, newest first.
   * @summary Read a workflow with its versions
   */
  @Get('workflows/{workflowId}')
  @Example<WorkflowDetail>(getBrowserWorkflowExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workflow')
  public async getBrowserWorkflow(@Request() req: ExRequest, @Path() workflowId: string): Promise<WorkflowDetail> {
    return readWorkflow(this.deps, tenantOf(req).tenantId, workflowId);
  }

  /**
   * Beyond the spec: add a draft version (the next number, `revision` 1). The definition is a
   * submission body checked by the submission rules (422 VALIDATION_FAILED, fields under `definition.`).
   * @summary Add a draft version to a workflow
   * @param idempotencyKey Length 8..200.
   */
  @Post('workflows/{workflowId}/versions')
  @SuccessResponse(201, 'Created')
  @Example<WorkflowVersion>(createBrowserWorkflowVersionExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workflow')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write')
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the definition breaks a submission rule (`details` fields under `definition.`), or the Idempotency-Key is not valid',
  )
  public async createBrowserWorkflowVersion(
    @Request() req: ExRequest,
    @Path() workflowId: string,
    @Body() body: CreateWorkflowVersionBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<WorkflowVersion> {
    const v = await createDraftVersion(this.deps, tenantOf(req).tenantId, idempotencyKey, workflowId, body);
    this.setStatus(201);
    return v;
  }

  /**
   * Beyond the spec: edit a draft with its current `revision` (stale: 409 CONFLICT; published: 409 CONFLICT); the edit increments it.
   * @summary Edit a draft version
   * @param idempotencyKey Length 8..200.
   */
  @Patch('workflow-versions/{versionId}')
  @Example<WorkflowVersion>(updateBrowserWorkflowVersionExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such version')
  @Response<PublicErrorBody>(409, 'CONFLICT: the revision is stale or the version is published; or IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the definition breaks a submission rule (`details` fields under `definition.`), or the revision or Idempotency-Key is not valid',
  )
  public async updateBrowserWorkflowVersion(
    @Request() req: ExRequest,
    @Path() versionId: string,
    @Body() body: UpdateWorkflowVersionBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<WorkflowVersion> {
    return updateDraftVersion(this.deps, tenantOf(req).tenantId, idempotencyKey, versionId, body);
  }

  /**
   * SPEC: publish a draft with its current `revision`; the version is immutable from then on. Answers
   * 204 with no body. A stale revision, or a version already published, is 409 CONFLICT.
   * @summary Publish a draft version
   * @param idempotencyKey Length 8..200.
   */
  @Post('workflow-versions/{versionId}/publish')
  @SuccessResponse(204, 'Published (no body)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such version')
  @Response<PublicErrorBody>(409, 'CONFLICT: the revision is stale or the version is already published; or IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: revision is not an integer, or the Idempotency-Key is not valid')
  public async publishBrowserWorkflowVersion(
    @Request() req: ExRequest,
    @Path() versionId: string,
    @Body() body: PublishWorkflowVersionBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    await publishVersion(this.deps, tenantOf(req).tenantId, idempotencyKey, versionId, body);
    this.setStatus(204);
  }

  /**
   * SPEC: make a published version the workflow's active one, given the workflow's current
   * `workflow_version` (each activation increments it). Activating an earlier published version is
   * the rollback. Answers 204 with no body. A stale `workflow_version` or a draft is 409 CONFLICT.
   * @summary Activate a published version (or roll back to one)
   * @param idempotencyKey Length 8..200.
   */
  @Post('workflows/{workflowId}/versions/{versionId}/activate')
  @SuccessResponse(204, 'Activated (no body)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workflow or version')
  @Response<PublicErrorBody>(409, 'CONFLICT: workflow_version is stale or the version is a draft; or IDEMPOTENCY_CONFLICT')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: workflow_version is not an integer, or the Idempotency-Key is not valid')
  public async activateBrowserWorkflowVersion(
    @Request() req: ExRequest,
    @Path() workflowId: string,
    @Path() versionId: string,
    @Body() body: ActivateWorkflowVersionBody,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    await activateVersion(this.deps, tenantOf(req).tenantId, idempotencyKey, workflowId, versionId, body);
    this.setStatus(204);
  }
}
