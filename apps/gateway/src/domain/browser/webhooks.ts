import { webhooksApi } from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type {
  CreateWebhookBody,
  RotateWebhookSecretBody,
  UpdateWebhookBody,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointWithSecret,
  WebhookMessage,
} from '../../models/browser.js';
import { requestIdFor } from '../requests/data-requests.js';
import { idempotentWrite, idempotentWriteWithSecret, idOrNotFound, notFound, pageOf, type PageArgs } from './claims.js';
import { requireEnvironment } from './workspaces.js';

/**
 * Webhook endpoints belong to webhook-dispatcher (docs/architecture.md "Webhooks"); the gateway
 * checks that the project and environment are the tenant's (or the key's own), then calls the
 * dispatcher's internal API with the tenant and that scope. An endpoint of another scope is a 404
 * here even when it is the tenant's.
 */
export interface Scope {
  projectId: string;
  environmentId: string;
}

/** The tenant's endpoint named in the path, if it belongs to the scope; any other is a 404. */
async function endpointInScope(
  deps: Pick<GatewayDeps, 'webhooks'>,
  tenantId: string,
  scope: Scope,
  webhookId: string,
): Promise<WebhookEndpoint> {
  const endpointId = idOrNotFound(webhookId, 'webhook');
  const e = await callInternal(deps.webhooks, webhooksApi.readEndpoint, { params: { endpointId }, query: { tenant_id: tenantId } });
  if (e.project_id !== scope.projectId || e.environment_id !== scope.environmentId) throw notFound('webhook');
  return e as WebhookEndpoint;
}

/** The cabinet's routes name the scope in the path: the tenant's project and environment, or 404. */
export const cabinetScope = (deps: Pick<GatewayDeps, 'db'>, tenantId: string, projectId: string, environmentId: string): Promise<Scope> =>
  requireEnvironment(deps, tenantId, projectId, environmentId);

/**
 * The management writes take an optional Idempotency-Key like the other cabinet writes: the claim
 * (gateway database) commits with the answer, so the same write again answers the stored answer
 * and another write under the key is IDEMPOTENCY_CONFLICT. The endpoint itself lives in
 * webhook-dispatcher, which commits its change before the gateway's claim does; so that a retry
 * after the dispatcher applied a write but the gateway did not commit (or its answer was lost) does
 * not apply it twice, every write is sent under an id derived from the key: a create under its
 * endpoint id (the retry finds the endpoint instead of making a second one), the others under an
 * `operation_id` the dispatcher remembers (the retry answers what the first call did: a deleted
 * endpoint's delete succeeds again, a rotation answers the secret it made instead of making
 * another). Without a key nothing is derived and every call is new. Secrets are never stored in a
 * claim: a create or rotation replayed from the gateway's claim answers the endpoint without
 * `secret` (rotate again for a new one); one replayed by the dispatcher (the gateway's claim never
 * committed, so the client never saw it) answers the secret.
 */
export async function createWebhook(
  deps: Pick<GatewayDeps, 'db' | 'webhooks'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  scope: Scope,
  body: CreateWebhookBody,
): Promise<WebhookEndpointWithSecret> {
  const { value: endpoint, secret } = await idempotentWriteWithSecret(
    deps,
    tenantId,
    idempotencyKey,
    'create_webhook',
    { scope, body },
    async () => {
      const created = await callInternal(deps.webhooks, webhooksApi.createEndpoint, {
        body: {
          tenant_id: tenantId,
          project_id: scope.projectId,
          environment_id: scope.environmentId,
          url: body.url,
          event_types: body.event_types,
          description: body.description ?? null,
          ...(idempotencyKey !== undefined ? { endpoint_id: requestIdFor(tenantId, `webhook:${idempotencyKey}`) } : {}),
        },
      });
      return { value: created.endpoint as WebhookEndpoint, secret: created.secret };
    },
  );
  return secret !== undefined ? { endpoint, secret } : { endpoint };
}

export const readWebhook = (
  deps: Pick<GatewayDeps, 'webhooks'>,
  tenantId: string,
  scope: Scope,
  webhookId: string,
): Promise<WebhookEndpoint> => endpointInScope(deps, tenantId, scope, webhookId);

/**
 * What every write sends besides its own fields: the tenant, the scope the endpoint must belong to
 * (the dispatcher answers NOT_FOUND for another, so no read comes first: after a deletion applied
 * by an earlier attempt there is nothing left to read), and the operation id derived from the key.
 */
function writeOf(tenantId: string, idempotencyKey: string | undefined, scope: Scope) {
  return {
    tenant_id: tenantId,
    in_scope: { project_id: scope.projectId, environment_id: scope.environmentId },
    ...(idempotencyKey !== undefined ? { operation_id: requestIdFor(tenantId, `webhook-operation:${idempotencyKey}`) } : {}),
  };
}

