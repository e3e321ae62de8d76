import { randomBytes, randomUUID } from 'node:crypto';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { digestMatches, hashApiKey, keyMatches } from '../tenants/api-keys.js';
import type { CredentialCache } from './credential-cache.js';
import { limitsOf, type AuthenticatedTenant } from '../tenants/tenants.js';

/**
 * Cabinet (client API) bearer tokens: `wdrc_<prefix>_<secret>`. Like API keys, the prefix only
 * finds the row and the whole token is verified against a peppered HMAC-SHA256 in constant time;
 * the token itself is shown once by the admin command and never stored. Tokens expire
 * (`expires_at`) and can be revoked; a token of a suspended tenant is refused.
 */
const TOKEN_RE = /^wdrc_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
/** RFC 6750 `Authorization: Bearer <b64token>`; the scheme is case-insensitive. */
const BEARER_RE = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export interface IssuedCabinetToken {
  id: string;
  tenantId: string;
  token: string;
  expiresAt: Date | null;
}

export function cabinetTokenPrefixOf(token: string): string | undefined {
  return TOKEN_RE.exec(token)?.[1];
}

export function bearerTokenOf(authorization: string | undefined): string | undefined {
  return authorization ? BEARER_RE.exec(authorization)?.[1] : undefined;
}

const unauthenticated = () => new PublicError('UNAUTHENTICATED', 'A valid "Authorization: Bearer <token>" header is required.');

export async function authenticateCabinetToken(
  db: PrismaClient,
  authorization: string | undefined,
  pepper: string,
  cache: CredentialCache,
  now = new Date(),
): Promise<AuthenticatedTenant> {
  const token = bearerTokenOf(authorization);
  const prefix = token ? cabinetTokenPrefixOf(token) : undefined;
  if (!token || !prefix) throw unauthenticated();
  const digest = hashApiKey(token, pepper);
  const load = async () => {
    const row = await db.cabinetToken.findUnique({ where: { prefix }, include: { tenant: { include: { limits: true } } } });
    if (
      !row ||
      row.revokedAt ||
      (row.expiresAt && row.expiresAt <= now) ||
      row.tenant.status !== 'active' ||
      !digestMatches(digest, row.hash)
    ) {
      throw unauthenticated();
    }
    // Cached no longer than the token lives.
    return {
      tenant: { tenantId: row.tenantId, credential: 'cabinet_token' as const, limits: limitsOf(row.tenant.limits) },
      credentialExpiresAt: row.expiresAt,
    };
  };
  return cache.resolve(`cabinet_token:${digest}`, load);
}

export async function issueCabinetToken(
  db: PrismaClient,
  tenantId: string,
  pepper: string,
  opts: { label?: string; expiresInDays: number | null },
): Promise<IssuedCabinetToken> {
  const tenant = await db.tenant.findUnique({ where: { id: tenantId } });
  if (!tenant) throw new Error(`no tenant ${tenantId}`);
  const prefix = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12);
  const token = `wdrc_${prefix}_${randomBytes(32).toString('base64url')}`;
  const id = randomUUID();
  const expiresAt = opts.expiresInDays === null ? null : new Date(Date.now() + opts.expiresInDays * 86_400_000);
  await db.cabinetToken.create({
    data: { id, tenantId, prefix, hash: hashApiKey(token, pepper), label: opts.label ?? 'default', expiresAt },
  });
  return { id, tenantId, token, expiresAt };
}

/** Revoke by token id, or by presenting the token itself. Revoking twice is harmless. */
export async function revokeCabinetToken(
  db: PrismaClient,
  by: { id?: string; token?: string },
  pepper: string,
): Promise<{ id: string; tenantId: string }> {
  let row;
  if (by.id) {
    row = await db.cabinetToken.findUnique({ where: { id: by.id } });
  } else if (by.token) {
    const prefix = cabinetTokenPrefixOf(by.token);
    row = prefix ? await db.cabinetToken.findUnique({ where: { prefix } }) : null;
    if (row && !keyMatches(by.token, row.hash, pepper)) row = null;
  }
  if (!row) throw new Error('no such cabinet token');
  if (!row.revokedAt) await db.cabinetToken.update({ where: { id: row.id }, data: { revokedAt: new Date() } });
  return { id: row.id, tenantId: row.tenantId };
}
