import { z } from 'zod';

/**
 * Every Kafka message value in the fleet is one envelope. `id` is the event's identity: consumers
 * record it to process each event once, whatever the broker redelivers.
 */
export const envelopeSchema = z.object({
  id: z.uuid(),
  type: z.string().min(1),
  schema_version: z.number().int().min(1),
  tenant_id: z.uuid(),
  occurred_at: z.iso.datetime({ offset: true }),
  data: z.unknown(),
});

export type Envelope<T = unknown> = Omit<z.infer<typeof envelopeSchema>, 'data'> & { data: T };
