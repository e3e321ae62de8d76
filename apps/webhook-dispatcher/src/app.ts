import { pgAdapterFor, type TxCapable } from '@wdr/kit/db';
import { createKafkaService, KafkaBus } from '@wdr/kit/kafka';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import type { DispatcherEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';

export interface DispatcherDeps {
  env: DispatcherEnv;
  db: PrismaClient;
  bus: KafkaBus;
  log: Logger;
  metrics: ServiceMetrics;
}

export function createDispatcherDeps(env: DispatcherEnv): DispatcherDeps {
  const log = createLogger('webhook-dispatcher', env.LOG_LEVEL);
  return {
    env,
    db: new PrismaClient({ adapter: pgAdapterFor(env.DATABASE_URL) }),
    bus: new KafkaBus({ clientId: 'webhook-dispatcher', brokers: env.KAFKA_BROKERS, prefix: env.KAFKA_TOPIC_PREFIX, log }),
    log,
    metrics: createMetrics('webhook-dispatcher'),
  };
}

/**
 * Part of the fleet from day one: it boots, migrates, joins its consumer group and reports health.
 * Its event handlers arrive with its features; until then events are consumed, recorded and
 * counted as `ignored` (see webhook-dispatcher_kafka_messages_total).
 */
export function createDispatcherService(deps: DispatcherDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    name: 'webhook-dispatcher',
    db: deps.db as unknown as TxCapable<Prisma.TransactionClient> & PrismaClient,
    bus: deps.bus,
    log: deps.log,
    metrics: deps.metrics,
    outboxPollMs: deps.env.OUTBOX_POLL_MS,
    maxAttempts: deps.env.KAFKA_CONSUMER_MAX_ATTEMPTS,
    consumers: [{ group: 'webhook-dispatcher', topics: ['requestLifecycle', 'billingEvents'], handlers: {} }],
  });
}
