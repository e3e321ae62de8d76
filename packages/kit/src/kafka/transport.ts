// From the wire: a message's bytes to a catalog-checked envelope (or the reason it is unusable), the heartbeat period, and subscribing.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, KafkaMessage } from 'kafkajs';
import type { Logger } from '../log.js';
import { envelopeSchema, eventSpecOf, type CatalogEnvelope, type Envelope, type TopicKey } from '@wdr/contracts';

/**
 * A fifth of the session timeout (6 s in production, 2 s in the tests' 10 s sessions): well inside
 * Kafka's advice of at most a third. kafkajs only heartbeats between batches, so a batch in progress
 * (a long handler) runs one timer at this period too.
 */
export const heartbeatFor = (sessionTimeoutMs: number) => Math.max(1_000, Math.round(sessionTimeoutMs / 5));

/**
 * Subscribe `consumer` to `topics`, riding out a broker whose metadata does not know a topic yet.
 * kafkajs's subscribe gives up at the first UNKNOWN_TOPIC_OR_PARTITION answer (it only retries
 * LEADER_NOT_AVAILABLE), and a broker can give that answer for a moment after the topic was created
 * (KRaft brokers learn new topics from the controller asynchronously; a topics Job may have just
 * run). Retriable answers are tried again for about `withinMs`; anything else, or a topic still
 * unknown after it, is thrown, with the consumer disconnected: a missing topic fails startup
 * instead of consuming nothing.
 */
export async function subscribeAll(
  consumer: Pick<Consumer, 'subscribe' | 'disconnect'>,
  topics: readonly string[],
  fromBeginning: boolean,
  log: Logger,
  withinMs = 30_000,
): Promise<void> {
  for (const topic of topics) {
    const deadline = Date.now() + withinMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await consumer.subscribe({ topic, fromBeginning });
        break;
      } catch (err) {
        const retriable = (err as { retriable?: boolean }).retriable === true;
        if (!retriable || Date.now() >= deadline) {
          await consumer.disconnect().catch(() => undefined);
          throw err;
        }
        log.warn({ err, topic, attempt }, 'subscribing: the broker does not know the topic yet; retrying');
        await sleep(Math.min(2_000, 100 * 2 ** attempt));
      }
    }
  }
}

/**
 * Parse a message into its envelope and check its payload against the catalog's schema for its type
 * on this topic; the reason when it cannot be used. What passes is a CatalogEnvelope by construction.
 */
export function decode(topic: TopicKey, message: KafkaMessage): CatalogEnvelope | string {
  let raw: unknown;
  try {
    raw = JSON.parse(message.value?.toString() ?? '');
  } catch {
    return 'value is not JSON';
  }
  const env = envelopeSchema.safeParse(raw);
  if (!env.success) return `bad envelope: ${env.error.issues.map((i) => i.path.join('.')).join(', ')}`;
  const spec = eventSpecOf(topic, env.data.type);
  if (!spec) return `event type ${env.data.type} is not in the catalog for this topic`;
  if (env.data.schema_version > spec.version) return `schema_version ${env.data.schema_version} is newer than this consumer knows`;
  const data = spec.schema.safeParse(env.data.data);
  if (!data.success) return `bad data: ${data.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`;
  // The type is in the catalog for this topic and the data parsed with that type's schema.
  return { ...env.data, data: data.data } as CatalogEnvelope;
}

export function safeEnvelope(message: KafkaMessage): Envelope {
  // The DLQ keeps the original bytes when they parse; otherwise a marker envelope.
  try {
    return JSON.parse(message.value?.toString() ?? '') as Envelope;
  } catch {
    return {
      id: '00000000-0000-0000-0000-000000000000',
      type: 'undecodable',
      schema_version: 1,
      tenant_id: '00000000-0000-0000-0000-000000000000',
      occurred_at: new Date().toISOString(),
      data: { raw: message.value?.toString('base64') ?? null },
    };
  }
}
