import type { WebhookEventType } from '@wdr/contracts';
import type { RawSql } from '@wdr/kit/db';

/** One event as it becomes webhook messages: the body is built once and sent as is to every endpoint. */
export interface WebhookEvent {
  tenantId: string;
  /** The source event's id (the Kafka envelope id): one message per endpoint per source event. */
  eventId: string;
  type: WebhookEventType;
  occurredAt: string;
  data: Record<string, unknown>;
  /**
   * Where the event belongs: a project and environment (a workflow run's events), received by that
   * scope's endpoints and tenant-wide ones; `null`: nowhere in particular (requests that are not
   * workflow runs), received by tenant-wide endpoints only; `'tenant'`: a tenant-level fact
   * (balance) that every subscribed endpoint of the tenant receives.
   */
  scope: { projectId: string; environmentId: string } | null | 'tenant';
}

/** The payload, Standard Webhooks style: `{type, timestamp, data}`. */
export const bodyOf = (e: WebhookEvent) => JSON.stringify({ type: e.type, timestamp: e.occurredAt, data: e.data });

/**
 * Records one message per subscribed, enabled endpoint of the tenant, due now, in one statement
 * (alone, or in the caller's transaction). A repeated event adds nothing (unique endpoint + event),
 * so redelivery is harmless. The insert's trigger wakes the senders at commit.
 *
 * Which endpoints: the tenant's, enabled, whose `event_types` hold the type, and whose scope takes
 * the event: an endpoint without a project takes everything of the tenant; an endpoint of a project
 * (and optionally an environment) takes only events of that project (and environment).
 */
export async function recordMessages(tx: RawSql, e: WebhookEvent): Promise<number> {
  const scoped = e.scope !== null && e.scope !== 'tenant' ? e.scope : null;
  return tx.$executeRawUnsafe(
    `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
     SELECT gen_random_uuid(), ep.id, ep.tenant_id, $2::uuid, $3, $4, now()
     FROM webhook_endpoints ep
     WHERE ep.tenant_id = $1::uuid AND ep.status = 'enabled' AND $3 = ANY(ep.event_types)
       AND ($5::boolean OR ep.project_id IS NULL
            OR (ep.project_id = $6 AND (ep.environment_id IS NULL OR ep.environment_id = $7)))
     ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
    e.tenantId,
    e.eventId,
    e.type,
    bodyOf(e),
    e.scope === 'tenant',
    scoped?.projectId ?? null,
    scoped?.environmentId ?? null,
  );
}
