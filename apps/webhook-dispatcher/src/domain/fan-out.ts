import type { WebhookEventType } from '@wdr/contracts';
import type { RawSql } from '@wdr/kit/db';
import type { PgSql } from '@wdr/kit/pg-sql';
import { messageIdFor, queueMessages, readTargets, sparingDeletedEndpoints, type NewMessage, type Target } from './direct.js';
import { GroupedWrites } from './grouped-writes.js';

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
 * (alone, or in the caller's transaction: a disabled-endpoint notice, a balance alert; the
 * consumer's hot path groups events with FanOut below). A repeated event adds nothing (unique endpoint + event),
 * so redelivery is harmless. The insert's trigger wakes the senders at commit.
 *
 * Which endpoints: the tenant's, enabled, whose `event_types` hold the type, and whose scope takes
 * the event: an endpoint without a project takes everything of the tenant; an endpoint of a project
 * (and optionally an environment) takes only events of that project (and environment).
 */
export function recordMessages(tx: RawSql, e: WebhookEvent): Promise<number> {
  return tx.$executeRawUnsafe(FAN_OUT, ...eventColumns([e]).fanOut);
}

/** The fan-out statement, for any number of events (their columns: eventColumns). */
const FAN_OUT = `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, next_attempt_at)
     SELECT gen_random_uuid(), ep.id, ep.tenant_id, e.event_id, e.event_type, e.body, now()
     FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[])
       AS e(tenant_id, event_id, event_type, body, tenant_wide, project_id, environment_id)
     JOIN webhook_endpoints ep ON ep.tenant_id = e.tenant_id
     WHERE ep.status = 'enabled' AND e.event_type = ANY(ep.event_types)
       AND (e.tenant_wide OR ep.project_id IS NULL
            OR (ep.project_id = e.project_id AND (ep.environment_id IS NULL OR ep.environment_id = e.environment_id)))
     ON CONFLICT (endpoint_id, event_id) DO NOTHING`;

/** The events' columns: FAN_OUT's parameters in its order, and TARGETS's (the same, without the bodies). */
function eventColumns(group: WebhookEvent[]) {
  const scoped = group.map((e) => (e.scope !== null && e.scope !== 'tenant' ? e.scope : null));
  const tenantIds = group.map((e) => e.tenantId);
  const eventIds = group.map((e) => e.eventId);
  const types = group.map((e) => e.type);
  const bodies = group.map(bodyOf);
  const tenantWide = group.map((e) => e.scope === 'tenant');
  const projectIds = scoped.map((s) => s?.projectId ?? null);
  const environmentIds = scoped.map((s) => s?.environmentId ?? null);
  return {
    bodies,
    fanOut: [tenantIds, eventIds, types, bodies, tenantWide, projectIds, environmentIds],
    targets: [tenantIds, eventIds, types, tenantWide, projectIds, environmentIds],
  };
}

/** Where the consumer's fan-out hands the messages it may post directly (the sender, direct.ts). */
export interface DirectDeliveries {
  /** Whether a new message for this endpoint may be posted directly now. */
  takesDirect(endpointId: string): boolean;
  /** Posts the message when a slot is free; settles once it is stored (delivered, held or queued). */
  deliverDirect(m: NewMessage, target: Target): Promise<void>;
}

/**
 * The consumer's fan-out of many events at once: the events handled while a write is in flight are
 * handled together by the next (GroupedWrites), one statement for the group, on the delivery loop's
 * own connections (PgSql). One message per subscribed, enabled endpoint of each event's tenant
 * (recordMessages's rule), idempotent by (endpoint, event).
 *
 * Without `direct`, every message is inserted due (FAN_OUT) and the senders claim it. With it, the
 * group's endpoints are read (TARGETS), a message whose endpoint has nothing due in the queue is
 * handed to the sender to be posted and then stored once (direct.ts), the others are inserted due
 * (QUEUE_MESSAGES). Each handler's promise settles once its event's messages are stored one way or
 * the other, so the consumer's offset never moves past an event whose messages are not durable.
 */
export class FanOut {
  private readonly groups: GroupedWrites<WebhookEvent>;
  /** Each event's direct messages, stored: what its handler waits for after the group's write. */
  private readonly posted = new WeakMap<WebhookEvent, Promise<unknown>>();

  constructor(
    private readonly sql: PgSql,
    private readonly direct?: DirectDeliveries,
  ) {
    this.groups = new GroupedWrites((group) => this.write(group));
  }

  async record(e: WebhookEvent): Promise<void> {
    await this.groups.add(e);
    await this.posted.get(e);
  }

  private async write(group: WebhookEvent[]): Promise<void> {
    const direct = this.direct;
    const columns = eventColumns(group);
    if (!direct) {
      await sparingDeletedEndpoints(async () => this.sql.count(FAN_OUT, columns.fanOut));
      return;
    }
    const targets = await readTargets(this.sql, columns.targets);
    const { bodies } = columns;
    const queued: NewMessage[] = [];
    const posting = new Map<WebhookEvent, Promise<void>[]>();
    for (const t of targets) {
      const takes = !t.waiting && direct.takesDirect(t.endpoint_id);
      for (const i of t.events) {
        const e = group[i - 1]!;
        const m: NewMessage = {
          id: messageIdFor(e.eventId, t.endpoint_id),
          endpointId: t.endpoint_id,
          tenantId: e.tenantId,
          eventId: e.eventId,
          eventType: e.type,
          body: bodies[i - 1]!,
        };
        if (!takes) queued.push(m);
        else {
          const list = posting.get(e) ?? [];
          list.push(direct.deliverDirect(m, t));
          posting.set(e, list);
        }
      }
    }
    for (const [e, list] of posting) {
      const all = Promise.all(list);
      // Awaited by the event's handler, unless the queue's insert below fails first.
      all.catch(() => undefined);
      this.posted.set(e, all);
    }
    if (queued.length > 0) await queueMessages(this.sql, queued);
  }
}
