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
} from '../../api/models-browser.js';
import { idOrNotFound, notFound, pageOf, type PageArgs } from './claims.js';
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

async function endpointInScope(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string): Promise<string> {
  const endpointId = idOrNotFound(webhookId, 'webhook');
  const e = await callInternal(deps.webhooks, webhooksApi.readEndpoint, { params: { endpointId }, query: { tenant_id: tenantId } });
  if (e.project_id !== scope.projectId || e.environment_id !== scope.environmentId) throw notFound('webhook');
  return endpointId;
}

/** The cabinet's routes name the scope in the path: the tenant's project and environment, or 404. */
export const cabinetScope = (deps: GatewayDeps, tenantId: string, projectId: string, environmentId: string): Promise<Scope> =>
  requireEnvironment(deps, tenantId, projectId, environmentId);

export async function createWebhook(deps: GatewayDeps, tenantId: string, scope: Scope, body: CreateWebhookBody): Promise<WebhookEndpointWithSecret> {
  return callInternal(deps.webhooks, webhooksApi.createEndpoint, {
    body: {
      tenant_id: tenantId,
      project_id: scope.projectId,
      environment_id: scope.environmentId,
      url: body.url,
      event_types: body.event_types,
      description: body.description ?? null,
    },
  }) as Promise<WebhookEndpointWithSecret>;
}

export async function readWebhook(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string): Promise<WebhookEndpoint> {
  const endpointId = idOrNotFound(webhookId, 'webhook');
  const e = await callInternal(deps.webhooks, webhooksApi.readEndpoint, { params: { endpointId }, query: { tenant_id: tenantId } });
  if (e.project_id !== scope.projectId || e.environment_id !== scope.environmentId) throw notFound('webhook');
  return e as WebhookEndpoint;
}

export async function updateWebhook(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string, body: UpdateWebhookBody): Promise<WebhookEndpoint> {
  const endpointId = await endpointInScope(deps, tenantId, scope, webhookId);
  return callInternal(deps.webhooks, webhooksApi.updateEndpoint, { params: { endpointId }, body: { tenant_id: tenantId, ...body } }) as Promise<WebhookEndpoint>;
}

export async function disableWebhook(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string): Promise<WebhookEndpoint> {
  const endpointId = await endpointInScope(deps, tenantId, scope, webhookId);
  return callInternal(deps.webhooks, webhooksApi.disableEndpoint, { params: { endpointId }, body: { tenant_id: tenantId } }) as Promise<WebhookEndpoint>;
}

export async function deleteWebhook(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string): Promise<void> {
  const endpointId = await endpointInScope(deps, tenantId, scope, webhookId);
  await callInternal(deps.webhooks, webhooksApi.deleteEndpoint, { params: { endpointId }, body: { tenant_id: tenantId } });
}

export async function rotateWebhookSecret(deps: GatewayDeps, tenantId: string, scope: Scope, webhookId: string, body: RotateWebhookSecretBody): Promise<WebhookEndpointWithSecret> {
  const endpointId = await endpointInScope(deps, tenantId, scope, webhookId);
  return callInternal(deps.webhooks, webhooksApi.rotateSecret, {
    params: { endpointId },
    body: { tenant_id: tenantId, previous_valid_seconds: body.previous_valid_seconds ?? 86_400 },
  }) as Promise<WebhookEndpointWithSecret>;
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
  const endpointId = await endpointInScope(deps, tenantId, scope, webhookId);
  const { take } = pageOf({ limit: args.limit });
  return callInternal(deps.webhooks, webhooksApi.listAttempts, {
    params: { endpointId },
    query: { tenant_id: tenantId, limit: take, ...(args.cursor ? { cursor: args.cursor } : {}) },
  }) as Promise<WebhookDeliveryPage>;
}
