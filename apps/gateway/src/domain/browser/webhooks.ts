import { webhooksApi } from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../app.js';
import type {
  CreateWebhookBody,
  RotateWebhookSecretBody,
  UpdateWebhookBody,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointWithSecret,
  WebhookMessage,
} from '../../api/models-browser.js';
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
async function endpointInScope(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string): Promise<WebhookEndpoint> {
  const endpointId = idOrNotFound(webhookId, 'webhook');
  const e = await callInternal(deps.webhooks, webhooksApi.readEndpoint, { params: { endpointId }, query: { tenant_id: tenantId } });
  if (e.project_id !== scope.projectId || e.environment_id !== scope.environmentId) throw notFound('webhook');
  return e as WebhookEndpoint;
}

/** The cabinet's routes name the scope in the path: the tenant's project and environment, or 404. */
export const cabinetScope = (deps: GatewayDeps, tenantId: string, projectId: string, environmentId: string): Promise<Scope> =>
  requireEnvironment(deps, tenantId, projectId, environmentId);

/**
 * The management writes take an optional Idempotency-Key like the other cabinet writes: the claim
 * (gateway database) commits with the answer, so the same write again answers the stored answer
 * and another write under the key is IDEMPOTENCY_CONFLICT. The endpoint itself lives in
 * webhook-dispatcher; a create is sent under an id derived from the key, so a retry after a lost
 * answer finds the endpoint instead of making a second one. Secrets are never stored in a claim: a
 * replayed create or rotation answers the endpoint without `secret` (rotate again for a new one).
 */
export async function createWebhook(deps: GatewayDeps, tenantId: string, idempotencyKey: string | undefined, scope: Scope, body: CreateWebhookBody): Promise<WebhookEndpointWithSecret> {
  const { value: endpoint, secret } = await idempotentWriteWithSecret(deps, tenantId, idempotencyKey, 'create_webhook', { scope, body }, async () => {
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
  });
  return secret !== undefined ? { endpoint, secret } : { endpoint };
}

export const readWebhook = (deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string): Promise<WebhookEndpoint> => endpointInScope(deps, tenantId, scope, webhookId);

export async function updateWebhook(deps: GatewayDeps, tenantId: string, idempotencyKey: string | undefined, scope: Scope, webhookId: string, body: UpdateWebhookBody): Promise<WebhookEndpoint> {
  return idempotentWrite(deps, tenantId, idempotencyKey, 'update_webhook', { scope, webhookId, body }, async () => {
    const { id: endpointId } = await endpointInScope(deps, tenantId, scope, webhookId);
    return (await callInternal(deps.webhooks, webhooksApi.updateEndpoint, { params: { endpointId }, body: { tenant_id: tenantId, ...body } })) as WebhookEndpoint;
  });
}

export async function disableWebhook(deps: GatewayDeps, tenantId: string, idempotencyKey: string | undefined, scope: Scope, webhookId: string): Promise<WebhookEndpoint> {
  return idempotentWrite(deps, tenantId, idempotencyKey, 'disable_webhook', { scope, webhookId }, async () => {
    const { id: endpointId } = await endpointInScope(deps, tenantId, scope, webhookId);
    return (await callInternal(deps.webhooks, webhooksApi.disableEndpoint, { params: { endpointId }, body: { tenant_id: tenantId } })) as WebhookEndpoint;
  });
}

export async function deleteWebhook(deps: GatewayDeps, tenantId: string, idempotencyKey: string | undefined, scope: Scope, webhookId: string): Promise<void> {
  await idempotentWrite(deps, tenantId, idempotencyKey, 'delete_webhook', { scope, webhookId }, async () => {
    const { id: endpointId } = await endpointInScope(deps, tenantId, scope, webhookId);
    await callInternal(deps.webhooks, webhooksApi.deleteEndpoint, { params: { endpointId }, body: { tenant_id: tenantId } });
    return null;
  });
}

export async function rotateWebhookSecret(
  deps: GatewayDeps,
  tenantId: string,
  idempotencyKey: string | undefined,
  scope: Scope,
  webhookId: string,
  body: RotateWebhookSecretBody,
): Promise<WebhookEndpointWithSecret> {
  const { value: endpoint, secret } = await idempotentWriteWithSecret(deps, tenantId, idempotencyKey, 'rotate_webhook_secret', { scope, webhookId, body }, async () => {
    const { id: endpointId } = await endpointInScope(deps, tenantId, scope, webhookId);
    const rotated = await callInternal(deps.webhooks, webhooksApi.rotateSecret, {
      params: { endpointId },
      body: { tenant_id: tenantId, previous_valid_seconds: body.previous_valid_seconds ?? 86_400 },
    });
    return { value: rotated.endpoint as WebhookEndpoint, secret: rotated.secret };
  });
  return secret !== undefined ? { endpoint, secret } : { endpoint };
}

/** The scope's endpoints, a cursor page (the dispatcher's cursor, passed through). */
export async function listWebhooks(deps: GatewayDeps, tenantId: string, scope: Scope, args: PageArgs): Promise<WebhookEndpointPage> {
  const { take } = pageOf({ limit: args.limit });
  return callInternal(deps.webhooks, webhooksApi.listEndpoints, {
    query: { tenant_id: tenantId, project_id: scope.projectId, environment_id: scope.environmentId, limit: take, ...(args.cursor ? { cursor: args.cursor } : {}) },
  }) as Promise<WebhookEndpointPage>;
}

/** An endpoint's delivery attempts, newest first as the dispatcher lists them, redacted by it. */
export async function listDeliveries(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string, args: PageArgs): Promise<WebhookDeliveryPage> {
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
export async function redeliverWebhookMessage(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string, messageId: string): Promise<WebhookMessage> {
  const { id: endpointId } = await endpointInScope(deps, tenantId, scope, webhookId);
  if (!WEBHOOK_ID_RE.test(messageId)) throw notFound('webhook message');
  return (await callInternal(deps.webhooks, webhooksApi.redeliver, { params: { endpointId, messageId }, body: { tenant_id: tenantId } })) as WebhookMessage;
}
