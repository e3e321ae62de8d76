import type {
  EndpointWriteBody,
  RotateSecretBody,
  WebhookEndpointUpdateBody,
  WebhookEndpointView,
  WebhookEndpointWithSecret,
} from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { sealedSecretAad, sealedUrlAad, type DispatcherDeps } from '../deps.js';
import type { Prisma, WebhookEndpoint } from '../generated/prisma/client.js';
import { disableEndpoint } from './disable-endpoint.js';
import { checkedEndpointUrl } from './endpoint-url.js';
import { endpointOf, endpointView } from './endpoint-views.js';
import { applyOnce, type EndpointOperationKind } from './operations.js';
import { generateSecret } from './signing.js';

type Deps = Pick<DispatcherDeps, 'db' | 'sealer' | 'policy' | 'lifecycle'>;
type Tx = Prisma.TransactionClient;

/**
 * The writes below run once per `operation_id` (operations.ts: a repeat answers the first answer)
 * and only on an endpoint of `in_scope` when it is given (any other is NOT_FOUND, like a missing one).
 */
const operationOf = (kind: EndpointOperationKind, endpointId: string, body: EndpointWriteBody) => {
  const { operation_id, ...input } = body;
  return { id: operation_id, tenantId: body.tenant_id, endpointId, kind, input };
};

async function endpointInScope(tx: Tx, endpointId: string, body: EndpointWriteBody): Promise<WebhookEndpoint> {
  const e = await endpointOf(tx, body.tenant_id, endpointId);
  const scope = body.in_scope;
  if (scope && (e.projectId !== scope.project_id || e.environmentId !== scope.environment_id)) {
    throw new PublicError('NOT_FOUND', 'No such webhook endpoint.');
  }
  return e;
}

/** Changes URL (checked again), event types or description; `enabled: true` re-enables it (pending messages resume). */
export async function updateEndpoint(deps: Deps, endpointId: string, cmd: WebhookEndpointUpdateBody): Promise<WebhookEndpointView> {
  const checkUrl = async () => (cmd.url !== undefined ? checkedEndpointUrl(deps.policy, cmd.url) : undefined);
  const { value } = await applyOnce(
    deps,
    operationOf('update', endpointId, cmd),
    async (tx, url) => {
      await endpointInScope(tx, endpointId, cmd);
      const data: Prisma.WebhookEndpointUpdateInput = { updatedAt: new Date() };
      if (url !== undefined) {
        data.urlSealed = deps.sealer.seal(url.toString(), sealedUrlAad(endpointId));
        data.urlOrigin = url.origin;
      }
      if (cmd.event_types !== undefined) data.eventTypes = [...new Set(cmd.event_types)];
      if (cmd.description !== undefined) data.description = cmd.description;
      if (cmd.enabled) Object.assign(data, { status: 'enabled', disabledReason: null, disabledAt: null });
      return { value: endpointView(await tx.webhookEndpoint.update({ where: { id: endpointId }, data })) };
    },
    checkUrl,
  );
  return value;
}

export async function disableEndpointManually(deps: Deps, endpointId: string, body: EndpointWriteBody): Promise<WebhookEndpointView> {
  const { value } = await applyOnce(deps, operationOf('disable', endpointId, body), async (tx) => {
    await endpointInScope(tx, endpointId, body);
    await disableEndpoint(tx, endpointId, 'manual');
    return { value: endpointView(await endpointOf(tx, body.tenant_id, endpointId)) };
  });
  return value;
}

/**
 * Deletes the endpoint with its messages and attempts (nothing more is sent to it). Under an
 * operation id already applied it answers `{deleted: true}` again, though the endpoint is gone.
 */
export async function deleteEndpoint(deps: Deps, endpointId: string, body: EndpointWriteBody): Promise<{ deleted: true }> {
  const { value } = await applyOnce(deps, operationOf('delete', endpointId, body), async (tx) => {
    await endpointInScope(tx, endpointId, body);
    await tx.webhookEndpoint.delete({ where: { id: endpointId } });
    return { value: { deleted: true as const } };
  });
  await deps.lifecycle.releaseIfUnused(body.tenant_id);
  return value;
}

/**
 * A new `whsec_` secret, answered this once. The previous one keeps signing beside it (a second
 * signature in `webhook-signature`) for `previous_valid_seconds`, so receivers can switch without
 * dropping deliveries; 0 revokes it at once. Under an operation id already applied it answers the
 * same secret and endpoint again and rotates nothing: the caller may never have received that
 * answer (the gateway's own transaction failed after this one committed), and a second rotation
 * would leave the undelivered secret as the "previous" one.
 */
export async function rotateSecret(deps: Deps, endpointId: string, body: RotateSecretBody): Promise<WebhookEndpointWithSecret> {
  const { value, secret } = await applyOnce(deps, operationOf('rotate_secret', endpointId, body), async (tx) => {
    const current = await endpointInScope(tx, endpointId, body);
    const fresh = generateSecret();
    const keep = body.previous_valid_seconds > 0;
    const row = await tx.webhookEndpoint.update({
      where: { id: endpointId },
      data: {
        secretSealed: deps.sealer.seal(fresh, sealedSecretAad(endpointId)),
        previousSecretSealed: keep ? current.secretSealed : null,
        previousSecretExpiresAt: keep ? new Date(Date.now() + body.previous_valid_seconds * 1000) : null,
        updatedAt: new Date(),
      },
    });
    return { value: endpointView(row), secret: fresh };
  });
  return { endpoint: value, secret: secret! };
}
