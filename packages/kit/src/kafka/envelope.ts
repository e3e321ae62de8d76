import { randomUUID } from 'node:crypto';
import { eventSpecOf, type Envelope, type EventData, type EventTypeOf, type TopicKey } from '@wdr/contracts';

/** Build a catalog-checked envelope: the data is validated against the event's zod schema. */
export function makeEnvelope<K extends TopicKey, E extends EventTypeOf<K>>(
  topic: K,
  type: E,
  tenantId: string,
  data: EventData<K, E>,
  opts: { id?: string; occurredAt?: Date } = {},
): Envelope<EventData<K, E>> {
  const spec = eventSpecOf(topic, type);
  if (!spec) throw new Error(`event type ${type} is not in the catalog for ${topic}`);
  return {
    id: opts.id ?? randomUUID(),
    type,
    schema_version: spec.version,
    tenant_id: tenantId,
    occurred_at: (opts.occurredAt ?? new Date()).toISOString(),
    data: spec.schema.parse(data) as EventData<K, E>,
  };
}
