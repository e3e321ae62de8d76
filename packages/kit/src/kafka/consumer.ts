import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin, Consumer, KafkaMessage } from 'kafkajs';
import { Gauge } from 'prom-client';
import { envelopeSchema, eventSpecOf, TOPICS, type CatalogEnvelope, type Envelope, type EventType, type TopicKey } from '@wdr/contracts';
import { transactionWithHooks, type RawSql, type TxCapable } from '../db.js';
import { isDependencyFailure } from '../dependency-failure.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { REQUEST_ID_HEADER, validRequestId, withRequestId } from '../request-context.js';
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

/** Handles the events of type E (any catalog type by default): their payload arrives parsed and typed. */
export type EventHandler<Tx extends RawSql = RawSql, E extends EventType = EventType> = (
  envelope: CatalogEnvelope<E>,
  ctx: HandlerContext<Tx>,
) => Promise<void>;

/**
 * A consumer's handlers by event type: the handler of a type receives that type's payload, and a
 * type the catalog does not know is a compile error.
 */
export type EventHandlers<Tx extends RawSql = RawSql> = { [E in EventType]?: EventHandler<Tx, E> };

/** The handler of an event type named by a message (a string from the wire: any type, or none). */
function handlerOf<Tx extends RawSql>(handlers: EventHandlers<Tx>, type: string): EventHandler<Tx> | undefined {
  return (handlers as Partial<Record<string, EventHandler<Tx>>>)[type];
}

export interface ConsumerHandle {
  /** Joined its group, not crashed, not waiting out a dependency failure, and fetched within the last minute. */
  ready: () => boolean;
  /** What liveness needs (see consumer-liveness.ts): progress and whether kafkajs gave up on the consumer. */
  liveness: () => ConsumerLiveness;
  stop: () => Promise<void>;
}

export interface ConsumerLiveness {
  /**
   * When the consumer last completed something with the broker (ms since the epoch): joined its
   * group, completed a fetch (an idle one included), sent a heartbeat (also during a long batch)
   * or finished a batch. Its start counts as the first.
   */
  progressAt: number;
  /**
   * kafkajs crashed the consumer and will not restart it (`restart: false`), with the error (names
   * along its cause chain, the innermost message) and whether it is about permissions (authentication or authorization: a restart does not fix
   * those, the configuration does). undefined while kafkajs runs it or restarts it by itself.
   */
  gaveUp?: { error: string; permissions: boolean };
}

/** Backoff while a dependency (database, broker, another service) is down: 0.5 s doubling to 15 s. */
const DEPENDENCY_BACKOFF = { firstMs: 500, maxMs: 15_000 };
/**
 * A fifth of the session timeout (6 s in production, 2 s in the tests' 10 s sessions): well inside
 * Kafka's advice of at most a third. kafkajs only heartbeats between batches, so a batch in progress
 * (a long handler) runs one timer at this period too.
 */
const heartbeatFor = (sessionTimeoutMs: number) => Math.max(1_000, Math.round(sessionTimeoutMs / 5));

/**
 * Idempotent consumer: each envelope id is processed once per consumer name, recorded in
 * `processed_messages` in the same transaction as the handler's writes; offsets are committed only
 * after those transactions committed.
 *
 * Messages come in batches (kafkajs `eachBatch`, one partition's fetched messages). An event type
 * this consumer has no handler for is skipped from its `event-type` header, without parsing or a
 * database round trip. Handlers that finished without a transaction of their own are recorded as
 * processed in one statement per commit, and the partition's offset is committed once per batch
 * (ordered consumers) or, for `inFlight` consumers, up to the processed prefix, coalesced into one
 * commit at a time.
 *
 * A failing message is retried with backoff up to the topic's `retry.maxAttempts` (the catalog's
 * policy, unless `maxAttempts` overrides it) and then parked on the topic's DLQ; an undecodable one
 * goes there at once. A failure of a dependency (see isDependencyFailure) is retried without bound
 * and never dead-letters anything: the partition waits, readiness turns false until it passes.
 */
