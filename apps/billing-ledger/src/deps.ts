import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import type { LedgerEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';

/** What the ledger's operations, routes and handlers are given: configuration, the database, the bus, log and metrics. */
export type LedgerDeps = KafkaServiceDeps<LedgerEnv, PrismaClient>;

export function createLedgerDeps(env: LedgerEnv): LedgerDeps {
  return kafkaServiceDeps('billing-ledger', env, (options) => new PrismaClient(options));
}
