import { randomUUID } from 'node:crypto';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { issueApiKey, keyMatches, prefixOf } from './api-keys.js';

export interface AuthenticatedTenant {
  tenantId: string;
}

export async function authenticateApiKey(db: PrismaClient, key: string | undefined, pepper: string): Promise<AuthenticatedTenant> {
  const prefix = key ? prefixOf(key) : undefined;
  if (!key || !prefix) throw new PublicError('UNAUTHENTICATED', 'A valid X-API-Key header is required.');
  const row = await db.apiKey.findUnique({ where: { prefix }, include: { tenant: true } });
  if (!row || row.revokedAt || row.tenant.status !== 'active' || !keyMatches(key, row.hash, pepper)) {
    throw new PublicError('UNAUTHENTICATED', 'A valid X-API-Key header is required.');
  }
  return { tenantId: row.tenantId };
}

export async function createTenant(db: PrismaClient, name: string, pepper: string): Promise<{ tenantId: string; apiKey: string }> {
  const tenantId = randomUUID();
  const issued = issueApiKey(pepper);
  await db.tenant.create({
    data: { id: tenantId, name, apiKeys: { create: { id: randomUUID(), prefix: issued.prefix, hash: issued.hash } } },
  });
  return { tenantId, apiKey: issued.key };
}

export async function issueKeyFor(db: PrismaClient, tenantId: string, pepper: string, label = 'default'): Promise<string> {
  const issued = issueApiKey(pepper);
  await db.apiKey.create({ data: { id: randomUUID(), tenantId, prefix: issued.prefix, hash: issued.hash, label } });
  return issued.key;
}