export async function startConsumer<Tx extends RawSql = RawSql>(opts: {
  bus: KafkaBus;
  db: TxCapable<Tx>;
  log: Logger;
  metrics: ServiceMetrics;
  /** Consumer group id, and the name under which processed events are recorded. */
  group: string;
  topics: readonly TopicKey[];
  handlers: EventHandlers<Tx>;
  concurrency?: number;
  /**
   * Messages processed at once across the consumer's partitions, several per partition (default
   * 1: one at a time per partition, in order). Only for topics whose messages are independent.
   */
  inFlight?: number;
  /** Overrides every topic's `retry.maxAttempts` (tests; an operator's emergency setting). */
  maxAttempts?: number;
  /**
   * Record the events of handlers that took no transaction in `processed_messages` (default true:
   * a handler may check `ctx.alreadyProcessed()`). false when every such handler is idempotent by
   * itself or has no effect (webhook-dispatcher's fan-out): the insert per event is then waste.
   */
  recordUntransacted?: boolean;
  /**
   * Fetch in larger batches: the broker answers a fetch once `minBytes` are there or after
   * `maxWaitMs` (kafkajs defaults: 1 byte, i.e. at once). For consumers that can trade up to
   * `maxWaitMs` of latency for far fewer fetch round trips and offset commits under load.
   */
  fetch?: { minBytes: number; maxWaitMs: number };
  sessionTimeoutMs?: number;
  /** Called after each offset commit (e.g. to nudge the outbox relay). */
  afterCommit?: () => void;
}): Promise<ConsumerHandle> {
  const { bus, db, log } = opts;
  const consumed = opts.metrics.counter('kafka_messages_total', 'Kafka messages consumed, by topic and outcome.', ['topic', 'outcome']);
  const waiting = opts.metrics.gauge(
    'kafka_dependency_waits',
    'Messages waiting out a dependency failure (database, broker, another service).',
    ['group'],
  );
  const sessionTimeout = opts.sessionTimeoutMs ?? 30_000;
  const heartbeatEveryMs = heartbeatFor(sessionTimeout);
  const consumer: Consumer = bus.kafka.consumer({
    groupId: `${bus.prefix}${opts.group}`,
    sessionTimeout,
    heartbeatInterval: heartbeatEveryMs,
    allowAutoTopicCreation: false,
    ...(opts.fetch ? { minBytes: opts.fetch.minBytes, maxWaitTimeInMs: opts.fetch.maxWaitMs } : {}),
  });
  const health = trackHealth(consumer, log);
  const stopLag = exportLag(opts.metrics, bus, opts.group, opts.topics, log);
  let dependencyWaits = 0;

  const markProcessed = (tx: RawSql, id: string) =>
    tx.$executeRawUnsafe(
      'INSERT INTO processed_messages (consumer, event_id) VALUES ($1, $2::uuid) ON CONFLICT DO NOTHING',
      opts.group,
      id,
    );
  const markAllProcessed = (ids: string[]) =>
    db.$executeRawUnsafe(
      'INSERT INTO processed_messages (consumer, event_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING',
      opts.group,
      ids,
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

  /**
   * Decode and handle one message (with retries and the DLQ). Returns the envelope id to record as
   * processed when the handler did not record it in a transaction of its own.
   */
  const processMessage = (topic: TopicKey, partition: number, message: KafkaMessage): Promise<string | undefined> =>
    // The handler's log lines, internal calls and produced messages carry the producer's request id.
    withRequestId(validRequestId(message.headers?.[REQUEST_ID_HEADER]?.toString()), () => handleMessage(topic, partition, message));

  const handleMessage = async (topic: TopicKey, partition: number, message: KafkaMessage): Promise<string | undefined> => {
    const topicLabel = TOPICS[topic].name;
    const headerType = message.headers?.['event-type']?.toString();
    if (headerType !== undefined && !handlerOf(opts.handlers, headerType)) {
      consumed.inc({ topic: topicLabel, outcome: 'ignored' });
      return undefined;
    }
    const decoded = decode(topic, message);
    if (typeof decoded === 'string') {
      log.error({ topic: topicLabel, offset: message.offset, reason: decoded }, 'undecodable message sent to DLQ');
      await toDlq(topic, message, partition, decoded, 0);
      consumed.inc({ topic: topicLabel, outcome: 'dead_lettered' });
      return undefined;
    }
    const envelope = decoded;
    const handler = handlerOf(opts.handlers, envelope.type);
    if (!handler) {
      consumed.inc({ topic: topicLabel, outcome: 'ignored' });
      return undefined;
    }
    const maxAttempts = opts.maxAttempts ?? TOPICS[topic].retry.maxAttempts;
    const backoffMs = TOPICS[topic].retry.backoffMs;
    let waitingOnDependency = false;
    try {
      for (let attempt = 1, dependencyFailures = 0; ; attempt++) {
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
              return transactionWithHooks(
                db,
                async (tx) => {
                  if ((await markProcessed(tx, envelope.id)) === 0) return false;
                  await fn(tx);
                  return true;
                },
                { timeout: 20_000, maxWait: 10_000 },
              );
            },
          };
          await handler(envelope, ctx);
          consumed.inc({ topic: topicLabel, outcome: 'processed' });
          log.debug(
            { topic: topicLabel, partition, offset: message.offset, type: envelope.type, event_id: envelope.id },
            'message handled',
          );
          return ran || opts.recordUntransacted === false ? undefined : envelope.id;
        } catch (err) {
          if (err instanceof PoisonMessageError || (!isDependencyFailure(err) && attempt >= maxAttempts)) {
            log.error({ err, topic: topicLabel, offset: message.offset, attempt }, 'message dead-lettered');
            await toDlq(topic, message, partition, err instanceof Error ? err.message : String(err), attempt);
            consumed.inc({ topic: topicLabel, outcome: 'dead_lettered' });
            return undefined;
          }
          if (isDependencyFailure(err)) {
            // Not this message's fault: it does not use up its attempts, and it is never dead-lettered.
            attempt--;
            dependencyFailures++;
            if (!waitingOnDependency) {
              waitingOnDependency = true;
              dependencyWaits++;
              waiting.inc({ group: opts.group });
            }
            log.warn({ err, topic: topicLabel, offset: message.offset, dependencyFailures }, 'a dependency failed, retrying the message');
            await sleep(Math.min(DEPENDENCY_BACKOFF.firstMs * 2 ** Math.min(dependencyFailures - 1, 8), DEPENDENCY_BACKOFF.maxMs));
          } else {
            log.warn({ err, topic: topicLabel, offset: message.offset, attempt }, 'handler failed, retrying');
            await sleep(Math.min(backoffMs * 2 ** Math.min(attempt - 1, 6), 10_000));
          }
        }
      }
    } finally {
      if (waitingOnDependency) {
        dependencyWaits--;
        waiting.dec({ group: opts.group });
      }
    }
  };

  const slots = new Semaphore(Math.max(1, opts.inFlight ?? 1));
  const ordered = (opts.inFlight ?? 1) <= 1;
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: opts.concurrency ?? 1,
    // eslint-disable-next-line typescript/unbound-method -- kafkajs hands closures over (its types spell them as methods)
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      const topic = bus.keyOf(batch.topic);
      if (!topic) throw new Error(`message from a topic outside the catalog: ${batch.topic}`);
      // One heartbeat timer per batch keeps the membership through long handlers (a 5-minute fetch).
      const beat = setInterval(() => void heartbeat().catch(() => undefined), heartbeatEveryMs);
      beat.unref();
      const progress = new BatchProgress(
        batch.messages.map((m) => m.offset),
        async (offset, ids) => {
          // Handlers without a transaction are recorded before the offset that covers them moves.
          for (let failures = 1; ids.length > 0; failures++) {
            try {
              await markAllProcessed(ids);
              break;
            } catch (err) {
              if (!isDependencyFailure(err) || !isRunning()) throw err;
              await sleep(Math.min(DEPENDENCY_BACKOFF.firstMs * 2 ** Math.min(failures - 1, 8), DEPENDENCY_BACKOFF.maxMs));
            }
          }
          resolveOffset(offset);
          await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(offset) + 1n).toString() }]);
          opts.afterCommit?.();
        },
      );
      let failure: unknown;
      try {
        if (ordered) {
          for (const message of batch.messages) {
            if (!isRunning() || isStale()) break;
            progress.done(message.offset, await processMessage(topic, batch.partition, message));
          }
          await progress.commit();
        } else {
          // Up to `inFlight` messages at once across all partitions, several from one partition, so one
          // slow message (a slow target) does not hold back the ones behind it. Offsets move only up
          // to the longest fully processed prefix of the batch: after a crash everything past it is
          // redelivered, and the processed-event record makes that harmless. Order within a partition
          // is not kept, so only topics whose messages are independent use this.
          const running = new Set<Promise<void>>();
          for (const message of batch.messages) {
            if (!isRunning() || isStale() || failure !== undefined) break;
            await slots.acquire();
            const task = processMessage(topic, batch.partition, message)
              .then((id) => {
                progress.done(message.offset, id);
                return progress.commit();
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
          await progress.commit();
        }
      } finally {
        clearInterval(beat);
      }
      // A failure outside the handler's own retries (the DLQ unreachable): kafkajs fetches again
      // from the last committed offset.
      if (failure !== undefined) throw failure;
    },
  });

  return {
    ready: () => health.ready() && dependencyWaits === 0,
    liveness: health.liveness,
    stop: async () => {
      await consumer.disconnect();
      await stopLag();
    },
  };
}

