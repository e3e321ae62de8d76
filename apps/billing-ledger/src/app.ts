import { pgAdapterFor, type TxCapable } from '@wdr/kit/db';
import { createKafkaService, KafkaBus } from '@wdr/kit/kafka';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import { internalRoutes } from './api/internal-routes.js';
import type { LedgerEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';
import { onSettlementRequested } from './kafka/handlers.js';

export interface LedgerDeps {
  env: LedgerEnv;
  db: PrismaClient;
  bus: KafkaBus;
  log: Logger;
  metrics: ServiceMetrics;
}

export function createLedgerDeps(env: LedgerEnv): LedgerDeps {
  const log = createLogger('billing-ledger', env.LOG_LEVEL);
  return {
    env,
    db: new PrismaClient({ adapter: pgAdapterFor(env.DATABASE_URL) }),
    bus: new KafkaBus({ clientId: 'billing-ledger', brokers: env.KAFKA_BROKERS, prefix: env.KAFKA_TOPIC_PREFIX, log }),
    log,
    metrics: createMetrics('billing-ledger'),
  };
}

export function createLedgerService(deps: LedgerDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    name: 'billing-ledger',
    db: deps.db as unknown as TxCapable<Prisma.TransactionClient> & PrismaClient,
    bus: deps.bus,
    log: deps.log,
    metrics: deps.metrics,
    outboxPollMs: deps.env.OUTBOX_POLL_MS,
    maxAttempts: deps.env.KAFKA_CONSUMER_MAX_ATTEMPTS,
    consumers: [
      { group: 'billing-ledger', topics: ['billingCommands'], handlers: { 'billing.settlement_requested': onSettlementRequested }, concurrency: 3 },
    ],
    routes: () => internalRoutes(deps),
  });
}
