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
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { listMembers, putMember, removeMember } from '../domain/browser/workspaces.js';
import { tenantOf } from './authentication.js';
import type { AddMemberBody, WorkspaceMemberPage } from '../models/browser.js';
import type { PublicErrorBody } from '../models/index.js';
import { listBrowserMembersExample } from '../models/examples/client-browser.js';
import {
  conflictError,
  internalError,
  malformedRequestError,
  notFoundError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Browser workflows in the cabinet: the members of a workspace. The conventions (Idempotency-Key, 204 writes, 404 for another tenant's ids) are ClientBrowserWorkspacesController's. */
@Route('api/v1/client/browser')
@Tags('Client API: browser workflows')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientBrowserMembersController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * SPEC: add a member to the workspace, or change an existing member's role. Answers 204 with no
   * body. Demoting the workspace's last owner is 409 CONFLICT.
   * @summary Add a member or change its role
   * @param idempotencyKey Length 8..200.
   * @example body {"user_id": 43, "role": "member"}
   */
  @Post('workspaces/{workspaceId}/members')
  @SuccessResponse(204, 'Added or updated (no body)')
  @Response<PublicErrorBody>(400, 'MALFORMED_REQUEST: the body is not JSON', malformedRequestError)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace', notFoundError)
  @Response<PublicErrorBody>(409, 'CONFLICT: the change would demote the last owner; or IDEMPOTENCY_CONFLICT', conflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: user_id, role or the Idempotency-Key is not valid', validationFailedError)
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
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
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such workspace or member', notFoundError)
  @Response<PublicErrorBody>(409, 'CONFLICT: the member is the last owner; or IDEMPOTENCY_CONFLICT', conflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: userId is not an integer, or the Idempotency-Key is not valid', validationFailedError)
  public async removeBrowserMember(
    @Request() req: ExRequest,
    @Path() workspaceId: string,
    @Path() userId: number,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<void> {
    await removeMember(this.deps, tenantOf(req).tenantId, idempotencyKey, workspaceId, userId);
    this.setStatus(204);
  }
}
