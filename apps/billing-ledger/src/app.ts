import { createKafkaService, kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { internalRoutes } from './api/internal-routes.js';
import type { LedgerEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';
import { onSettlementRequested } from './kafka/handlers.js';

export type LedgerDeps = KafkaServiceDeps<LedgerEnv, PrismaClient>;

export function createLedgerDeps(env: LedgerEnv): LedgerDeps {
  return kafkaServiceDeps('billing-ledger', env, (options) => new PrismaClient(options));
}

export function createLedgerService(deps: LedgerDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [
      { group: 'billing-ledger', topics: ['billingCommands'], handlers: { 'billing.settlement_requested': onSettlementRequested(deps.metrics) }, concurrency: 3 },
    ],
    routes: () => internalRoutes(deps),
  });
}
