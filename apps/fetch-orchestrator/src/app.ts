import { TOPICS } from '@wdr/contracts';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { createKafkaService, kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { internalRoutes } from './api/internal-routes.js';
import { purgeExpired } from './domain/retention.js';
import { cacheKeySecretOf, type ResultCacheSettings } from './domain/result-cache.js';
import type { AdmissionDeps } from './domain/requests.js';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';
import type { OrchestratorEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';
import { onFetchJobRequested, onReservationResolved } from './kafka/handlers.js';
import { pgConnectionFor } from '@wdr/kit/pg-listen';
import { GeoVerifier } from './domain/proxies/geo.js';
import { DEFAULT_POOL_OPTIONS, ProxyPool } from './domain/proxies/pool.js';
import type { RouteDeps } from './domain/proxies/route.js';
import { recordTerminalStatesIn } from './domain/request-metrics.js';

export interface OrchestratorDeps extends KafkaServiceDeps<OrchestratorEnv, PrismaClient> {
  ledger: ServiceClient;
  sealer: Sealer;
  policy: TargetPolicy;
  /** Everything create, retry and batch admission need, built once. */
  admission: AdmissionDeps;
  /** The result cache's key and bounds. */
  resultCache: ResultCacheSettings;
  /** Proxy exits, their health and geo verification. */
  routes: RouteDeps;
}

export function createOrchestratorDeps(env: OrchestratorEnv): OrchestratorDeps {
  const base = kafkaServiceDeps('fetch-orchestrator', env, (options) => new PrismaClient(options), {
    poolSize: Math.min(env.FETCH_CONCURRENCY, 8) + 4,
  });
  const ledger = createServiceClient({
    name: 'billing-ledger',
    baseUrl: env.LEDGER_URL,
    metrics: base.metrics,
    identity: base.identity.signer,
  });
  const sealer = Sealer.fromKeys(env.TARGET_URL_KEY, env.TARGET_URL_KEY_PREVIOUS, 'TARGET_URL_KEY');
  recordTerminalStatesIn(base.metrics);
  const pool = new ProxyPool(base.db, sealer, base.log, { ...DEFAULT_POOL_OPTIONS, resetTimeoutMs: env.PROXY_EXIT_RESET_MS }, base.metrics);
  const routes: RouteDeps = {
    pool,
    geo: new GeoVerifier({ echoUrl: env.GEO_ECHO_URL, databasePath: env.GEO_DATABASE_PATH }),
    maxExitAttempts: env.PROXY_MAX_EXIT_ATTEMPTS,
  };
  return {
    ...base,
    ledger,
    sealer,
    policy: new TargetPolicy(env.TARGET_ALLOWLIST),
    resultCache: {
      keySecret: cacheKeySecretOf(env.TARGET_URL_KEY.key.toString('base64')),
      maxEntriesPerTenant: env.RESULT_CACHE_MAX_ENTRIES_PER_TENANT,
      maxTotalBytes: env.RESULT_CACHE_MAX_BYTES,
      outcomes: base.metrics.counter(
        'result_cache_total',
        'Result cache: lookups by outcome (hit, miss, bypass: not allowed to read) and entries evicted at fill.',
        ['outcome'],
      ),
    },
    admission: { db: base.db, ledger, sealer, targetRetentionHours: env.TARGET_URL_RETENTION_HOURS, pool },
    routes,
  };
}

export function createOrchestratorService(deps: OrchestratorDeps) {
  let purgeTimer: NodeJS.Timeout | undefined;
  const stageDeps = {
    db: deps.db,
    ledger: deps.ledger,
    sealer: deps.sealer,
    policy: deps.policy,
    log: deps.log,
    maxResultBytes: deps.env.MAX_RESULT_BYTES,
    resultRetentionHours: deps.env.RESULT_RETENTION_HOURS,
    resultCache: deps.resultCache,
    routes: deps.routes,
  };
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    // Separate groups so slow fetches never hold back billing updates.
    consumers: [
      {
        group: 'fetch-orchestrator.http-stage',
        topics: ['fetchJobs'],
        handlers: { 'fetch.job_requested': onFetchJobRequested(stageDeps) },
        // Every partition at once, and several jobs per partition: a slow target must not hold up
        // the jobs queued behind it on its partition. Jobs are independent, so order is not needed.
        concurrency: TOPICS.fetchJobs.partitions,
        inFlight: deps.env.FETCH_CONCURRENCY,
      },
      {
        group: 'fetch-orchestrator.billing',
        topics: ['billingEvents'],
        handlers: { 'billing.reservation_resolved': onReservationResolved },
        concurrency: 2,
      },
    ],
    routes: (relay) => internalRoutes(deps, () => relay.nudge()),
    // A batch of 1,000 jobs, each with its options and a URL of up to 4 KiB; a rendered page of up
    // to MAX_RESULT_BYTES (10 MB) handed back by browser-renderer, base64, with its text.
    jsonLimit: '32mb',
    background: {
      start: () => {
        deps.routes.pool.watch(pgConnectionFor(deps.env.DATABASE_URL).config);
        purgeTimer = setInterval(() => {
          purgeExpired(deps.db, new Date(), deps.resultCache).catch((err: unknown) => deps.log.warn({ err }, 'retention purge failed'));
        }, 60_000);
        purgeTimer.unref();
      },
      stop: async () => {
        clearInterval(purgeTimer);
        await deps.routes.pool.shutdown();
      },
    },
  });
}
