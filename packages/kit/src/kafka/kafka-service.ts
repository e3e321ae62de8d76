import type { Express, Router } from 'express';
import type { PgSql } from '../pg-sql.js';
import { internalEndpointsOf, topicsConsumedBy, topicsProducedBy, type ServiceName, type TopicKey } from '@wdr/contracts';
import { databaseReachable, prismaClientOptions, type PrismaClientOptions, type RawSql, type TxCapable } from '../db.js';
import { createLogger, type Logger } from '../log.js';
import { createMetrics, type ServiceMetrics } from '../metrics.js';
import { createHttpShell, createMetricsApp, type ReadinessCheck, type ServiceLifecycle } from '../service.js';
import { callerGate, serviceIdentityFrom, type IdentityEnv, type ServiceIdentity } from '../service-identity.js';
import { KafkaBus } from './bus.js';
import type { KafkaSecurityEnv, KafkaTopicsEnv } from './kafka-config.js';
import { PROCESSED_PURGE_EVERY_MS, processedPurger } from './processed-retention.js';
import { startConsumer, type BatchedFetch, type ConsumerHandle, type EventBatchHandlers, type EventHandlers } from './consumer.js';
import { ConsumerWatchdog } from './consumer-liveness.js';
import { OutboxRelay } from './outbox.js';

export interface ConsumerSpec<Tx extends RawSql> {
  /** Consumer group (and processed-event namespace). */
  group: string;
  topics: readonly TopicKey[];
  handlers: EventHandlers<Tx>;
  /** Handlers of runs of one type in one transaction (see startConsumer); ordered consumers only. */
  batchHandlers?: EventBatchHandlers<Tx>;
  /** Most messages per batch handler call (default 200). */
  maxBatch?: number;
  /** Partitions consumed at once. */
  concurrency?: number;
  /** Messages processed at once, several per partition (see startConsumer); default 1 per partition. */
  inFlight?: number;
  /** false: handlers without a transaction are idempotent by themselves; their events are not recorded (see startConsumer). */
  recordUntransacted?: boolean;
  /** Batched fetches (BatchedFetch): up to `maxWaitMs` of latency for fewer round trips. */
  fetch?: BatchedFetch;
  /** Skip-only batches commit their offsets at most this often (see startConsumer). */
  lazySkipCommitMs?: number;
  /** Plain node-postgres for the processed record and `ctx.writes` of PgSql statements (see startConsumer). */
  sql?: PgSql;
  /** Tenants whose messages are skipped unread (see startConsumer). */
  skipTenant?: (tenantId: string) => boolean;
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
  /** Signs this service's internal calls (`identity.signer` for its ServiceClients) and verifies its callers. */
  identity: ServiceIdentity;
}

export interface KafkaServiceEnv extends KafkaSecurityEnv, KafkaTopicsEnv, IdentityEnv {
  LOG_LEVEL: string;
  DATABASE_URL: string;
  KAFKA_BROKERS: string[];
  KAFKA_TOPIC_PREFIX: string;
  OUTBOX_POLL_MS: number;
  /** Overrides the catalog's per-topic retry policy when set. */
  KAFKA_CONSUMER_MAX_ATTEMPTS?: number | undefined;
  KAFKA_SESSION_TIMEOUT_MS: number;
  KAFKA_FETCH_WAIT_MS: number;
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
    bus: KafkaBus.fromEnv(name, env, log),
    log,
    metrics: createMetrics(name),
    identity: serviceIdentityFrom(name, env),
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
  /**
   * Closes what the service holds beside its Prisma client (its node-postgres pools, kit/pg-sql.ts),
   * once the consumers and the outbox relay have stopped: in-flight messages still write through them.
   */
  close?: () => Promise<void> | void;
  /** The consumer watchdog's stall time and period (ConsumerWatchdog; defaults 5 min and 15 s; tests shorten them). */
  consumerLiveness?: { stallMs?: number; everyMs?: number };
}

/**
 * The shape shared by every Kafka-speaking service: database, topics, outbox relay, idempotent
 * consumers, and the HTTP shell.
 *
 * Readiness means "can serve my role over HTTP": only the database (and the service's own checks,
 * such as Chromium) gate /readyz. Kafka does not: a service starts, serves and admits without it
 * (admissions wait in the outbox), and connects in the background, retrying until the broker
 * answers. The Kafka state is reported in the /readyz body (`required: false`) and as the gauges
 * `kafka_connected` and `kafka_consumer_ready{group}` for alerts. Liveness (/healthz) fails only
 * for a consumer wedged in a way a restart fixes (ConsumerWatchdog: kafkajs gave up on it, or it
 * made no progress for 5 minutes while the broker answers; `kafka_consumer_wedged{group}`), never
 * because Kafka is down: a broker outage must not restart every pod of the fleet.
 *
 * Shutdown order: HTTP (by the caller), background work, consumers (in-flight messages finish and
 * commit), relay (final drain), producer, database.
 */
