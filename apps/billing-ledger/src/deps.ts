import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { PgSql } from '@wdr/kit/pg-sql';
import type { LedgerEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';

/** What the ledger's operations, routes and handlers are given: configuration, the database, the bus, log and metrics. */
export interface LedgerDeps extends KafkaServiceDeps<LedgerEnv, PrismaClient> {
  /**
   * The settlement consumer's batches on node-postgres (kit/pg-sql.ts): one Kafka batch of
   * commands is one transaction of raw statements, where Prisma's interactive transaction and
   * raw-query path cost more CPU than the statements. Everything else stays on Prisma (`db`).
   */
  sql: PgSql;
}

export function createLedgerDeps(env: LedgerEnv): LedgerDeps {
  const base = kafkaServiceDeps('billing-ledger', env, (options) => new PrismaClient(options));
  return {
    ...base,
    // The consumer settles up to three partitions' batches at once. Its statements take arrays of
    // request ids over tables that grow from nothing in a fresh deployment: planned at each
    // execution, or a plan kept from the first minutes scans every reservation (bench/README.md).
    sql: new PgSql(env.DATABASE_URL, {
      max: 3,
      customPlans: true,
      onError: (err) => base.log.warn({ err }, 'a settlement connection broke'),
    }),
  };
}
