import type { WebhookEndpointUpdateBody, WebhookEndpointView, WebhookEndpointWithSecret } from '@wdr/contracts';
import { sealedSecretAad, sealedUrlAad, type DispatcherDeps } from '../deps.js';
import type { Prisma } from '../generated/prisma/client.js';
import { disableEndpoint } from './disable-endpoint.js';
import { checkedEndpointUrl } from './endpoint-url.js';
import { endpointOf, endpointView } from './endpoint-views.js';
import { generateSecret } from './signing.js';

type Deps = Pick<DispatcherDeps, 'db' | 'sealer' | 'policy'>;

/** Changes URL (checked again), event types or description; `enabled: true` re-enables it (pending messages resume). */
export async function updateEndpoint(deps: Deps, endpointId: string, cmd: WebhookEndpointUpdateBody): Promise<WebhookEndpointView> {
  await endpointOf(deps.db, cmd.tenant_id, endpointId);
  const data: Prisma.WebhookEndpointUpdateInput = { updatedAt: new Date() };
  if (cmd.url !== undefined) {
    const url = await checkedEndpointUrl(deps.policy, cmd.url);
    data.urlSealed = deps.sealer.seal(url.toString(), sealedUrlAad(endpointId));
    data.urlOrigin = url.origin;
  }
  if (cmd.event_types !== undefined) data.eventTypes = [...new Set(cmd.event_types)];
  if (cmd.description !== undefined) data.description = cmd.description;
  if (cmd.enabled) Object.assign(data, { status: 'enabled', disabledReason: null, disabledAt: null });
  return endpointView(await deps.db.webhookEndpoint.update({ where: { id: endpointId }, data }));
}

export async function disableEndpointManually(deps: Deps, tenantId: string, endpointId: string): Promise<WebhookEndpointView> {
  await endpointOf(deps.db, tenantId, endpointId);
  await deps.db.$transaction((tx) => disableEndpoint(tx, endpointId, 'manual'));
  return endpointView(await endpointOf(deps.db, tenantId, endpointId));
}

/** Deletes the endpoint with its messages and attempts (nothing more is sent to it). */
export async function deleteEndpoint(deps: Deps, tenantId: string, endpointId: string): Promise<{ deleted: true }> {
  await endpointOf(deps.db, tenantId, endpointId);
  await deps.db.webhookEndpoint.delete({ where: { id: endpointId } });
  return { deleted: true };
}

/**
 * A new `whsec_` secret, answered this once. The previous one keeps signing beside it (a second
 * signature in `webhook-signature`) for `previousValidSeconds`, so receivers can switch without
 * dropping deliveries; 0 revokes it at once.
 */
export async function rotateSecret(deps: Deps, tenantId: string, endpointId: string, previousValidSeconds: number): Promise<WebhookEndpointWithSecret> {
  const current = await endpointOf(deps.db, tenantId, endpointId);
  const secret = generateSecret();
  const row = await deps.db.webhookEndpoint.update({
    where: { id: endpointId },
    data: {
      secretSealed: deps.sealer.seal(secret, sealedSecretAad(endpointId)),
      previousSecretSealed: previousValidSeconds > 0 ? current.secretSealed : null,
      previousSecretExpiresAt: previousValidSeconds > 0 ? new Date(Date.now() + previousValidSeconds * 1000) : null,
      updatedAt: new Date(),
    },
  });
  return { endpoint: endpointView(row), secret };
}