export function createKafkaService<Tx extends RawSql>(
  parts: KafkaServiceParts<Tx>,
): ServiceLifecycle & { metricsApp: Express; relay: OutboxRelay; kafkaConnected: () => Promise<void> } {
  const { name, bus, log, metrics, env } = parts.deps;
  // Prisma's client satisfies the kit's raw-SQL surface; its overloaded $transaction needs the cast.
  const db = parts.deps.db as unknown as TxCapable<Tx> & ConnectableDb;
  const relay = new OutboxRelay({ databaseUrl: env.DATABASE_URL, bus, log, pollMs: env.OUTBOX_POLL_MS, metrics });
  let purgeTimer: NodeJS.Timeout | undefined;
  const running = new Map<string, ConsumerHandle>();
  let stopping = false;
  let started = false;
  let connecting: Promise<void> | undefined;
  // Both read at scrape time: what they report is state the service holds anyway.
  metrics.shared.gauge('kafka_connected', 'The producer is connected to Kafka (1) or still connecting (0).', [] as const, function () {
    this.set(bus.isConnected ? 1 : 0);
  });
  metrics.shared.gauge(
    'kafka_consumer_ready',
    'A consumer group member joined, not crashed, fetching within the last minute and not waiting on a dependency (1), or not (0).',
    ['group'] as const,
    function () {
      for (const spec of parts.consumers) this.set({ group: spec.group }, running.get(spec.group)?.ready() ? 1 : 0);
    },
  );
  const consumersReady = () => running.size === parts.consumers.length && [...running.values()].every((c) => c.ready());
  const purge = processedPurger({ db, metrics, log, retainHours: env.PROCESSED_RETENTION_HOURS });
  const wedgedGauge = metrics.shared.gauge(
    'kafka_consumer_wedged',
    'The consumer is wedged in a way a restart fixes, so liveness fails (1): kafkajs gave up on it, or no fetch or heartbeat for the stall time while the broker answers.',
    ['group'] as const,
  );
  const watchdog = new ConsumerWatchdog({
    bus,
    log,
    consumers: () => running,
    ...parts.consumerLiveness,
    onCheck: (wedged) => {
      for (const spec of parts.consumers) wedgedGauge.set({ group: spec.group }, wedged.some((w) => w.group === spec.group) ? 1 : 0);
    },
  });
  // Every route but the probes needs a verified caller that the route's contract names (service-identity.ts).
  const refusals = metrics.shared.counter(
    'internal_calls_refused_total',
    'Internal calls refused by the caller gate: 401 (no valid service identity, by reason), 403 (a service the route does not name), 404 (no such route).',
    ['status', 'reason', 'caller'] as const,
  );
  const gate = callerGate({
    verifier: parts.deps.identity.verifier,
    endpoints: internalEndpointsOf(name),
    onRefused: (r) => {
      refusals.inc({ status: String(r.status), reason: r.reason, caller: r.caller ?? 'unknown' });
      log.warn({ refused: r }, 'internal call refused');
    },
  });
  const shell = createHttpShell({
    metrics,
    log,
    liveness:
      parts.consumers.length > 0
        ? [
            {
              name: 'kafka_consumers',
              check: () => {
                const wedged = watchdog.wedged();
                return wedged.length === 0 ? undefined : wedged.map((w) => `${w.group}: ${w.detail}`).join('; ');
              },
            },
          ]
        : [],
    readiness: [
      // Before start() the service has no database connection and no relay: not ready.
      { name: 'started', check: () => started },
      { name: 'database', check: () => databaseReachable(db) },
      ...(parts.readiness ?? []),
      // Reported, not required: consumer progress and the relay are watched by metrics and alerts.
      { name: 'kafka_producer', required: false, check: () => bus.isConnected },
      ...(parts.consumers.length > 0 ? [{ name: 'kafka_consumers', required: false, check: consumersReady }] : []),
      { name: 'outbox_relay', required: false, check: () => relay.healthy() },
    ],
    ...(parts.jsonLimit ? { jsonLimit: parts.jsonLimit } : {}),
    gate,
  });
  if (parts.routes) shell.app.use(parts.routes(relay));

  /** Retry `step` until it succeeds or the service stops (1 s doubling to 30 s); false when stopped. */
  const untilDone = async (what: string, step: () => Promise<void>): Promise<boolean> => {
    for (let failures = 0; !stopping; failures++) {
      try {
        await step();
        if (failures > 0) log.info({ failures }, `kafka: ${what} succeeded after retries`);
        return true;
      } catch (err) {
        log.warn({ err, failures: failures + 1 }, `kafka: ${what} failed; retrying in the background`);
        await new Promise((r) => setTimeout(r, Math.min(1_000 * 2 ** Math.min(failures, 5), 30_000)));
      }
    }
    return false;
  };

  /** Topics, producer, consumers: in the background, each step retried until the broker answers. */
  const connectKafka = async () => {
    const topics = [...new Set([...topicsProducedBy(name), ...topicsConsumedBy(name)])];
    if (!(await untilDone(bus.topicPolicy.mode === 'create' ? 'creating topics' : 'verifying topics', () => bus.ensureTopics(topics))))
      return;
    if (!(await untilDone('connecting the producer', () => bus.connect()))) return;
    relay.nudge();
    for (const spec of parts.consumers) {
      await untilDone(`starting consumer ${spec.group}`, async () => {
        const handle = await startConsumer<Tx>({
          bus,
          db,
          log,
          metrics,
          group: spec.group,
          topics: spec.topics,
          handlers: spec.handlers,
          ...(spec.batchHandlers ? { batchHandlers: spec.batchHandlers } : {}),
          ...(spec.sql ? { sql: spec.sql } : {}),
          ...(spec.skipTenant ? { skipTenant: spec.skipTenant } : {}),
          ...(spec.maxBatch !== undefined ? { maxBatch: spec.maxBatch } : {}),
          concurrency: spec.concurrency ?? 1,
          ...(spec.inFlight !== undefined ? { inFlight: spec.inFlight } : {}),
          ...(spec.recordUntransacted !== undefined ? { recordUntransacted: spec.recordUntransacted } : {}),
          ...(spec.fetch ? { fetch: spec.fetch } : {}),
          ...(spec.lazySkipCommitMs !== undefined ? { lazySkipCommitMs: spec.lazySkipCommitMs } : {}),
          ...(env.KAFKA_CONSUMER_MAX_ATTEMPTS !== undefined ? { maxAttempts: env.KAFKA_CONSUMER_MAX_ATTEMPTS } : {}),
          sessionTimeoutMs: env.KAFKA_SESSION_TIMEOUT_MS,
          fetchWaitMs: env.KAFKA_FETCH_WAIT_MS,
          afterCommit: () => relay.nudgeUnlessListening(),
        });
        if (stopping) await handle.stop();
        else running.set(spec.group, handle);
      });
    }
    if (!stopping) log.info({ consumers: running.size }, 'kafka: connected');
  };

  return {
    app: shell.seal(),
    metricsApp: createMetricsApp(metrics),
    relay,
    /**
     * Resolves once the background connection is done (topics, producer, every consumer joined),
     * or gave up because the service is stopping. For callers that need Kafka before they go on
     * (tests producing right after start); the service itself never waits for it.
     */
    kafkaConnected: async (): Promise<void> => {
      await connecting;
    },
    start: async () => {
      await db.$connect();
      // The relay publishes once the producer is connected; until then rows wait in the outbox.
      relay.start();
      connecting = connectKafka().catch((err: unknown) => log.error({ err }, 'kafka: background connection gave up'));
      await parts.background?.start();
      started = true;
      if (parts.consumers.length > 0) {
        watchdog.start();
        purgeTimer = setInterval(() => void purge(), PROCESSED_PURGE_EVERY_MS);
        purgeTimer.unref();
      }
    },
    stop: async () => {
      stopping = true;
      started = false;
      if (purgeTimer) clearInterval(purgeTimer);
      await watchdog.stop();
      await parts.background?.stop();
      // A connection attempt in progress gets a moment to finish (a consumer it starts late is
      // stopped at once); a broker that is down does not hold the shutdown.
      await Promise.race([connecting, new Promise((r) => setTimeout(r, 3_000).unref())]);
      await Promise.all([...running.values()].map((c) => c.stop()));
      await relay.stop();
      await bus.disconnect();
      await parts.close?.();
      await db.$disconnect();
    },
  };
}
