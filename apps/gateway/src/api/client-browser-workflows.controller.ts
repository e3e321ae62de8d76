import type { Request as ExRequest } from 'express';
import {
  Body,
  Controller,
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
  activateVersion,
  createDraftVersion,
  createWorkflow,
  listWorkflows,
  publishVersion,
  readWorkflow,
  updateDraftVersion,
} from '../domain/browser/workflows.js';
import { tenantOf } from './authentication.js';
import type {
  ActivateWorkflowVersionBody,
  CreateWorkflowBody,
  CreateWorkflowVersionBody,
  PublishWorkflowVersionBody,
  UpdateWorkflowVersionBody,
  Workflow,
  WorkflowDetail,
  WorkflowPage,
  WorkflowVersion,
} from '../models/browser.js';
import type { PublicErrorBody } from '../models/index.js';
import {
  createBrowserWorkflowExample,
  createBrowserWorkflowVersionExample,
  getBrowserWorkflowExample,
  listBrowserWorkflowsExample,
  updateBrowserWorkflowVersionExample,
} from '../models/examples/client-browser.js';
import {
  conflictError,
  idempotencyConflictError,
  internalError,
  malformedRequestError,
  notFoundError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Browser workflows in the cabinet: the workflows of a project and their versions. The conventions (Idempotency-Key, 204 writes, 404 for another tenant's ids) are ClientBrowserWorkspacesController's. */
@Route('api/v1/client/browser')
@Tags('Client API: browser workflows')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientBrowserWorkflowsController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Beyond the spec: create a workflow in a project (no version yet).
   * @summary Create a workflow
   * @param idempotencyKey Length 8..200.
   * @example body {"name": "Catalog snapshot"}
   */
  @Post('projects/{projectId}/workflows')
  @SuccessResponse(201, 'Created')
  @Example<Workflow>(createBrowserWorkflowExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the name or the Idempotency-Key is not valid', validationFailedError)
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workflow', notFoundError)
  public async getBrowserWorkflow(@Request() req: ExRequest, @Path() workflowId: string): Promise<WorkflowDetail> {
    return readWorkflow(this.deps, tenantOf(req).tenantId, workflowId);
  }

  /**
   * Beyond the spec: add a draft version (the next number, `revision` 1). The definition is a
   * submission body checked by the submission rules (422 VALIDATION_FAILED, fields under `definition.`).
   * @summary Add a draft version to a workflow
   * @param idempotencyKey Length 8..200.
   * @example body {"definition": {"url": "https://shop.example.com/catalog", "mode": "residential_browser", "geo_country": "DE", "wait_for_selector": "#products", "result_text_selector": "#products"}}
   */
  @Post('workflows/{workflowId}/versions')
  @SuccessResponse(201, 'Created')
  @Example<WorkflowVersion>(createBrowserWorkflowVersionExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workflow', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the definition breaks a submission rule (`details` fields under `definition.`), or the Idempotency-Key is not valid',
    validationFailedError,
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
   * @example body {"revision": 1, "definition": {"url": "https://shop.example.com/catalog", "mode": "residential_browser", "geo_country": "DE", "wait_for_selector": "#products", "result_text_selector": "#products"}}
   */
  @Patch('workflow-versions/{versionId}')
  @Example<WorkflowVersion>(updateBrowserWorkflowVersionExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such version', notFoundError)
  @Response<PublicErrorBody>(409, 'CONFLICT: the revision is stale or the version is published; or IDEMPOTENCY_CONFLICT', conflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the definition breaks a submission rule (`details` fields under `definition.`), or the revision or Idempotency-Key is not valid',
    validationFailedError,
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
   * @example body {"revision": 2}
   */
  @Post('workflow-versions/{versionId}/publish')
  @SuccessResponse(204, 'Published (no body)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such version', notFoundError)
  @Response<PublicErrorBody>(
    409,
    'CONFLICT: the revision is stale or the version is already published; or IDEMPOTENCY_CONFLICT',
    conflictError,
  )
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: revision is not an integer, or the Idempotency-Key is not valid',
    validationFailedError,
  )
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
   * @example body {"workflow_version": 2}
   */
  @Post('workflows/{workflowId}/versions/{versionId}/activate')
  @SuccessResponse(204, 'Activated (no body)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workflow or version', notFoundError)
  @Response<PublicErrorBody>(409, 'CONFLICT: workflow_version is stale or the version is a draft; or IDEMPOTENCY_CONFLICT', conflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: workflow_version is not an integer, or the Idempotency-Key is not valid',
    validationFailedError,
  )
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
