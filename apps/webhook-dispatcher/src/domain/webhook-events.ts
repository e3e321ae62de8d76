import { publicRequestEventOf, WEBHOOK_EVENT_TYPES, type CatalogEnvelope, type WebhookEventType } from '@wdr/contracts';
import type { WebhookEvent } from './fan-out.js';
import type { Subscribers } from './subscribers.js';

const SUBSCRIBABLE: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/** Tenant-level facts: every subscribed endpoint of the tenant takes them, project-scoped ones included. */
export type TenantFactType = 'batch.completed' | 'billing.balance_low' | 'billing.balance_exhausted';

/**
 * What a request's lifecycle event becomes for webhooks, or null when no endpoint takes it: a kind
 * that is not subscribable, or one no enabled endpoint of the tenant takes in the event's scope
 * (decided from memory, Subscribers: nothing is read from the database). The body is the public
 * form of the event (the history's allow-list). A workflow run's event carries its project and
 * environment: that scope's endpoints take it as well as tenant-wide ones; any other request's
 * events reach tenant-wide endpoints only.
 */
export function webhookEventOfRequestEvent(
  subscribers: Subscribers,
  envelope: CatalogEnvelope<'request.event_appended'>,
): WebhookEvent | null {
  const e = envelope.data;
  if (!SUBSCRIBABLE.has(e.kind)) return null;
  const scope = e.scope ? { projectId: e.scope.project_id, environmentId: e.scope.environment_id } : null;
  if (!subscribers.mayReceive(envelope.tenant_id, e.kind, scope)) return null;
  return {
    tenantId: envelope.tenant_id,
    eventId: envelope.id,
    type: e.kind as WebhookEventType,
    occurredAt: envelope.occurred_at,
    data: {
      request_id: e.request_id,
      ...(e.scope ? { project_id: e.scope.project_id, environment_id: e.scope.environment_id } : {}),
      event: publicRequestEventOf(e),
    },
    scope,
  };
}

/** What a tenant-level fact (a batch's end, a balance alert) becomes for webhooks, or null when no endpoint of the tenant takes it. */
export function webhookEventOfTenantFact<E extends TenantFactType>(
  subscribers: Subscribers,
  envelope: CatalogEnvelope<E>,
): WebhookEvent | null {
  if (!subscribers.mayReceive(envelope.tenant_id, envelope.type, 'tenant')) return null;
  return {
    tenantId: envelope.tenant_id,
    eventId: envelope.id,
    type: envelope.type,
    occurredAt: envelope.occurred_at,
    data: { ...envelope.data },
    scope: 'tenant',
  };
}
