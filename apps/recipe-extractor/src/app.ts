import { pgAdapterFor, type TxCapable } from '@wdr/kit/db';
import { createKafkaService, KafkaBus } from '@wdr/kit/kafka';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import type { ExtractorEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';

export interface ExtractorDeps {
  env: ExtractorEnv;
  db: PrismaClient;
  bus: KafkaBus;
  log: Logger;
  metrics: ServiceMetrics;
}

export function createExtractorDeps(env: ExtractorEnv): ExtractorDeps {
  const log = createLogger('recipe-extractor', env.LOG_LEVEL);
  return {
    env,
    db: new PrismaClient({ adapter: pgAdapterFor(env.DATABASE_URL) }),
    bus: new KafkaBus({ clientId: 'recipe-extractor', brokers: env.KAFKA_BROKERS, prefix: env.KAFKA_TOPIC_PREFIX, log }),
    log,
    metrics: createMetrics('recipe-extractor'),
  };
}

/**
 * Part of the fleet from day one: it boots, migrates, joins its consumer group and reports health.
 * Its event handlers arrive with its features; until then events are consumed, recorded and
 * counted as `ignored` (see recipe-extractor_kafka_messages_total).
 */
export function createExtractorService(deps: ExtractorDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    name: 'recipe-extractor',
    db: deps.db as unknown as TxCapable<Prisma.TransactionClient> & PrismaClient,
    bus: deps.bus,
    log: deps.log,
    metrics: deps.metrics,
    outboxPollMs: deps.env.OUTBOX_POLL_MS,
    maxAttempts: deps.env.KAFKA_CONSUMER_MAX_ATTEMPTS,
    consumers: [{ group: 'recipe-extractor', topics: ['extractionJobs'], handlers: {} }],
  });
}
