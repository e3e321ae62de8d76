import { access, constants } from 'node:fs/promises';
import { pgAdapterFor, type TxCapable } from '@wdr/kit/db';
import { createKafkaService, KafkaBus } from '@wdr/kit/kafka';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import type { RendererEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';

export interface RendererDeps {
  env: RendererEnv;
  db: PrismaClient;
  bus: KafkaBus;
  log: Logger;
  metrics: ServiceMetrics;
}

export function createRendererDeps(env: RendererEnv): RendererDeps {
  const log = createLogger('browser-renderer', env.LOG_LEVEL);
  return {
    env,
    db: new PrismaClient({ adapter: pgAdapterFor(env.DATABASE_URL) }),
    bus: new KafkaBus({ clientId: 'browser-renderer', brokers: env.KAFKA_BROKERS, prefix: env.KAFKA_TOPIC_PREFIX, log }),
    log,
    metrics: createMetrics('browser-renderer'),
  };
}

/**
 * Part of the fleet from day one: it boots, migrates, joins its consumer group and reports health.
 * Its event handlers arrive with its features; until then events are consumed, recorded and
 * counted as `ignored` (see browser-renderer_kafka_messages_total).
 */
export function createRendererService(deps: RendererDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    name: 'browser-renderer',
    db: deps.db as unknown as TxCapable<Prisma.TransactionClient> & PrismaClient,
    bus: deps.bus,
    log: deps.log,
    metrics: deps.metrics,
    outboxPollMs: deps.env.OUTBOX_POLL_MS,
    maxAttempts: deps.env.KAFKA_CONSUMER_MAX_ATTEMPTS,
    consumers: [{ group: 'browser-renderer', topics: ['renderJobs'], handlers: {} }],
    // The browser binary must be there before this service can take render jobs.
    readiness: [{ name: 'chromium', check: () => access(deps.env.CHROMIUM_PATH, constants.X_OK).then(() => true) }],
  });
}
