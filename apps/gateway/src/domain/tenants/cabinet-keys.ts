import type { GatewayDeps } from '../../deps.js';
import { idOrNotFound, notFound } from '../browser/claims.js';
import { listKeys, type KeyListing } from './tenants.js';

/**
 * The cabinet's view of the tenant's data API keys (`wdr_…`): every key, revoked and expired ones
 * included, never a secret. The same listing as the operators' `admin list-keys`.
 */
export async function listTenantKeys(deps: Pick<GatewayDeps, 'db'>, tenantId: string): Promise<{ items: KeyListing[] }> {
  return { items: await listKeys(deps.db, tenantId) };
}

/**
 * Revoke one of the tenant's own keys, effective like `admin revoke-key`: this replica at once, the
 * others when the gateway database's notification of the change reaches them (the credential
 * cache's LISTEN, milliseconds; a dead connection is found by its heartbeat within
 * AUTH_LISTEN_HEARTBEAT_MS and the cache is off until it listens again). Another tenant's key, or
 * an id that is not a uuid, is 404 like a missing one. Revoking twice is harmless; revoking the key
 * the tenant's own clients use is allowed (the cabinet authenticates with its bearer token, not with
 * the key).
 */
export async function revokeTenantKey(deps: Pick<GatewayDeps, 'db' | 'credentials'>, tenantId: string, keyId: string): Promise<void> {
  const id = idOrNotFound(keyId, 'API key');
  const revoked = await deps.db.apiKey.updateMany({ where: { id, tenantId, revokedAt: null }, data: { revokedAt: new Date() } });
  if (revoked.count === 0 && (await deps.db.apiKey.count({ where: { id, tenantId } })) === 0) throw notFound('API key');
  deps.credentials.invalidateTenant(tenantId);
}