/**
 * A consumer that sees every event of its topics from the moment it starts, once per process: each
 * instance has a group of its own, starts at the latest offset, records nothing and commits
 * nothing (nothing is resumed after a restart; `onJoin` tells the caller to catch up from its own
 * store). For fan-out to local listeners, such as the gateway's live event streams. `wants` skips a
 * message by key before it is parsed; a handler's failure is logged and the event passed over.
 */
export async function startBroadcastConsumer(opts: {
  bus: KafkaBus;
  log: Logger;
  metrics: ServiceMetrics;
  /** The group id of this instance (unique per process), without the deployment prefix. */
  group: string;
  topics: readonly TopicKey[];
  wants?: (key: string) => boolean;
  onEvent: (envelope: CatalogEnvelope, topic: TopicKey) => void | Promise<void>;
  /** Called on every (re)join: events published while the instance was not consuming were missed. */
  onJoin?: () => void;
  /** How long an idle fetch waits at the broker (kafkajs default 5 s; a stop waits for it). */
  maxWaitTimeInMs?: number;
}): Promise<ConsumerHandle> {
  const { bus, log } = opts;
  const consumed = opts.metrics.counter('kafka_messages_total', 'Kafka messages consumed, by topic and outcome.', ['topic', 'outcome']);
  const consumer = bus.kafka.consumer({
    groupId: `${bus.prefix}${opts.group}`,
    sessionTimeout: 30_000,
    heartbeatInterval: heartbeatFor(30_000),
    ...(opts.maxWaitTimeInMs !== undefined ? { maxWaitTimeInMs: opts.maxWaitTimeInMs } : {}),
    allowAutoTopicCreation: false,
  });
  const health = trackHealth(consumer, log);
  if (opts.onJoin) consumer.on(consumer.events.GROUP_JOIN, opts.onJoin);
  await consumer.connect();
  for (const t of opts.topics) await consumer.subscribe({ topic: bus.topic(t), fromBeginning: false });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      const topic = bus.keyOf(batch.topic);
      if (!topic) return;
      const topicLabel = TOPICS[topic].name;
      for (const message of batch.messages) {
        if (opts.wants && !opts.wants(message.key?.toString() ?? '')) continue;
        const decoded = decode(topic, message);
        if (typeof decoded === 'string') {
          consumed.inc({ topic: topicLabel, outcome: 'undecodable' });
          continue;
        }
        try {
          await withRequestId(validRequestId(message.headers?.[REQUEST_ID_HEADER]?.toString()), () => opts.onEvent(decoded, topic));
          consumed.inc({ topic: topicLabel, outcome: 'processed' });
        } catch (err) {
          log.warn({ err, topic: topicLabel, offset: message.offset }, 'broadcast handler failed; event passed over');
          consumed.inc({ topic: topicLabel, outcome: 'failed' });
        }
      }
    },
  });
  return {
    ready: health.ready,
    liveness: health.liveness,
    stop: () => consumer.disconnect(),
  };
}

