import type { Request } from 'express';
import { DependencyUnavailableError, PublicError } from '@wdr/kit/errors';
import { authenticateCabinetToken } from '../domain/auth/cabinet-tokens.js';
import type { SubmissionContext } from '../domain/requests/data-requests.js';
import { authenticateProjectKey } from '../domain/browser/project-keys.js';
import { authenticateApiKey, type AuthenticatedTenant } from '../domain/tenants/tenants.js';
import { depsOf } from './ioc.js';
import { preAuthenticated } from './pre-authentication.js';

/**
 * tsoa's authentication hook. `@Security('api_key')`: the tenant's key in `X-API-Key` (data API).
 * `@Security('bearer')`: a cabinet token in `Authorization: Bearer <token>` (client API).
 * `@Security('project_key')`: a project+environment key in `X-API-Key` (browser-workflow API).
 * Missing or bad credentials are a 401 PublicError; a database failure is a 503, never a 401.
 */
export async function expressAuthentication(req: Request, securityName: string): Promise<AuthenticatedTenant> {
  const deps = depsOf(req);
  // Checked before the body was read (pre-authentication.ts): not looked up twice.
  const already = preAuthenticated(req, securityName);
  if (already) return already;
  try {
    switch (securityName) {
      case 'api_key':
        return await authenticateApiKey(deps.db, req.header('x-api-key'), deps.env.API_KEY_PEPPER, deps.credentials);
      case 'project_key':
        return await authenticateProjectKey(deps.db, req.header('x-api-key'), deps.env.API_KEY_PEPPER, deps.credentials);
      case 'bearer':
        return await authenticateCabinetToken(deps.db, req.header('authorization'), deps.env.API_KEY_PEPPER, deps.credentials);
      default:
        throw new PublicError('UNAUTHENTICATED', 'Unsupported credential.');
    }
  } catch (err) {
    if (err instanceof PublicError) {
      if (securityName === 'bearer' && err.code === 'UNAUTHENTICATED') req.res?.setHeader('WWW-Authenticate', 'Bearer realm="wdr-client"');
      throw err;
    }
    throw new DependencyUnavailableError('credentials could not be checked', err);
  }
}

export function tenantOf(req: Request): AuthenticatedTenant {
  return (req as Request & { user: AuthenticatedTenant }).user;
}

/** What a submission use case needs from the HTTP request: the tenant, its key, and where headers go. */
export function submissionContext(req: Request, idempotencyKey: string | undefined): SubmissionContext {
  return {
    tenant: tenantOf(req),
    idempotencyKey,
    setHeader: (name, value) => req.res?.setHeader(name, value),
  };
}
