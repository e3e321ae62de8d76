import { createHmac, randomBytes } from 'node:crypto';
import { secretKeyOf } from '@wdr/kit/sealing';
import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../../deps.js';
import type { CreateProjectKeyBody, ProjectKey } from '../../models/browser.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { CredentialCache } from '../auth/credential-cache.js';
import { digestMatches } from '../tenants/api-keys.js';
import { limitsOf, type AuthenticatedTenant } from '../tenants/tenants.js';
import { idOrNotFound, idempotentWriteWithSecret, notFound, uuidv7 } from './claims.js';
import { requireEnvironment } from './workspaces.js';

/**
 * Keys of the browser-workflow API, each scoped to one project and one environment:
 * `wdrp_<prefix>_<secret>`. Like tenant keys, the prefix finds the row and the whole key is checked
 * against a peppered HMAC-SHA256 in constant time; the key is shown once and never stored. A tenant
 * key (`wdr_…`) is not one of these (401 on the browser-workflow API), and a project key is not a
 * tenant key (401 on the data API).
 */
const KEY_RE = /^wdrp_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export function projectKeyPrefixOf(key: string): string | undefined {
  return KEY_RE.exec(key)?.[1];
}

const hashOf = (key: string, pepper: string) => createHmac('sha256', secretKeyOf(pepper)).update(key).digest('hex');

const badKey = () => new PublicError('UNAUTHENTICATED', 'A valid project+environment key is required in X-API-Key.');

export async function authenticateProjectKey(
  db: PrismaClient,
  key: string | undefined,
  pepper: string,
  cache: CredentialCache,
): Promise<AuthenticatedTenant> {
  const prefix = key ? projectKeyPrefixOf(key) : undefined;
  if (!key || !prefix) throw badKey();
  const digest = hashOf(key, pepper);
  return cache.resolve(`project_key:${digest}`, async () => {
    const row = await db.projectApiKey.findUnique({ where: { prefix }, include: { project: { select: { workspaceId: true } } } });
    if (!row || row.revokedAt || !digestMatches(digest, row.hash)) throw badKey();
    const tenant = await db.tenant.findUnique({ where: { id: row.tenantId }, include: { limits: true } });
    if (!tenant || tenant.status !== 'active') throw badKey();
    return {
      tenant: {
        tenantId: row.tenantId,
        credential: 'project_key' as const,
        limits: limitsOf(tenant.limits),
        scope: { projectId: row.projectId, environmentId: row.environmentId },
      },
    };
  });
}

/**
 * The scope a browser-workflow path names must be the key's own: another project or environment is
 * a 404 (the caller learns nothing about it), never its data.
 */
export function requireKeyScope(
  tenant: AuthenticatedTenant,
  projectId: string,
  environmentId: string,
): { projectId: string; environmentId: string } {
  const scope = tenant.scope;
  if (!scope || scope.projectId !== projectId.toLowerCase() || scope.environmentId !== environmentId.toLowerCase())
    throw notFound('project or environment');
  return scope;
}

const keyView = (k: { id: string; projectId: string; environmentId: string; label: string; createdAt: Date }): ProjectKey => ({
  id: k.id,
  project_id: k.projectId,
  environment_id: k.environmentId,
  label: k.label,
  created_at: k.createdAt.toISOString(),
});

/** Beyond the spec: issue a key for a project and environment; the key is in this answer only (an idempotent replay omits it). */
export async function issueProjectKey(
  deps: Pick<GatewayDeps, 'db' | 'env'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  projectId: string,
  environmentId: string,
  body: CreateProjectKeyBody,
): Promise<ProjectKey> {
  const scope = await requireEnvironment(deps, tenantId, projectId, environmentId);
  const { value: view, secret: issued } = await idempotentWriteWithSecret(
    deps,
    tenantId,
    idempotencyKey,
    'issue_project_key',
    { scope, body },
    async (tx) => {
      const prefix = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12);
      const key = `wdrp_${prefix}_${randomBytes(32).toString('base64url')}`;
      const row = await tx.projectApiKey.create({
        data: { id: uuidv7(), tenantId, ...scope, prefix, hash: hashOf(key, deps.env.API_KEY_PEPPER), label: body.label ?? 'default' },
      });
      return { value: keyView(row), secret: key };
    },
  );
  return issued !== undefined ? { ...view, api_key: issued } : view;
}

/** Beyond the spec: revoke a project key (at once on every replica; revoking twice is harmless). */
export async function revokeProjectKey(
  deps: Pick<GatewayDeps, 'credentials' | 'db'>,
  tenantId: string,
  projectId: string,
  environmentId: string,
  keyId: string,
): Promise<void> {
  const scope = await requireEnvironment(deps, tenantId, projectId, environmentId);
  const id = idOrNotFound(keyId, 'key');
  const row = await deps.db.projectApiKey.findFirst({ where: { id, tenantId, ...scope } });
  if (!row) throw notFound('key');
  if (!row.revokedAt) await deps.db.projectApiKey.update({ where: { id }, data: { revokedAt: new Date() } });
  // This replica at once; the others when the database's notification reaches them (milliseconds).
  deps.credentials.invalidateTenant(tenantId);
}

export async function listProjectKeys(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  projectId: string,
  environmentId: string,
): Promise<{ items: ProjectKey[] }> {
  const scope = await requireEnvironment(deps, tenantId, projectId, environmentId);
  const rows = await deps.db.projectApiKey.findMany({ where: { tenantId, ...scope, revokedAt: null }, orderBy: { id: 'asc' } });
  return { items: rows.map(keyView) };
}