type LagSource = () => Promise<{ group: string; topic: string; partition: string; lag: number }[]>;
const lagSources = new WeakMap<ServiceMetrics, Set<LagSource>>();

/**
 * `<prefix>_kafka_consumer_lag{group, topic, partition}`: the partition's high watermark minus the
 * group's committed offset, asked from the broker at scrape time (two admin requests per group,
 * 2 s at most; nothing when the broker does not answer). Asked from the broker rather than taken
 * from fetched batches, so a consumer stuck on a message still shows the backlog growing behind
 * it. Every replica reports the whole group: aggregate with max.
 */
function exportLag(metrics: ServiceMetrics, bus: KafkaBus, group: string, topics: readonly TopicKey[], log: Logger): () => Promise<void> {
  let sources = lagSources.get(metrics);
  if (!sources) {
    const all = new Set<LagSource>();
    sources = all;
    lagSources.set(metrics, all);
    const name = `${metrics.prefix}_kafka_consumer_lag`;
    metrics.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help: 'Messages behind the partition high watermark (committed offset of the group), by group, topic and partition; read from the broker at scrape time.',
      labelNames: ['group', 'topic', 'partition'] as const,
      registers: [metrics.registry],
      async collect() {
        const results = await Promise.all([...all].map((source) => source()));
        this.reset();
        for (const rows of results) for (const { lag, ...labels } of rows) this.set(labels, lag);
      },
    });
  }
  let admin: Admin | undefined;
  let connecting: Promise<void> | undefined;
  const source: LagSource = async () => {
    try {
      admin ??= bus.kafka.admin();
      await (connecting ??= admin.connect());
      const work = (async () => {
        const groupId = `${bus.prefix}${group}`;
        const committed = await admin!.fetchOffsets({ groupId, topics: topics.map((t) => bus.topic(t)) });
        const rows: Awaited<ReturnType<LagSource>> = [];
        for (const t of committed) {
          const key = bus.keyOf(t.topic);
          if (!key) continue;
          const ends = await admin!.fetchTopicOffsets(t.topic);
          for (const end of ends) {
            const done = t.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
            const from = BigInt(done) < 0n ? BigInt(end.low) : BigInt(done);
            rows.push({
              group,
              topic: TOPICS[key].name,
              partition: String(end.partition),
              lag: Math.max(0, Number(BigInt(end.high) - from)),
            });
          }
        }
        return rows;
      })();
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('lag query timed out')), 2_000).unref());
      return await Promise.race([work, timeout]);
    } catch (err) {
      log.debug({ err, group }, 'consumer lag for metrics unavailable');
      connecting = undefined;
      return [];
    }
  };
  sources.add(source);
  return async () => {
    sources.delete(source);
    await admin?.disconnect().catch(() => undefined);
  };
}

