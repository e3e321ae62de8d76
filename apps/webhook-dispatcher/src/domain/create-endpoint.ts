import { randomUUID } from 'node:crypto';
import type { WebhookEndpointCreateBody, WebhookEndpointWithSecret } from '@wdr/contracts';
import { isUniqueViolation } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import { sealedSecretAad, sealedUrlAad, type DispatcherDeps } from '../deps.js';
import { checkedEndpointUrl } from './endpoint-url.js';
import { endpointView } from './endpoint-views.js';
import { generateSecret } from './signing.js';

type Deps = Pick<DispatcherDeps, 'db' | 'sealer' | 'policy' | 'lifecycle'> & {
  env: Pick<DispatcherDeps['env'], 'WEBHOOK_ENDPOINTS_PER_ENVIRONMENT'>;
};

/**
 * Creates an endpoint (URL checked against the target policy) with a fresh `whsec_` secret,
 * answered this once. Under a given `endpoint_id` a repeated create answers the existing endpoint
 * (the same tenant's) with its current secret: the retry of a create whose answer was lost.
 */
export async function createEndpoint(deps: Deps, cmd: WebhookEndpointCreateBody): Promise<WebhookEndpointWithSecret> {
  if (cmd.endpoint_id) {
    const existing = await existingEndpoint(deps, cmd.tenant_id, cmd.endpoint_id);
    if (existing) return existing;
  }
  const url = await checkedEndpointUrl(deps.policy, cmd.url);
  const id = cmd.endpoint_id ?? randomUUID();
  const secret = generateSecret();
  try {
    return await insert(deps, cmd, id, url, secret);
  } catch (err) {
    const raced = cmd.endpoint_id && isUniqueViolation(err) ? await existingEndpoint(deps, cmd.tenant_id, cmd.endpoint_id) : undefined;
    if (raced) return raced;
    throw err;
  }
}

async function existingEndpoint(deps: Deps, tenantId: string, id: string): Promise<WebhookEndpointWithSecret | undefined> {
  const row = await deps.db.webhookEndpoint.findUnique({ where: { id } });
  if (!row) return undefined;
  if (row.tenantId !== tenantId) throw new PublicError('IDEMPOTENCY_CONFLICT', 'This endpoint id is taken.');
  return { endpoint: endpointView(row), secret: deps.sealer.open(row.secretSealed, sealedSecretAad(id)) };
}

async function insert(
  deps: Deps,
  cmd: WebhookEndpointCreateBody,
  id: string,
  url: URL,
  secret: string,
): Promise<WebhookEndpointWithSecret> {
  const cap = deps.env.WEBHOOK_ENDPOINTS_PER_ENVIRONMENT;
  // Counted and created under a lock on the project environment: two creates cannot both take the
  // last place. The tenant is registered as a lifecycle listener first (lifecycle-registration.ts):
  // when that fails, no endpoint is created.
  const row = await deps.db.$transaction(
    async (tx) => {
      await deps.lifecycle.registerIn(tx, cmd.tenant_id);
      // An endpoint outside any project counts against its tenant's own scope.
      const scope = cmd.project_id
        ? { projectId: cmd.project_id, environmentId: cmd.environment_id ?? null }
        : { tenantId: cmd.tenant_id, projectId: null };
      await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${JSON.stringify(scope)}`}, 0))) AS l`;
      const count = await tx.webhookEndpoint.count({ where: scope });
      if (count >= cap) {
        throw new PublicError(
          'CONFLICT',
          `This project environment already has ${cap} webhook endpoints, the most it may have; delete one first.`,
        );
      }
      return tx.webhookEndpoint.create({
        data: {
          id,
          tenantId: cmd.tenant_id,
          projectId: cmd.project_id,
          environmentId: cmd.environment_id,
          urlSealed: deps.sealer.seal(url.toString(), sealedUrlAad(id)),
          urlOrigin: url.origin,
          eventTypes: [...new Set(cmd.event_types)],
          description: cmd.description,
          secretSealed: deps.sealer.seal(secret, sealedSecretAad(id)),
        },
      });
    },
    { timeout: 30_000, maxWait: 10_000 },
  );
  return { endpoint: endpointView(row), secret };
}
