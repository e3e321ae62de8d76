import type { Router } from 'express';
import { topicsConsumedBy, topicsProducedBy, type ServiceName, type TopicKey } from '@wdr/contracts';
import { databaseReachable, prismaClientOptions, type PrismaClientOptions, type RawSql, type TxCapable } from '../db.js';
import { createLogger, type Logger } from '../log.js';
import { createMetrics, type ServiceMetrics } from '../metrics.js';
import { createHttpShell, type ReadinessCheck, type ServiceLifecycle } from '../service.js';
import { KafkaBus } from './bus.js';
import { PROCESSED_PURGE_EVERY_MS, purgeProcessed } from './processed-retention.js';
import { startConsumer, type ConsumerHandle, type EventHandler } from './consumer.js';
import { OutboxRelay } from './outbox.js';

export interface ConsumerSpec<Tx extends RawSql> {
  /** Consumer group (and processed-event namespace). */
  group: string;
  topics: readonly TopicKey[];
  handlers: Partial<Record<string, EventHandler<Tx>>>;
  /** Partitions consumed at once. */
  concurrency?: number;
  /** Messages processed at once, several per partition (see startConsumer); default 1 per partition. */
  inFlight?: number;
}

type ConnectableDb = { $connect: () => Promise<void>; $disconnect: () => Promise<void> };

/** What every Kafka-speaking service is built from; services add their own clients beside these. */
export interface KafkaServiceDeps<Env extends KafkaServiceEnv, Db extends ConnectableDb> {
  name: ServiceName;
  env: Env;
  db: Db;
  bus: KafkaBus;
  log: Logger;
  metrics: ServiceMetrics;
}

export interface KafkaServiceEnv {
  LOG_LEVEL: string;
  DATABASE_URL: string;
  KAFKA_BROKERS: string[];
  KAFKA_TOPIC_PREFIX: string;
  OUTBOX_POLL_MS: number;
  /** Overrides the catalog's per-topic retry policy when set. */
  KAFKA_CONSUMER_MAX_ATTEMPTS?: number | undefined;
  KAFKA_SESSION_TIMEOUT_MS: number;
  PROCESSED_RETENTION_HOURS: number;
}

/** Build the common dependencies from configuration; `makeDb` wraps the service's own Prisma client. */
export function kafkaServiceDeps<Env extends KafkaServiceEnv, Db extends ConnectableDb>(
  name: ServiceName,
  env: Env,
  makeDb: (options: PrismaClientOptions) => Db,
  opts: { poolSize?: number } = {},
): KafkaServiceDeps<Env, Db> {
  const log = createLogger(name, env.LOG_LEVEL);
  return {
    name,
    env,
    db: makeDb(prismaClientOptions(env.DATABASE_URL, opts.poolSize === undefined ? {} : { max: opts.poolSize })),
    bus: new KafkaBus({ clientId: name, brokers: env.KAFKA_BROKERS, prefix: env.KAFKA_TOPIC_PREFIX, log }),
    log,
    metrics: createMetrics(name),
  };
}

export interface KafkaServiceParts<Tx extends RawSql> {
  deps: KafkaServiceDeps<KafkaServiceEnv, ConnectableDb>;
  consumers: ConsumerSpec<Tx>[];
  routes?: (relay: OutboxRelay) => Router;
  readiness?: ReadinessCheck[];
  /** Largest JSON body the routes accept (default 1mb); batch admission takes more. */
  jsonLimit?: string;
  /** Extra background work started after the consumers and stopped before them. */
  background?: { start: () => Promise<void> | void; stop: () => Promise<void> | void };
}

/**
 * The shape shared by every Kafka-speaking service: database, topics, outbox relay, idempotent
 * consumers, and the HTTP shell whose /readyz reports all of them. Shutdown order: HTTP (by the
 * caller), background work, consumers (in-flight messages finish and commit), relay (final drain),
 * producer, database.
 */
export function createKafkaService<Tx extends RawSql>(parts: KafkaServiceParts<Tx>): ServiceLifecycle & { relay: OutboxRelay } {
  const { name, bus, log, metrics, env } = parts.deps;
  // Prisma's client satisfies the kit's raw-SQL surface; its overloaded $transaction needs the cast.
  const db = parts.deps.db as unknown as TxCapable<Tx> & ConnectableDb;
  const relay = new OutboxRelay({ databaseUrl: env.DATABASE_URL, bus, log, pollMs: env.OUTBOX_POLL_MS });
  let purgeTimer: NodeJS.Timeout | undefined;
  const running: ConsumerHandle[] = [];
  const shell = createHttpShell({
    metrics,
    log,
    readiness: [
      { name: 'database', check: () => databaseReachable(db) },
      { name: 'kafka_consumers', check: () => running.length === parts.consumers.length && running.every((c) => c.ready()) },
      { name: 'outbox_relay', check: () => relay.healthy() },
      ...(parts.readiness ?? []),
    ],
    ...(parts.jsonLimit ? { jsonLimit: parts.jsonLimit } : {}),
  });
  if (parts.routes) shell.app.use(parts.routes(relay));

  return {
    app: shell.seal(),
    relay,
    start: async () => {
      await db.$connect();
      await bus.ensureTopics([...new Set([...topicsProducedBy(name), ...topicsConsumedBy(name)])]);
      await bus.connect();
      relay.start();
      for (const spec of parts.consumers) {
        running.push(
          await startConsumer<Tx>({
            bus,
            db,
            log,
            metrics,
            group: spec.group,
            topics: spec.topics,
            handlers: spec.handlers,
            concurrency: spec.concurrency ?? 1,
            ...(spec.inFlight !== undefined ? { inFlight: spec.inFlight } : {}),
            ...(env.KAFKA_CONSUMER_MAX_ATTEMPTS !== undefined ? { maxAttempts: env.KAFKA_CONSUMER_MAX_ATTEMPTS } : {}),
            sessionTimeoutMs: env.KAFKA_SESSION_TIMEOUT_MS,
            afterCommit: () => relay.nudge(),
          }),
        );
      }
      await parts.background?.start();
      if (parts.consumers.length > 0) {
        purgeTimer = setInterval(() => {
          purgeProcessed(db, env.PROCESSED_RETENTION_HOURS)
            .then((n) => n > 0 && log.info({ deleted: n }, 'processed-event records past their retention purged'))
            .catch((err: unknown) => log.warn({ err }, 'purging processed-event records failed; next try in an hour'));
        }, PROCESSED_PURGE_EVERY_MS);
        purgeTimer.unref();
      }
    },
    stop: async () => {
      if (purgeTimer) clearInterval(purgeTimer);
      await parts.background?.stop();
      await Promise.all(running.map((c) => c.stop()));
      await relay.stop();
      await bus.disconnect();
      await db.$disconnect();
    },
  };
}