export async function updateWebhook(
  deps: Pick<GatewayDeps, 'db' | 'webhooks'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  scope: Scope,
  webhookId: string,
  body: UpdateWebhookBody,
): Promise<WebhookEndpoint> {
  return idempotentWrite(deps, tenantId, idempotencyKey, 'update_webhook', { scope, webhookId, body }, async () => {
    const endpointId = idOrNotFound(webhookId, 'webhook');
    return (await callInternal(deps.webhooks, webhooksApi.updateEndpoint, {
      params: { endpointId },
      body: { ...body, ...writeOf(tenantId, idempotencyKey, scope) },
    })) as WebhookEndpoint;
  });
}

export async function disableWebhook(
  deps: Pick<GatewayDeps, 'db' | 'webhooks'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  scope: Scope,
  webhookId: string,
): Promise<WebhookEndpoint> {
  return idempotentWrite(deps, tenantId, idempotencyKey, 'disable_webhook', { scope, webhookId }, async () => {
    const endpointId = idOrNotFound(webhookId, 'webhook');
    return (await callInternal(deps.webhooks, webhooksApi.disableEndpoint, {
      params: { endpointId },
      body: writeOf(tenantId, idempotencyKey, scope),
    })) as WebhookEndpoint;
  });
}

export async function deleteWebhook(
  deps: Pick<GatewayDeps, 'db' | 'webhooks'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  scope: Scope,
  webhookId: string,
): Promise<void> {
  await idempotentWrite(deps, tenantId, idempotencyKey, 'delete_webhook', { scope, webhookId }, async () => {
    const endpointId = idOrNotFound(webhookId, 'webhook');
    await callInternal(deps.webhooks, webhooksApi.deleteEndpoint, {
      params: { endpointId },
      body: writeOf(tenantId, idempotencyKey, scope),
    });
    return null;
  });
}

export async function rotateWebhookSecret(
  deps: Pick<GatewayDeps, 'db' | 'webhooks'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  scope: Scope,
  webhookId: string,
  body: RotateWebhookSecretBody,
): Promise<WebhookEndpointWithSecret> {
  const { value: endpoint, secret } = await idempotentWriteWithSecret(
    deps,
    tenantId,
    idempotencyKey,
    'rotate_webhook_secret',
    { scope, webhookId, body },
    async () => {
      const endpointId = idOrNotFound(webhookId, 'webhook');
      const rotated = await callInternal(deps.webhooks, webhooksApi.rotateSecret, {
        params: { endpointId },
        body: { ...writeOf(tenantId, idempotencyKey, scope), previous_valid_seconds: body.previous_valid_seconds ?? 86_400 },
      });
      return { value: rotated.endpoint as WebhookEndpoint, secret: rotated.secret };
    },
  );
  return secret !== undefined ? { endpoint, secret } : { endpoint };
}

/** The scope's endpoints, a cursor page (the dispatcher's cursor, passed through). */
export async function listWebhooks(
  deps: Pick<GatewayDeps, 'webhooks'>,
  tenantId: string,
  scope: Scope,
  args: PageArgs,
): Promise<WebhookEndpointPage> {
  const { take } = pageOf({ limit: args.limit });
  return callInternal(deps.webhooks, webhooksApi.listEndpoints, {
    query: {
      tenant_id: tenantId,
      project_id: scope.projectId,
      environment_id: scope.environmentId,
      limit: take,
      ...(args.cursor ? { cursor: args.cursor } : {}),
    },
  }) as Promise<WebhookEndpointPage>;
}

/** An endpoint's delivery attempts, newest first as the dispatcher lists them, redacted by it. */
export async function listDeliveries(
  deps: Pick<GatewayDeps, 'webhooks'>,
  tenantId: string,
  scope: Scope,
  webhookId: string,
  args: PageArgs,
): Promise<WebhookDeliveryPage> {
  const { id: endpointId } = await endpointInScope(deps, tenantId, scope, webhookId);
  const { take } = pageOf({ limit: args.limit });
  return callInternal(deps.webhooks, webhooksApi.listAttempts, {
    params: { endpointId },
    query: { tenant_id: tenantId, limit: take, ...(args.cursor ? { cursor: args.cursor } : {}) },
  }) as Promise<WebhookDeliveryPage>;
}

const WEBHOOK_ID_RE = /^msg_[0-9a-f]{32}$/;

/**
 * Manual redelivery of one message (by its `webhook-id`, as the deliveries list shows it): due now
 * whatever its status, its schedule started over, same webhook-id and body. One being delivered at
 * this moment is 409. Naturally idempotent: a repeat just makes it due again.
 */
export async function redeliverWebhookMessage(
  deps: Pick<GatewayDeps, 'webhooks'>,
  tenantId: string,
  scope: Scope,
  webhookId: string,
  messageId: string,
): Promise<WebhookMessage> {
  const { id: endpointId } = await endpointInScope(deps, tenantId, scope, webhookId);
  if (!WEBHOOK_ID_RE.test(messageId)) throw notFound('webhook message');
  return (await callInternal(deps.webhooks, webhooksApi.redeliver, {
    params: { endpointId, messageId },
    body: { tenant_id: tenantId },
  })) as WebhookMessage;
}
