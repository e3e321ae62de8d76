import { randomUUID } from 'node:crypto';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient, TenantLimits } from '../../generated/prisma/client.js';
import type { CredentialCache } from '../auth/credential-cache.js';
import type { AuthenticatedTenant, LimitOverrides } from './authenticated-tenant.js';
import { digestMatches, hashApiKey, issueApiKey, prefixOf } from './api-keys.js';

export type { AuthenticatedTenant, LimitOverrides } from './authenticated-tenant.js';

export function limitsOf(row: TenantLimits | null): LimitOverrides {
  if (!row) return {};
  return {
    ...(row.submissionsPerWindow !== null ? { submissionsPerWindow: row.submissionsPerWindow } : {}),
    ...(row.windowSeconds !== null ? { windowSeconds: row.windowSeconds } : {}),
    ...(row.maxConcurrentRequests !== null ? { maxConcurrentRequests: row.maxConcurrentRequests } : {}),
    ...(row.readsPerWindow !== null ? { readsPerWindow: row.readsPerWindow } : {}),
    ...(row.maxConcurrentReads !== null ? { maxConcurrentReads: row.maxConcurrentReads } : {}),
  };
}

const badKey = () => new PublicError('UNAUTHENTICATED', 'A valid X-API-Key header is required.');

/** The tenant of a valid, unrevoked key of an active tenant; answered from `cache` when it holds the key. */
export async function authenticateApiKey(
  db: PrismaClient,
  key: string | undefined,
  pepper: string,
  cache: CredentialCache,
): Promise<AuthenticatedTenant> {
  const prefix = key ? prefixOf(key) : undefined;
  if (!key || !prefix) throw badKey();
  const digest = hashApiKey(key, pepper);
  const load = async () => {
    const row = await db.apiKey.findUnique({ where: { prefix }, include: { tenant: { include: { limits: true } } } });
    if (!row || row.revokedAt || row.tenant.status !== 'active' || !digestMatches(digest, row.hash)) throw badKey();
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) throw badKey();
    return {
      tenant: { tenantId: row.tenantId, credential: 'api_key' as const, limits: limitsOf(row.tenant.limits) },
      credentialExpiresAt: row.expiresAt,
    };
  };
  return cache.resolve(`api_key:${digest}`, load);
}

export async function createTenant(db: PrismaClient, name: string, pepper: string): Promise<{ tenantId: string; apiKey: string }> {
  const tenantId = randomUUID();
  const issued = issueApiKey(pepper);
  await db.tenant.create({
    data: { id: tenantId, name, apiKeys: { create: { id: randomUUID(), prefix: issued.prefix, hash: issued.hash } } },
  });
  return { tenantId, apiKey: issued.key };
}

/**
 * The operator's create-tenant: one tenant per name. Under a transaction-scoped advisory lock on
 * the name, an existing tenant of that name is returned instead of a second one being made (two
 * concurrent runs cannot both create).
 */
export async function createTenantNamed(
  db: PrismaClient,
  name: string,
  pepper: string,
): Promise<{ created: true; tenantId: string; apiKey: string } | { created: false; tenantId: string }> {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(hashtextextended(${`tenant-name:${name}`}, 0))) AS l`;
    const existing = await tx.tenant.findFirst({ where: { name }, orderBy: { createdAt: 'asc' }, select: { id: true } });
    if (existing) return { created: false as const, tenantId: existing.id };
    const tenantId = randomUUID();
    const issued = issueApiKey(pepper);
    await tx.tenant.create({
      data: { id: tenantId, name, apiKeys: { create: { id: randomUUID(), prefix: issued.prefix, hash: issued.hash } } },
    });
    return { created: true as const, tenantId, apiKey: issued.key };
  });
}

export async function issueKeyFor(
  db: PrismaClient,
  tenantId: string,
  pepper: string,
  label = 'default',
  expiresAt: Date | null = null,
): Promise<string> {
  const issued = issueApiKey(pepper);
  await db.apiKey.create({ data: { id: randomUUID(), tenantId, prefix: issued.prefix, hash: issued.hash, label, expiresAt } });
  return issued.key;
}

/** A tenant's API keys without their secrets: what an operator or the tenant may see. */
export interface KeyListing {
  id: string;
  prefix: string;
  label: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  state: 'active' | 'revoked' | 'expired';
}

export async function listKeys(db: PrismaClient, tenantId: string): Promise<KeyListing[]> {
  const rows = await db.apiKey.findMany({ where: { tenantId }, orderBy: { createdAt: 'asc' } });
  const now = Date.now();
  return rows.map((r) => ({
    id: r.id,
    prefix: r.prefix,
    label: r.label,
    created_at: r.createdAt.toISOString(),
    expires_at: r.expiresAt?.toISOString() ?? null,
    revoked_at: r.revokedAt?.toISOString() ?? null,
    state: r.revokedAt ? 'revoked' : r.expiresAt && r.expiresAt.getTime() <= now ? 'expired' : 'active',
  }));
}

/**
 * Revoke one API key, by its id or by the key itself. Every gateway replica drops it from its
 * credential cache at commit (the credential_notify trigger). Revoking twice is not an error.
 */
export async function revokeKey(
  db: PrismaClient,
  by: { id?: string; key?: string },
  pepper: string,
): Promise<{ id: string; tenantId: string }> {
  let row;
  if (by.id) row = await db.apiKey.findUnique({ where: { id: by.id } });
  else if (by.key) {
    const prefix = prefixOf(by.key);
    row = prefix ? await db.apiKey.findUnique({ where: { prefix } }) : null;
    if (row && !digestMatches(hashApiKey(by.key, pepper), row.hash)) row = null;
  }
  if (!row) throw new Error('no such API key');
  if (!row.revokedAt) await db.apiKey.update({ where: { id: row.id }, data: { revokedAt: new Date() } });
  return { id: row.id, tenantId: row.tenantId };
}

/**
 * Suspend (every key and cabinet token refused, 401, on every replica within seconds) or resume a
 * tenant. Its data, requests in flight and balance are left as they are.
 */
export async function setTenantStatus(db: PrismaClient, tenantId: string, status: 'active' | 'suspended'): Promise<void> {
  const r = await db.tenant.updateMany({ where: { id: tenantId }, data: { status } });
  if (r.count === 0) throw new Error('no such tenant');
}

/**
 * Set a tenant's limit overrides. `null` clears one override (back to the default); an omitted
 * field is left as it is.
 */
export async function setTenantLimits(
  db: PrismaClient,
  tenantId: string,
  change: {
    submissionsPerWindow?: number | null;
    windowSeconds?: number | null;
    maxConcurrentRequests?: number | null;
    readsPerWindow?: number | null;
    maxConcurrentReads?: number | null;
  },
): Promise<LimitOverrides> {
  const row = await db.tenantLimits.upsert({
    where: { tenantId },
    create: { tenantId, ...change },
    update: change,
  });
  return limitsOf(row);
}
