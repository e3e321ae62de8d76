import type { Router } from 'express';
import { topicsConsumedBy, topicsProducedBy, type ServiceName, type TopicKey } from '@wdr/contracts';
import { databaseReachable, type RawSql, type TxCapable } from '../db.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { createHttpShell, type ReadinessCheck, type ServiceLifecycle } from '../service.js';
import type { KafkaBus } from './bus.js';
import { startConsumer, type ConsumerHandle, type EventHandler } from './consumer.js';
import { OutboxRelay } from './outbox.js';

export interface ConsumerSpec<Tx extends RawSql> {
  /** Consumer group (and processed-event namespace). */
  group: string;
  topics: readonly TopicKey[];
  handlers: Partial<Record<string, EventHandler<Tx>>>;
  concurrency?: number;
}

export interface KafkaServiceParts<Tx extends RawSql> {
  name: ServiceName;
  db: TxCapable<Tx> & { $connect: () => Promise<void>; $disconnect: () => Promise<void> };
  bus: KafkaBus;
  log: Logger;
  metrics: ServiceMetrics;
  outboxPollMs: number;
  maxAttempts: number;
  consumers: ConsumerSpec<Tx>[];
  routes?: (relay: OutboxRelay) => Router;
  readiness?: ReadinessCheck[];
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
  const relay = new OutboxRelay({ db: parts.db, bus: parts.bus, log: parts.log, pollMs: parts.outboxPollMs });
  const running: ConsumerHandle[] = [];
  const shell = createHttpShell({
    metrics: parts.metrics,
    log: parts.log,
    readiness: [
      { name: 'database', check: () => databaseReachable(parts.db) },
      { name: 'kafka_consumers', check: () => running.length === parts.consumers.length && running.every((c) => c.ready()) },
      { name: 'outbox_relay', check: () => relay.healthy() },
      ...(parts.readiness ?? []),
    ],
  });
  if (parts.routes) shell.app.use(parts.routes(relay));

  return {
    app: shell.seal(),
    relay,
    start: async () => {
      await parts.db.$connect();
      await parts.bus.ensureTopics([...new Set([...topicsProducedBy(parts.name), ...topicsConsumedBy(parts.name)])]);
      await parts.bus.connect();
      relay.start();
      for (const spec of parts.consumers) {
        running.push(
          await startConsumer<Tx>({
            bus: parts.bus,
            db: parts.db,
            log: parts.log,
            metrics: parts.metrics,
            group: spec.group,
            topics: spec.topics,
            handlers: spec.handlers,
            concurrency: spec.concurrency ?? 1,
            maxAttempts: parts.maxAttempts,
            afterCommit: () => relay.nudge(),
          }),
        );
      }
      await parts.background?.start();
    },
    stop: async () => {
      await parts.background?.stop();
      await Promise.all(running.map((c) => c.stop()));
      await relay.stop();
      await parts.bus.disconnect();
      await parts.db.$disconnect();
    },
  };
}