/** Joined, not crashed for good, and fetching (or busy with a batch) within the last minute; and what liveness reads. */
function trackHealth(consumer: Consumer, log: Logger): { ready: () => boolean; liveness: () => ConsumerLiveness } {
  let joined = false;
  let gaveUp: ConsumerLiveness['gaveUp'];
  let lastFetchAt = 0;
  let progressAt = Date.now();
  let batches = 0;
  const progressed = () => {
    progressAt = Date.now();
  };
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
    progressed();
  });
  consumer.on(consumer.events.FETCH_START, () => {
    lastFetchAt = Date.now();
  });
  consumer.on(consumer.events.FETCH, progressed);
  consumer.on(consumer.events.HEARTBEAT, progressed);
  consumer.on(consumer.events.START_BATCH_PROCESS, () => {
    batches++;
  });
  consumer.on(consumer.events.END_BATCH_PROCESS, () => {
    batches--;
    lastFetchAt = Date.now();
    progressed();
  });
  consumer.on(consumer.events.CRASH, (e) => {
    log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
    if (!e.payload.restart) gaveUp = { error: describeCrash(e.payload.error), permissions: isPermissionError(e.payload.error) };
  });
  return {
    ready: () => joined && gaveUp === undefined && (batches > 0 || Date.now() - lastFetchAt < 60_000),
    liveness: () => ({ progressAt, ...(gaveUp ? { gaveUp } : {}) }),
  };
}

