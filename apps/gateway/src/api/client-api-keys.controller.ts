import type { Request as ExRequest } from 'express';
import { Controller, Delete, Example, Get, Path, Request, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { listTenantKeys, revokeTenantKey } from '../domain/tenants/cabinet-keys.js';
import { tenantOf } from './authentication.js';
import type { PublicErrorBody, TenantApiKeyList } from '../models/index.js';
import { listClientApiKeysExample } from '../models/examples/client-api-keys.js';
import { internalError, notFoundError, unauthenticatedError } from '../models/examples/errors.js';

/**
 * The tenant's data API keys (`X-API-Key: wdr_…`) in the cabinet: list them without their secrets
 * and revoke one. Issuing a key stays an operator command (`admin issue-key`).
 */
@Route('api/v1/client/api-keys')
@Tags('Client API: API keys')
@Security('bearer')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, invalid, expired or revoked bearer token', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
export class ClientApiKeysController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Beyond the spec: every data API key of the tenant, oldest first, revoked and expired ones
   * included, with its prefix, label, dates and state; never the key itself.
   * @summary List the tenant's API keys
   */
  @Get()
  @Example<TenantApiKeyList>(listClientApiKeysExample)
  public async listClientApiKeys(@Request() req: ExRequest): Promise<TenantApiKeyList> {
    return listTenantKeys(this.deps, tenantOf(req).tenantId);
  }

  /**
   * Beyond the spec: revoke one of the tenant's keys. Every gateway replica refuses it (401) within
   * seconds, as with an operator's `admin revoke-key`. Revoking twice is harmless; revoking the key
   * in use by the tenant's own clients is allowed (they get 401 from then on).
   * @summary Revoke an API key
   */
  @Delete('{keyId}')
  @SuccessResponse(204, 'Revoked')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such key of this tenant', notFoundError)
  public async revokeClientApiKey(@Request() req: ExRequest, @Path() keyId: string): Promise<void> {
    await revokeTenantKey(this.deps, tenantOf(req).tenantId, keyId);
    this.setStatus(204);
  }
}
