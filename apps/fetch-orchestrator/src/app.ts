import { pgAdapterFor, type TxCapable } from '@wdr/kit/db';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { createKafkaService, KafkaBus } from '@wdr/kit/kafka';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import { internalRoutes } from './api/internal-routes.js';
import { purgeExpired } from './domain/retention.js';
import { Sealer } from './domain/sealing.js';
import { TargetPolicy } from './domain/target-policy.js';
import type { OrchestratorEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';
import { onFetchJobRequested, onReservationResolved } from './kafka/handlers.js';

export interface OrchestratorDeps {
  env: OrchestratorEnv;
  db: PrismaClient;
  bus: KafkaBus;
  ledger: ServiceClient;
  sealer: Sealer;
  policy: TargetPolicy;
  log: Logger;
  metrics: ServiceMetrics;
}

export function createOrchestratorDeps(env: OrchestratorEnv): OrchestratorDeps {
  const log = createLogger('fetch-orchestrator', env.LOG_LEVEL);
  return {
    env,
    db: new PrismaClient({ adapter: pgAdapterFor(env.DATABASE_URL, { max: env.FETCH_CONCURRENCY + 6 }) }),
    bus: new KafkaBus({ clientId: 'fetch-orchestrator', brokers: env.KAFKA_BROKERS, prefix: env.KAFKA_TOPIC_PREFIX, log }),
    ledger: createServiceClient({ name: 'billing-ledger', baseUrl: env.LEDGER_URL }),
    sealer: Sealer.fromBase64(env.TARGET_URL_KEY),
    policy: new TargetPolicy(env.TARGET_ALLOWLIST),
    log,
    metrics: createMetrics('fetch-orchestrator'),
  };
}

export function createOrchestratorService(deps: OrchestratorDeps) {
  let purgeTimer: NodeJS.Timeout | undefined;
  const stageDeps = {
    db: deps.db,
    sealer: deps.sealer,
    policy: deps.policy,
    log: deps.log,
    maxResultBytes: deps.env.MAX_RESULT_BYTES,
    resultRetentionHours: deps.env.RESULT_RETENTION_HOURS,
  };
  return createKafkaService<Prisma.TransactionClient>({
    name: 'fetch-orchestrator',
    db: deps.db as unknown as TxCapable<Prisma.TransactionClient> & PrismaClient,
    bus: deps.bus,
    log: deps.log,
    metrics: deps.metrics,
    outboxPollMs: deps.env.OUTBOX_POLL_MS,
    maxAttempts: deps.env.KAFKA_CONSUMER_MAX_ATTEMPTS,
    // Separate groups so slow fetches never hold back billing updates.
    consumers: [
      {
        group: 'fetch-orchestrator.http-stage',
        topics: ['fetchJobs'],
        handlers: { 'fetch.job_requested': onFetchJobRequested(stageDeps) },
        concurrency: deps.env.FETCH_CONCURRENCY,
      },
      {
        group: 'fetch-orchestrator.billing',
        topics: ['billingEvents'],
        handlers: { 'billing.reservation_resolved': onReservationResolved },
        concurrency: 2,
      },
    ],
    routes: (relay) => internalRoutes(deps, () => relay.nudge()),
    background: {
      start: () => {
        purgeTimer = setInterval(() => {
          purgeExpired(deps.db).catch((err: unknown) => deps.log.warn({ err }, 'retention purge failed'));
        }, 60_000);
        purgeTimer.unref();
      },
      stop: () => clearInterval(purgeTimer),
    },
  });
}
