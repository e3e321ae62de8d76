import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, KafkaMessage } from 'kafkajs';
import { envelopeSchema, eventSpecOf, TOPICS, type Envelope, type TopicKey } from '@wdr/contracts';
import type { RawSql, TxCapable } from '../db.js';
import { PublicError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import type { KafkaBus } from './bus.js';

/** Thrown by a handler for a message that can never succeed: it goes to the DLQ at once. */
export class PoisonMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonMessageError';
  }
}

export interface HandlerContext<Tx extends RawSql = RawSql> {
  topic: TopicKey;
  /**
   * Run `fn` in one database transaction together with recording this event as processed.
   * Returns false (and does not run `fn`) when the event was already processed.
   */
  transaction: (fn: (tx: Tx) => Promise<void>) => Promise<boolean>;
  /** Cheap check before doing expensive I/O for a redelivered event. */
  alreadyProcessed: () => Promise<boolean>;
}

export type EventHandler<Tx extends RawSql = RawSql> = (envelope: Envelope, ctx: HandlerContext<Tx>) => Promise<void>;

export interface ConsumerHandle {
  /** Joined its group, not crashed, and fetched within the last minute. */
  ready: () => boolean;
  stop: () => Promise<void>;
}

/**
 * Idempotent consumer: each envelope id is processed once per consumer name, recorded in
 * `processed_messages` in the same transaction as the handler's writes; the offset is committed
 * only after that transaction committed. A failing message is retried with backoff up to the
 * topic's `retry.maxAttempts` and then parked on the topic's DLQ; an undecodable one goes there at
 * once. Dependency outages are retried without bound, never dead-lettered.
 */
