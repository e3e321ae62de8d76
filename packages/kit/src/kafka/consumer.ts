// The Kafka consumers: the idempotent, retrying consumer of a service's topics (startConsumer) and the
// per-process broadcast consumer (startBroadcastConsumer). Their parts, by concern: handlers.ts (the
// handler API), transport.ts (message -> checked envelope, heartbeat period), retry-policy.ts,
// dead-letter.ts, progress.ts (offset commits of a batch or of a partition's flow, the in-flight
// limit), health.ts (readiness, liveness) and lag.ts (the lag metric).
import { setTimeout as sleep } from 'node:timers/promises';
import { isPgStatement, type PgSql } from '../pg-sql.js';
import type { Consumer, KafkaMessage } from 'kafkajs';
import { TOPICS, type CatalogEnvelope, type TopicKey } from '@wdr/contracts';
import { transactionWithHooks, type RawSql, type TxCapable } from '../db.js';
import { isDependencyFailure } from '../dependency-failure.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { REQUEST_ID_HEADER, validRequestId, withRequestId } from '../request-context.js';
import type { KafkaBus } from './bus.js';
import { deadLetterer } from './dead-letter.js';
import {
  batchHandlerOf,
  handlerOf,
  SKIPPED,
  type BatchContext,
  type EventBatchHandlers,
  type EventHandlers,
  type HandlerContext,
} from './handlers.js';
import { trackHealth, type ConsumerHandle } from './health.js';
import { exportLag } from './lag.js';
import { Semaphore } from '../semaphore.js';
import { OffsetProgress } from './progress.js';
import { dependencyBackoffMs, failureVerdict, maxAttemptsOf, retryBackoffMs } from './retry-policy.js';
import { setFetchWaits } from './kafkajs-idle-fix.js';
import { decode, heartbeatFor, subscribeAll } from './transport.js';

export {
  PoisonMessageError,
  SKIPPED,
  type BatchContext,
  type BatchHandler,
  type EventBatchHandlers,
  type EventHandler,
  type EventHandlers,
  type HandlerContext,
  type HandlerOutcome,
} from './handlers.js';
export type { ConsumerHandle, ConsumerLiveness } from './health.js';

/** A message that had no effect here (no handler, or its handler answered SKIPPED). */
const NO_EFFECT = Symbol('no effect');

/** A topic's partition, as the consumer's maps key it (deferred commits, flows, messages under way). */
const partitionKey = (topic: string, partition: number) => `${topic}:${partition}`;

/** What decoding a message gave: its checked envelope, or why it is unusable. */
type Decoded = ReturnType<typeof decode>;

/**
 * Fetches in larger batches: the broker answers a fetch once `minBytes` are there or after
 * `maxWaitMs` (kafkajs defaults: 1 byte, i.e. at once). For consumers that can trade up to
 * `maxWaitMs` of latency for far fewer fetch round trips and offset commits under load.
 * `flowingWaitMs`: after a fetch that filled (messages are flowing), the next waits at most this
 * long, so the last messages of a flow wait that long, not `maxWaitMs` (kafkajs-idle-fix.ts).
 */
