import type { Request } from 'express';
import { PublicError } from '@wdr/kit/errors';
import { authenticateApiKey, type AuthenticatedTenant } from '../domain/tenants/tenants.js';
import { depsOf } from './ioc.js';

/** tsoa's authentication hook: `@Security('api_key')` resolves the tenant from X-API-Key. */
export async function expressAuthentication(req: Request, securityName: string): Promise<AuthenticatedTenant> {
  if (securityName !== 'api_key') throw new PublicError('UNAUTHENTICATED', 'Unsupported credential.');
  const deps = depsOf(req);
  return authenticateApiKey(deps.db, req.header('x-api-key'), deps.env.API_KEY_PEPPER);
}

export function tenantOf(req: Request): AuthenticatedTenant {
  return (req as Request & { user: AuthenticatedTenant }).user;
}