/** The error's name and its causes' (kafkajs wraps: `KafkaJSNonRetriableError < TypeError`), then the innermost message. */
function describeCrash(err: Error): string {
  const names: string[] = [];
  let e: { name?: unknown; message?: unknown; cause?: unknown } | undefined = err;
  let message = '';
  for (let depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    names.push(String(e.name));
    message = String(e.message ?? '');
  }
  return `${names.join(' < ')}: ${message.slice(0, 200)}`;
}

/** SASL authentication failed, or the broker refused an operation (topic, group, cluster ACLs), anywhere along the cause chain. */
function isPermissionError(err: unknown): boolean {
  for (
    let e = err as { name?: unknown; type?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === 'KafkaJSSASLAuthenticationError') return true;
    if (typeof e.type === 'string' && /AUTHORIZATION_FAILED|AUTHENTICATION|SASL/.test(e.type)) return true;
  }
  return false;
}

/**
 * Which of a batch's messages are done, and committing the offset of the longest done prefix: at
 * most one commit at a time, each covering everything done by the time it starts (so many quick
 * messages share one commit), together with the ids to record as processed.
 */
class BatchProgress {
  private readonly done_ = new Set<string>();
  private prefix = 0;
  private unrecorded: string[] = [];
  private committed: string | undefined;
  private wanted: string | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly offsets: readonly string[],
    private readonly write: (offset: string, ids: string[]) => Promise<void>,
  ) {}

  done(offset: string, unrecordedId: string | undefined): void {
    this.done_.add(offset);
    if (unrecordedId !== undefined) this.unrecorded.push(unrecordedId);
    while (this.prefix < this.offsets.length && this.done_.has(this.offsets[this.prefix]!)) {
      this.wanted = this.offsets[this.prefix]!;
      this.prefix++;
    }
  }

  /** Commit what is done; resolves when a commit covering it (or a later one) went through. */
  commit(): Promise<void> {
    this.running ??= this.loop().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async loop(): Promise<void> {
    while (this.wanted !== undefined && this.wanted !== this.committed) {
      const offset = this.wanted;
      const ids = this.unrecorded;
      this.unrecorded = [];
      try {
        await this.write(offset, ids);
      } catch (err) {
        this.unrecorded.push(...ids);
        throw err;
      }
      this.committed = offset;
    }
  }
}

/**
 * Parse a message into its envelope and check its payload against the catalog's schema for its type
 * on this topic; the reason when it cannot be used. What passes is a CatalogEnvelope by construction.
 */
function decode(topic: TopicKey, message: KafkaMessage): CatalogEnvelope | string {
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