export interface BatchedFetch {
  minBytes: number;
  maxWaitMs: number;
  flowingWaitMs?: number;
}

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
 * Ordered consumers may also take `batchHandlers`: a run of consecutive messages of a type that has
 * one (up to `maxBatch`) is handled in one call and one transaction, recorded as processed in one
 * statement; if that batch fails (other than on a dependency), it is rolled back and its messages
 * go through the single handler one by one, so a bad message never takes the others with it.
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
  /**
   * Handlers of whole runs of one event type (ordered consumers only: ignored with `inFlight` > 1).
   * A type with a batch handler keeps its single handler: the fallback when a batch fails.
   */
  batchHandlers?: EventBatchHandlers<Tx>;
  /** Most messages handed to one batch handler call (default 200). */
  maxBatch?: number;
  /**
   * Tenants whose messages have no effect here (webhook-dispatcher: tenants without endpoints): a
   * message whose `tenant-id` header names one is skipped unread, like a type without a handler
   * (a skip-only batch commits lazily). Must answer true only when nothing of the tenant's would
   * have an effect; a message without the header is read as before.
   */
  skipTenant?: (tenantId: string) => boolean;
  /**
   * Plain node-postgres for `ctx.alreadyProcessed` and `ctx.writes` (kit/pg-sql.ts): `writes` of
   * PgSql statements run with the processed record in a PgSql transaction instead of Prisma's
   * array form. Absent: both go through `db`.
   */
  sql?: PgSql;
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
  /** Fetch in larger batches (BatchedFetch). */
  fetch?: BatchedFetch;
  /**
   * Commit the offsets of batches whose every message had no effect (no handler, or the handler
   * answered SKIPPED, nothing to record) at most this often, instead of once per batch: a busy
   * topic whose events mostly concern nobody here then costs a commit every few seconds, not one
   * per fetch. Any batch with an effect commits at once as before (covering the skipped ones
   * behind it). After a crash the skipped events since the last commit are read again and skipped
   * again: at-least-once is kept, nothing is lost. Default off (every batch commits).
   */
  lazySkipCommitMs?: number;
  sessionTimeoutMs?: number;
  /**
   * How long a fetch waits at the broker while the topics are quiet (kafkajs default 5 s; for a
   * consumer with `fetch`, the wait after a fetch that brought nothing: kafkajs-idle-fix.ts). A
   * stop waits for the fetch in flight, so this also bounds how long a stop takes.
   */
  fetchWaitMs?: number;
  /** Called after each offset commit (e.g. to nudge the outbox relay). */
  afterCommit?: () => void;
}): Promise<ConsumerHandle> {
  const { bus, db, log } = opts;
  const consumed = opts.metrics.shared.counter('kafka_messages_total', 'Kafka messages consumed, by topic and outcome.', [
    'topic',
    'outcome',
  ]);
  const waiting = opts.metrics.shared.gauge(
    'kafka_dependency_waits',
    'Messages waiting out a dependency failure (database, broker, another service).',
    ['group'],
  );
  const sessionTimeout = opts.sessionTimeoutMs ?? 30_000;
  const heartbeatEveryMs = heartbeatFor(sessionTimeout);
  const groupId = `${bus.prefix}${opts.group}`;
  const consumer: Consumer = bus.kafka.consumer({
    groupId,
    sessionTimeout,
    heartbeatInterval: heartbeatEveryMs,
    allowAutoTopicCreation: false,
    ...(opts.fetch
      ? { minBytes: opts.fetch.minBytes, maxWaitTimeInMs: opts.fetch.maxWaitMs }
      : opts.fetchWaitMs !== undefined
        ? { maxWaitTimeInMs: opts.fetchWaitMs }
        : {}),
  });
  // A batched consumer's waits after an empty fetch and after one that filled are kept by the idle fix (kafkajs-idle-fix.ts).
  if (opts.fetch)
    setFetchWaits(groupId, {
      ...(opts.fetchWaitMs !== undefined ? { idleMs: opts.fetchWaitMs } : {}),
      ...(opts.fetch.flowingWaitMs !== undefined ? { flowingMs: opts.fetch.flowingWaitMs } : {}),
    });
  const batches = opts.metrics.shared.counter(
    'kafka_batches_total',
    'Runs of messages given to a batch handler, by topic and outcome (committed in one transaction, or fell_back: handled one by one).',
    ['topic', 'outcome'],
  );
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

  const toDlq = deadLetterer(bus, opts.group);

  await consumer.connect();
  await subscribeAll(
    consumer,
    opts.topics.map((t) => bus.topic(t)),
    true,
    log,
  ).catch(async (err: unknown) => {
    await stopLag().catch(() => undefined);
    throw err;
  });

  /**
   * Decode and handle one message (with retries and the DLQ). Returns the envelope id to record as
   * processed when the handler did not record it in a transaction of its own. `decoded`: what
   * decoding this message gave already (the batch path decodes to gather runs), else it is decoded here.
   */
  const processMessage = (
    topic: TopicKey,
    partition: number,
    message: KafkaMessage,
    decoded?: Decoded,
  ): Promise<string | undefined | typeof NO_EFFECT> =>
    // The handler's log lines, internal calls and produced messages carry the producer's request id.
    withRequestId(validRequestId(message.headers?.[REQUEST_ID_HEADER]?.toString()), () =>
      handleMessage(topic, partition, message, decoded),
    );

  const handleMessage = async (
    topic: TopicKey,
    partition: number,
    message: KafkaMessage,
    alreadyDecoded: Decoded | undefined,
  ): Promise<string | undefined | typeof NO_EFFECT> => {
    const topicLabel = TOPICS[topic].name;
    const headerType = message.headers?.['event-type']?.toString();
    if (headerType !== undefined && !handlerOf(opts.handlers, headerType)) {
      consumed.inc({ topic: topicLabel, outcome: 'ignored' });
      return NO_EFFECT;
    }
    const headerTenant = opts.skipTenant ? message.headers?.['tenant-id']?.toString() : undefined;
    if (headerTenant !== undefined && opts.skipTenant!(headerTenant)) {
      consumed.inc({ topic: topicLabel, outcome: 'skipped' });
      return NO_EFFECT;
    }
    const decoded = alreadyDecoded ?? decode(topic, message);
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
      return NO_EFFECT;
    }
    const maxAttempts = maxAttemptsOf(topic, opts.maxAttempts);
    const backoffMs = TOPICS[topic].retry.backoffMs;
    let waitingOnDependency = false;
    try {
      for (let attempt = 1, dependencyFailures = 0; ; attempt++) {
        try {
          let ran = false;
          const ctx: HandlerContext<Tx> = {
            topic,
            alreadyProcessed: async () => {
              const rows = await (opts.sql ?? db).$queryRawUnsafe<unknown[]>(
                'SELECT 1 FROM processed_messages WHERE consumer = $1 AND event_id = $2::uuid',
                opts.group,
                envelope.id,
              );
              return rows.length > 0;
            },
            writes: async (statements) => {
              ran = true;
              // The record goes first and without ON CONFLICT: an event processed before (or by another
              // member right now) fails it, rolling back the whole batch of statements.
              const record = 'INSERT INTO processed_messages (consumer, event_id) VALUES ($1, $2::uuid)';
              const { sql } = opts;
              // One transaction on one client: PgSql statements only with the consumer's sql, and never mixed with Prisma's.
              const onSql = statements.filter(isPgStatement);
              if (onSql.length > 0 && (!sql || onSql.length < statements.length))
                throw new Error('ctx.writes: PgSql statements need the consumer given `sql`, and cannot be mixed with Prisma statements');
              const batch =
                sql && onSql.length === statements.length
                  ? sql.transaction([sql.count(record, [opts.group, envelope.id]), ...onSql])
                  : (db as unknown as { $transaction: (s: PromiseLike<unknown>[]) => Promise<unknown[]> }).$transaction([
                      db.$executeRawUnsafe(record, opts.group, envelope.id),
                      ...statements,
                    ]);
              try {
                return (await batch).slice(1);
              } catch (err) {
                if (await ctx.alreadyProcessed()) return undefined;
                throw err;
              }
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
          const outcome = await handler(envelope, ctx);
          if (outcome === SKIPPED && !ran) {
            consumed.inc({ topic: topicLabel, outcome: 'skipped' });
            return NO_EFFECT;
          }
          consumed.inc({ topic: topicLabel, outcome: 'processed' });
          log.debug(
            { topic: topicLabel, partition, offset: message.offset, type: envelope.type, event_id: envelope.id },
            'message handled',
          );
          return ran || opts.recordUntransacted === false ? undefined : envelope.id;
        } catch (err) {
          const verdict = failureVerdict(err, attempt, maxAttempts);
          if (verdict === 'dead-letter') {
            log.error({ err, topic: topicLabel, offset: message.offset, attempt }, 'message dead-lettered');
            await toDlq(topic, message, partition, err instanceof Error ? err.message : String(err), attempt);
            consumed.inc({ topic: topicLabel, outcome: 'dead_lettered' });
            return undefined;
          }
          if (verdict === 'wait-dependency') {
            // Not this message's fault: it does not use up its attempts, and it is never dead-lettered.
            attempt--;
            dependencyFailures++;
            if (!waitingOnDependency) {
              waitingOnDependency = true;
              dependencyWaits++;
              waiting.inc({ group: opts.group });
            }
            log.warn({ err, topic: topicLabel, offset: message.offset, dependencyFailures }, 'a dependency failed, retrying the message');
            await sleep(dependencyBackoffMs(dependencyFailures));
          } else {
            log.warn({ err, topic: topicLabel, offset: message.offset, attempt }, 'handler failed, retrying');
            await sleep(retryBackoffMs(backoffMs, attempt));
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

  /**
   * `envelope`: the envelope of a message a batch handler takes (its type has one, and a single
   * handler to fall back on); without it the message goes the single way (which also dead-letters
   * what does not decode). `decoded`: what decoding it gave, when it was decoded to tell, for the
   * single way to use rather than decode it again (handlers treat envelopes as read-only).
   */
  const batchable = (topic: TopicKey, message: KafkaMessage): { envelope?: CatalogEnvelope; decoded?: Decoded } => {
    if (!opts.batchHandlers) return {};
    const headerType = message.headers?.['event-type']?.toString();
    if (headerType !== undefined && !batchHandlerOf(opts.batchHandlers, headerType)) return {};
    const decoded = decode(topic, message);
    if (typeof decoded === 'string') return { decoded };
    const takes = batchHandlerOf(opts.batchHandlers, decoded.type) && handlerOf(opts.handlers, decoded.type);
    return takes ? { envelope: decoded, decoded } : { decoded };
  };

  /**
   * Handle a run of envelopes of one type with its batch handler, in one transaction. A dependency
   * failure is waited out and the batch tried again; any other failure answers false (nothing of
   * the batch committed) for the caller to handle its messages one by one.
   */
  const processRun = async (
    topic: TopicKey,
    partition: number,
    messages: { message: KafkaMessage; envelope: CatalogEnvelope }[],
    isRunning: () => boolean,
  ): Promise<boolean> => {
    const topicLabel = TOPICS[topic].name;
    const run = messages.map((m) => m.envelope);
    const requestIds = new Map(messages.map((m) => [m.envelope, validRequestId(m.message.headers?.[REQUEST_ID_HEADER]?.toString())]));
    const handler = batchHandlerOf(opts.batchHandlers, run[0]!.type)!;
    const ids = [...new Set(run.map((e) => e.id.toLowerCase()))];
    /** The batch in one transaction of `on`, its envelopes recorded as processed first. */
    const batchOn = <T extends RawSql>(on: TxCapable<T>, fn: (tx: T, fresh: CatalogEnvelope[]) => Promise<void>) =>
      transactionWithHooks(
        on,
        async (tx) => {
          const rows = await tx.$queryRawUnsafe<{ event_id: string }[]>(
            'INSERT INTO processed_messages (consumer, event_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING RETURNING event_id::text',
            opts.group,
            ids,
          );
          const unseen = new Set(rows.map((r) => r.event_id));
          const fresh = run.filter((e) => unseen.delete(e.id.toLowerCase()));
          if (fresh.length > 0) await fn(tx, fresh);
          return fresh;
        },
        { timeout: 20_000, maxWait: 10_000 },
      );
    const { sql } = opts;
    const ctx: BatchContext<Tx> = {
      topic,
      transaction: (fn) => batchOn(db, fn),
      ...(sql ? { transactionOnSql: (fn: (tx: RawSql, fresh: CatalogEnvelope[]) => Promise<void>) => batchOn(sql, fn) } : {}),
      requestIdOf: (envelope) => requestIds.get(envelope),
    };
    let waitingOnDependency = false;
    try {
      for (let dependencyFailures = 1; ; dependencyFailures++) {
        try {
          // A batch is no one request's work: its log lines and messages carry no request id of their own.
          await withRequestId(undefined, () => handler(run, ctx));
          consumed.inc({ topic: topicLabel, outcome: 'processed' }, run.length);
          batches.inc({ topic: topicLabel, outcome: 'committed' });
          // Each message's line, under its own request id, as the single path logs it.
          if (log.isLevelEnabled('debug')) {
            for (const { message, envelope } of messages) {
              withRequestId(requestIds.get(envelope), () =>
                log.debug(
                  { topic: topicLabel, partition, offset: message.offset, type: envelope.type, event_id: envelope.id, batch: run.length },
                  'message handled',
                ),
              );
            }
          }
          return true;
        } catch (err) {
          if (!isDependencyFailure(err)) {
            log.warn({ err, topic: topicLabel, messages: run.length }, 'batch failed; handling its messages one by one');
            batches.inc({ topic: topicLabel, outcome: 'fell_back' });
            return false;
          }
          if (!isRunning()) throw err;
          if (!waitingOnDependency) {
            waitingOnDependency = true;
            dependencyWaits++;
            waiting.inc({ group: opts.group });
          }
          log.warn({ err, topic: topicLabel, messages: run.length, dependencyFailures }, 'a dependency failed, retrying the batch');
          await sleep(dependencyBackoffMs(dependencyFailures));
        }
      }
    } finally {
      if (waitingOnDependency) {
        dependencyWaits--;
        waiting.dec({ group: opts.group });
      }
    }
  };
  const maxBatch = Math.max(1, opts.maxBatch ?? 200);

  /**
   * Offsets of skip-only batches waiting for their lazy commit, by topic and partition; a batch with
   * an effect commits at once and drops its partition's entry (its offset is further on). A flush
   * that lands after such a commit could only move the committed offset back to where messages
   * were already handled: they would be read again, never lost.
   */
  const deferred = new Map<string, { topic: string; partition: number; offset: string }>();
  let deferTimer: NodeJS.Timeout | undefined;
  const flushDeferred = async () => {
    if (deferTimer) clearTimeout(deferTimer);
    deferTimer = undefined;
    if (deferred.size === 0) return;
    const offsets = [...deferred.values()];
    deferred.clear();
    try {
      await consumer.commitOffsets(offsets);
      opts.afterCommit?.();
    } catch (err) {
      // A rebalance in between (the partition moved): its new owner reads the skipped events again.
      log.debug({ err, group: opts.group }, 'lazy offset commit of skipped events failed');
    }
  };
  const defer = (topic: string, partition: number, offset: string) => {
    deferred.set(partitionKey(topic, partition), { topic, partition, offset });
    if (!deferTimer) {
      deferTimer = setTimeout(() => void flushDeferred(), opts.lazySkipCommitMs);
      deferTimer.unref();
    }
  };

  /**
   * Records `ids` as processed (retrying a dependency failure while `retrying()`), then commits
   * `next` for the partition (`recorded`: called in between).
   */
  const recordAndCommit = async (
    topic: string,
    partition: number,
    next: string,
    ids: string[],
    retrying: () => boolean,
    recorded?: () => void,
  ) => {
    deferred.delete(partitionKey(topic, partition));
    // Handlers without a transaction are recorded before the offset that covers them moves.
    for (let failures = 1; ids.length > 0; failures++) {
      try {
        await markAllProcessed(ids);
        break;
      } catch (err) {
        if (!isDependencyFailure(err) || !retrying()) throw err;
        await sleep(dependencyBackoffMs(failures));
      }
    }
    recorded?.();
    await consumer.commitOffsets([{ topic, partition, offset: next }]);
    opts.afterCommit?.();
  };

  const slots = new Semaphore(Math.max(1, opts.inFlight ?? 1));
  const ordered = (opts.inFlight ?? 1) <= 1;

  /**
   * `inFlight` consumers leave a batch once its messages are under way, not done: kafkajs fetches
   * a broker's partitions together and fetches again only when every batch of the last fetch is
   * handled, so a batch that waited for its messages would keep free slots idle behind its slowest
   * one (a slow target, a long render) while newer messages sat in the broker. A partition's flow
   * follows its messages across batches: each moves the fetch position as it is dispatched
   * (resolveOffset, in memory: nothing is committed by it), and the offset committed is still
   * that of the longest processed prefix. A (re)join starts every flow again from the committed
   * offsets; a message fetched again while this process still handles it joins that run rather
   * than being handled twice at once.
   */
  interface Flow {
    progress: OffsetProgress;
    /** The last offset dispatched (messages at or before it are under way or done). */
    last: bigint;
    /** Whether any message since the last commit had an effect (only skip-only stretches commit lazily). */
    effect: boolean;
    /** A message failed: nothing more is dispatched in this flow (see handlingFailed). */
    halted: boolean;
  }
  const flows = new Map<string, Flow>();
  const handling = new Map<string, Promise<string | undefined | typeof NO_EFFECT>>();
  const tasks = new Set<Promise<void>>();
  let stopping = false;
  const retryLater = (ms: number, fn: () => void) => setTimeout(fn, ms).unref();
  if (!ordered) consumer.on(consumer.events.GROUP_JOIN, () => flows.clear());
  const flowOf = (topic: string, partition: number): Flow => {
    const key = partitionKey(topic, partition);
    let flow = flows.get(key);
    if (flow) return flow;
    const created: Flow = {
      last: -1n,
      effect: false,
      halted: false,
      progress: new OffsetProgress(async (offset, ids) => {
        const next = (BigInt(offset) + 1n).toString();
        if (opts.lazySkipCommitMs !== undefined && !created.effect && ids.length === 0) return defer(topic, partition, next);
        created.effect = false;
        await recordAndCommit(topic, partition, next, ids, () => !stopping);
      }),
    };
    flows.set(key, created);
    return created;
  };
  /** A commit that failed (a rebalance, the broker away): tried again while the flow is current; a later message's commit covers it too. */
  const commitFlow = (flow: Flow, topic: string, partition: number): Promise<void> =>
    flow.progress.commit().catch((err: unknown) => {
      log.warn({ err, group: opts.group, topic, partition }, 'offset commit failed; trying again');
      retryLater(1_000, () => {
        if (!stopping && flows.get(partitionKey(topic, partition)) === flow) void commitFlow(flow, topic, partition);
      });
    });
  /**
   * Handling failed outside the handler's own retries (the DLQ unreachable): the message is not
   * done, so its flow never commits past it. The partition stops (its flow halted, fetching
   * paused), then after a pause is read again from that message (a seek moves the fetch position
   * only) in a new flow; messages after it still under way join their runs there, and those done
   * are found processed.
   */
  const handlingFailed = (flow: Flow, topic: string, partition: number, offset: string, err: unknown) => {
    log.error({ err, group: opts.group, topic, partition, offset }, 'handling a message failed; reading its partition again from it');
    const key = partitionKey(topic, partition);
    if (flows.get(key) !== flow || flow.halted) return;
    flow.halted = true;
    const partitions = [{ topic, partitions: [partition] }];
    consumer.pause(partitions);
    retryLater(1_000, () => {
      if (flows.get(key) === flow) flows.delete(key);
      if (stopping) return;
      try {
        consumer.seek({ topic, partition, offset });
      } catch (seekErr) {
        log.warn({ err: seekErr, topic, partition }, 'seek after a failed message failed; the partition resumes from its committed offset');
      }
      consumer.resume(partitions);
    });
  };
  const dispatch = (topic: TopicKey, topicName: string, partition: number, flow: Flow, message: KafkaMessage) => {
    const id = `${partitionKey(topicName, partition)}:${message.offset}`;
    let run = handling.get(id);
    if (!run) {
      run = processMessage(topic, partition, message).finally(() => handling.delete(id));
      handling.set(id, run);
    }
    const task: Promise<void> = run
      .then(
        (result) => {
          if (result !== NO_EFFECT) flow.effect = true;
          flow.progress.done(message.offset, result === NO_EFFECT ? undefined : result);
          return commitFlow(flow, topicName, partition);
        },
        (err: unknown) => handlingFailed(flow, topicName, partition, message.offset, err),
      )
      .finally(() => {
        slots.release();
        tasks.delete(task);
      });
    tasks.add(task);
  };

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
      try {
        if (ordered) {
          // Whether any message of the batch had an effect (only skip-only batches commit lazily).
          let effect = false;
          const progress = new OffsetProgress(
            async (offset, ids) => {
              const next = (BigInt(offset) + 1n).toString();
              if (opts.lazySkipCommitMs !== undefined && !effect && ids.length === 0) {
                resolveOffset(offset);
                return defer(batch.topic, batch.partition, next);
              }
              await recordAndCommit(batch.topic, batch.partition, next, ids, isRunning, () => resolveOffset(offset));
            },
            batch.messages.map((m) => m.offset),
          );
          const record = (offset: string, result: string | undefined | typeof NO_EFFECT) => {
            if (result !== NO_EFFECT) effect = true;
            progress.done(offset, result === NO_EFFECT ? undefined : result);
          };
          // Consecutive messages of a type with a batch handler gather into a run, handled at once.
          let run: { message: KafkaMessage; envelope: CatalogEnvelope }[] = [];
          const flush = async () => {
            const messages = run;
            run = [];
            if (messages.length === 0) return;
            if (await processRun(topic, batch.partition, messages, isRunning)) {
              effect = true;
              for (const m of messages) progress.done(m.message.offset, undefined);
              return;
            }
            for (const m of messages) {
              if (!isRunning() || isStale()) return;
              record(m.message.offset, await processMessage(topic, batch.partition, m.message, m.envelope));
            }
          };
          let stopped = false;
          for (const message of batch.messages) {
            if (!isRunning() || isStale()) {
              stopped = true;
              break;
            }
            const { envelope, decoded } = batchable(topic, message);
            if (envelope && (run.length === 0 || run[0]!.envelope.type === envelope.type) && run.length < maxBatch) {
              run.push({ message, envelope });
              continue;
            }
            await flush();
            if (envelope) run.push({ message, envelope });
            else record(message.offset, await processMessage(topic, batch.partition, message, decoded));
          }
          // A rebalance or a stop leaves a gathered run to the partition's next owner.
          if (!stopped) await flush();
          await progress.commit();
        } else {
          // Up to `inFlight` messages at once across all partitions, several from one partition, so one
          // slow message (a slow target) does not hold back the ones behind it, nor the next fetch
          // (see Flow). Order within a partition is not kept, so only topics whose messages are
          // independent use this.
          const flow = flowOf(batch.topic, batch.partition);
          const live = () =>
            isRunning() && !isStale() && !stopping && !flow.halted && flows.get(partitionKey(batch.topic, batch.partition)) === flow;
          for (const message of batch.messages) {
            if (!live()) break;
            const offset = BigInt(message.offset);
            if (offset <= flow.last) continue;
            await slots.acquire();
            if (!live()) {
              slots.release();
              break;
            }
            flow.last = offset;
            flow.progress.add(message.offset);
            // The next fetch starts after it; what is committed stays the processed prefix.
            resolveOffset(message.offset);
            dispatch(topic, batch.topic, batch.partition, flow, message);
          }
        }
      } finally {
        clearInterval(beat);
      }
      // A failure of an ordered batch outside the handler's own retries (the DLQ unreachable) is
      // thrown: kafkajs restarts the consumer, which fetches again from the last committed offset.
    },
  });

  return {
    ready: () => health.ready() && dependencyWaits === 0,
    liveness: health.liveness,
    stop: async () => {
      // No message is dispatched any more; those under way finish and commit (their batches are
      // left already: disconnect would not wait for them).
      stopping = true;
      while (tasks.size > 0) await Promise.allSettled([...tasks]);
      // Skipped events not yet committed: committed now (one a batch still handles is read again after the restart).
      await flushDeferred();
      await consumer.disconnect();
      if (opts.fetch) setFetchWaits(groupId, undefined);
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
  /** How long an idle fetch waits at the broker (kafkajs default 5 s; a stop waits for it), as startConsumer's. */
  fetchWaitMs?: number;
}): Promise<ConsumerHandle> {
  const { bus, log } = opts;
  const consumed = opts.metrics.shared.counter('kafka_messages_total', 'Kafka messages consumed, by topic and outcome.', [
    'topic',
    'outcome',
  ]);
  const consumer = bus.kafka.consumer({
    groupId: `${bus.prefix}${opts.group}`,
    sessionTimeout: 30_000,
    heartbeatInterval: heartbeatFor(30_000),
    ...(opts.fetchWaitMs !== undefined ? { maxWaitTimeInMs: opts.fetchWaitMs } : {}),
    allowAutoTopicCreation: false,
  });
  const health = trackHealth(consumer, log);
  if (opts.onJoin) consumer.on(consumer.events.GROUP_JOIN, opts.onJoin);
  await consumer.connect();
  await subscribeAll(
    consumer,
    opts.topics.map((t) => bus.topic(t)),
    false,
    log,
  );
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