export async function startConsumer<Tx extends RawSql = RawSql>(opts: {
  bus: KafkaBus;
  db: TxCapable<Tx>;
  log: Logger;
  metrics: ServiceMetrics;
  /** Consumer group id, and the name under which processed events are recorded. */
  group: string;
  topics: readonly TopicKey[];
  handlers: Partial<Record<string, EventHandler<Tx>>>;
  concurrency?: number;
  /**
   * Messages processed at once across the consumer's partitions, several per partition (default
   * 1: one at a time per partition, in order). Only for topics whose messages are independent.
   */
  inFlight?: number;
  maxAttempts?: number;
  sessionTimeoutMs?: number;
  /** Called after each committed message (e.g. to nudge the outbox relay). */
  afterCommit?: () => void;
}): Promise<ConsumerHandle> {
  const { bus, db, log } = opts;
  const consumed = opts.metrics.counter('kafka_messages_total', 'Kafka messages consumed, by topic and outcome.', ['topic', 'outcome']);
  const consumer: Consumer = bus.kafka.consumer({
    groupId: `${bus.prefix}${opts.group}`,
    sessionTimeout: opts.sessionTimeoutMs ?? 30_000,
    heartbeatInterval: 3_000,
    allowAutoTopicCreation: false,
  });

  let joined = false;
  let crashed = false;
  let lastFetchAt = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
  });
  consumer.on(consumer.events.FETCH_START, () => {
    lastFetchAt = Date.now();
  });
  consumer.on(consumer.events.CRASH, (e) => {
    log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
    if (!e.payload.restart) crashed = true;
  });

  const markProcessed = (tx: Tx, id: string) =>
    tx.$executeRawUnsafe(
      'INSERT INTO processed_messages (consumer, event_id) VALUES ($1, $2::uuid) ON CONFLICT DO NOTHING',
      opts.group,
      id,
    );

  const toDlq = async (topic: TopicKey, message: KafkaMessage, partition: number, reason: string, attempts: number) => {
    await bus.send(bus.dlq(topic), [
      {
        key: message.key?.toString() ?? '',
        envelope: safeEnvelope(message),
        headers: {
          'dlq-reason': reason.slice(0, 500),
          'dlq-source-topic': bus.topic(topic),
          'dlq-source-partition': String(partition),
          'dlq-source-offset': message.offset,
          'dlq-attempts': String(attempts),
          'dlq-consumer': opts.group,
        },
      },
    ]);
  };

  await consumer.connect();
  for (const t of opts.topics) await consumer.subscribe({ topic: bus.topic(t), fromBeginning: true });

  /** Decode, handle (with retries and the DLQ) and record one message; the caller commits its offset. */
  const processMessage = async (topicName: string, partition: number, message: KafkaMessage, heartbeat: () => Promise<void>): Promise<void> => {
    const topic = bus.keyOf(topicName);
    if (!topic) throw new Error(`message from a topic outside the catalog: ${topicName}`);

    const decoded = decode(topic, message);
    if (typeof decoded === 'string') {
      log.error({ topic: topicName, offset: message.offset, reason: decoded }, 'undecodable message sent to DLQ');
      await toDlq(topic, message, partition, decoded, 0);
      consumed.inc({ topic: TOPICS[topic].name, outcome: 'dead_lettered' });
      return;
    }
    const envelope = decoded;
    const handler = opts.handlers[envelope.type];
    const maxAttempts = opts.maxAttempts ?? TOPICS[topic].retry.maxAttempts;
    const backoffMs = TOPICS[topic].retry.backoffMs;

    // Keep the group membership alive while a long handler (a 5-minute fetch) runs.
    const beat = setInterval(() => void heartbeat().catch(() => undefined), 3_000);
    let outcome = 'processed';
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          let ran = false;
          const ctx: HandlerContext<Tx> = {
            topic,
            alreadyProcessed: async () => {
              const rows = await db.$queryRawUnsafe<unknown[]>(
                'SELECT 1 FROM processed_messages WHERE consumer = $1 AND event_id = $2::uuid',
                opts.group,
                envelope.id,
              );
              return rows.length > 0;
            },
            transaction: async (fn) => {
              ran = true;
              return db.$transaction(
                async (tx) => {
                  if ((await markProcessed(tx, envelope.id)) === 0) return false;
                  await fn(tx);
                  return true;
                },
                { timeout: 20_000, maxWait: 10_000 },
              );
            },
          };
          if (handler) await handler(envelope, ctx);
          else outcome = 'ignored';
          if (!ran) await db.$transaction(async (tx) => void (await markProcessed(tx, envelope.id)));
          break;
        } catch (err) {
          const transient = err instanceof PublicError && err.code === 'DEPENDENCY_UNAVAILABLE';
          const poison = err instanceof PoisonMessageError;
          if (poison || (!transient && attempt >= maxAttempts)) {
            log.error({ err, topic: topicName, offset: message.offset, attempt }, 'message dead-lettered');
            await toDlq(topic, message, partition, err instanceof Error ? err.message : String(err), attempt);
            outcome = 'dead_lettered';
            break;
          }
          log.warn({ err, topic: topicName, offset: message.offset, attempt }, 'handler failed, retrying');
          await sleep(Math.min(backoffMs * 2 ** Math.min(attempt - 1, 6), 10_000));
        }
      }
    } finally {
      clearInterval(beat);
    }
    consumed.inc({ topic: TOPICS[topic].name, outcome });
  };

  const commitAfter = async (topicName: string, partition: number, offset: string) => {
    await consumer.commitOffsets([{ topic: topicName, partition, offset: (BigInt(offset) + 1n).toString() }]);
    opts.afterCommit?.();
  };

  const inFlight = opts.inFlight ?? 1;
  if (inFlight <= 1) {
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: opts.concurrency ?? 1,
      eachMessage: async ({ topic: topicName, partition, message, heartbeat }) => {
        await processMessage(topicName, partition, message, heartbeat);
        await commitAfter(topicName, partition, message.offset);
      },
    });
  } else {
    // Up to `inFlight` messages at once across all partitions, several from one partition, so one
    // slow message (a slow target) does not hold back the ones behind it. Offsets are committed
    // only up to the longest prefix of the partition's messages that is fully processed: after a
    // crash everything past it is redelivered, and the processed-event record makes that harmless.
    // Order within a partition is not kept, so only topics whose messages are independent use this.
    const slots = new Semaphore(inFlight);
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: opts.concurrency ?? 1,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const done = new Set<string>();
        const running = new Set<Promise<void>>();
        let prefix = 0;
        // Commits go out one after another, each covering a longer prefix than the one before.
        let commits: Promise<void> = Promise.resolve();
        const advance = () => {
          let last: string | undefined;
          while (prefix < batch.messages.length && done.has(batch.messages[prefix]!.offset)) {
            last = batch.messages[prefix]!.offset;
            prefix++;
          }
          if (last === undefined) return commits;
          const offset = last;
          resolveOffset(offset);
          commits = commits.then(() => commitAfter(batch.topic, batch.partition, offset));
          return commits;
        };
        let failure: unknown;
        for (const message of batch.messages) {
          if (!isRunning() || isStale() || failure !== undefined) break;
          await slots.acquire();
          const task = processMessage(batch.topic, batch.partition, message, heartbeat)
            .then(async () => {
              done.add(message.offset);
              await advance();
            })
            .catch((err: unknown) => {
              failure ??= err;
            })
            .finally(() => {
              slots.release();
              running.delete(task);
            });
          running.add(task);
        }
        await Promise.all(running);
        await commits;
        // A failure outside the handler's own retries (DLQ unreachable): kafkajs re-fetches from
        // the last committed offset.
        if (failure !== undefined) throw failure;
      },
    });
  }

  return {
    ready: () => joined && !crashed && Date.now() - lastFetchAt < 60_000,
    stop: () => consumer.disconnect(),
  };
}

function decode(topic: TopicKey, message: KafkaMessage): Envelope | string {
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
  return { ...env.data, data: data.data };
}

function safeEnvelope(message: KafkaMessage): Envelope {
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

/** A counting semaphore: at most `n` holders at once. */
class Semaphore {
  private waiters: (() => void)[] = [];
  constructor(private free: number) {}

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free++;
  }
}
