import type { Request as ExRequest } from 'express';
import {
  Body,
  Controller,
  Example,
  Get,
  Header,
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
import { createWorkspace, listWorkspaces } from '../domain/browser/workspaces.js';
import { tenantOf } from './authentication.js';
import type { CreateWorkspaceBody, Workspace, WorkspacePage } from '../models/browser.js';
import type { PublicErrorBody } from '../models/index.js';
import { createBrowserWorkspaceExample, listBrowserWorkspacesExample } from '../models/examples/client-browser.js';
import {
  idempotencyConflictError,
  internalError,
  malformedRequestError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/**
 * Browser workflows in the cabinet, split by sub-resource (client-browser-*.controller.ts); this one: the workspaces.
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
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientBrowserWorkspacesController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Beyond the spec: create a workspace with its first owner.
   * @summary Create a workspace
   * @param idempotencyKey Length 8..200.
   * @example body {"name": "Acme data team", "owner_user_id": 42}
   */
  @Post('workspaces')
  @SuccessResponse(201, 'Created')
  @Example<Workspace>(createBrowserWorkspaceExample)
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write', idempotencyConflictError)
  @Response<PublicErrorBody>(
    422,
    'VALIDATION_FAILED: the body or the Idempotency-Key is not valid (one `details` entry per problem)',
    validationFailedError,
  )
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
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
  public async listBrowserWorkspaces(@Request() req: ExRequest, @Query() cursor?: string, @Query() limit?: number): Promise<WorkspacePage> {
    return listWorkspaces(this.deps, tenantOf(req).tenantId, { cursor, limit });
  }
}
