import type { Request as ExRequest } from 'express';
import {
  Body,
  Controller,
  Delete,
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
import { issueProjectKey, listProjectKeys, revokeProjectKey } from '../domain/browser/project-keys.js';
import { tenantOf } from './authentication.js';
import type { CreateProjectKeyBody, ProjectKey } from '../models/browser.js';
import type { PublicErrorBody } from '../models/index.js';
import { issueBrowserProjectKeyExample, listBrowserProjectKeysExample } from '../models/examples/client-browser.js';
import {
  idempotencyConflictError,
  internalError,
  malformedRequestError,
  notFoundError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Browser workflows in the cabinet: the project+environment API keys (the browser-workflow API's credentials). The conventions (Idempotency-Key, 204 writes, 404 for another tenant's ids) are ClientBrowserWorkspacesController's. */
@Route('api/v1/client/browser')
@Tags('Client API: browser workflows')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientBrowserApiKeysController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Beyond the spec: issue a key of the browser-workflow API for one project and environment. The
   * key (`api_key`) is in this answer only; it is stored hashed.
   * @summary Issue a project+environment key
   * @param idempotencyKey Length 8..200.
   * @example body {"label": "ci-pipeline"}
   */
  @Post('projects/{projectId}/environments/{environmentId}/api-keys')
  @SuccessResponse(201, 'Issued')
  @Example<ProjectKey>(issueBrowserProjectKeyExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the label or the Idempotency-Key is not valid', validationFailedError)
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project or environment', notFoundError)
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such project, environment or key', notFoundError)
  public async revokeBrowserProjectKey(
    @Request() req: ExRequest,
    @Path() projectId: string,
    @Path() environmentId: string,
    @Path() keyId: string,
  ): Promise<void> {
    await revokeProjectKey(this.deps, tenantOf(req).tenantId, projectId, environmentId, keyId);
    this.setStatus(204);
  }
}
