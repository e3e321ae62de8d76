import type { Request as ExRequest } from 'express';
import {
  Body,
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
import { createProject, listProjects, readProject } from '../domain/browser/workspaces.js';
import { tenantOf } from './authentication.js';
import type { CreateProjectBody, Project, ProjectPage } from '../models/browser.js';
import type { PublicErrorBody } from '../models/index.js';
import { getBrowserProjectExample, listBrowserProjectsExample } from '../models/examples/client-browser.js';
import {
  conflictError,
  internalError,
  malformedRequestError,
  notFoundError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Browser workflows in the cabinet: the projects of a workspace. The conventions (Idempotency-Key, 204 writes, 404 for another tenant's ids) are ClientBrowserWorkspacesController's. */
@Route('api/v1/client/browser')
@Tags('Client API: browser workflows')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientBrowserProjectsController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * SPEC: create a project in the workspace, with its environments `production` and `staging`.
   * Answers 204 with no body; the new project's address is in `Location`
   * (`/api/v1/client/browser/projects/{projectId}`). A slug already used in the workspace is 409 CONFLICT.
   * @summary Create a project
   * @param idempotencyKey Length 8..200.
   * @example body {"name": "Catalog monitor", "slug": "catalog-monitor", "budget_cap_tokens": 5000}
   */
  @Post('workspaces/{workspaceId}/projects')
  @SuccessResponse(204, 'Created (no body; Location names the project)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace', notFoundError)
  @Response<PublicErrorBody>(409, 'CONFLICT: the slug is taken in the workspace; or IDEMPOTENCY_CONFLICT', conflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: name, slug, budget_cap_tokens or the Idempotency-Key is not valid',
    validationFailedError,
  )
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
  public async listBrowserProjects(
    @Request() req: ExRequest,
    @Path() workspaceId: string,
    @Query() cursor?: string,
    @Query() limit?: number,
  ): Promise<ProjectPage> {
    return listProjects(this.deps, tenantOf(req).tenantId, workspaceId, { cursor, limit });
  }

  /**
   * Beyond the spec: one project with its environments.
   * @summary Read a project
   */
  @Get('projects/{projectId}')
  @Example<Project>(getBrowserProjectExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project', notFoundError)
  public async getBrowserProject(@Request() req: ExRequest, @Path() projectId: string): Promise<Project> {
    return readProject(this.deps, tenantOf(req).tenantId, projectId);
  }
}
