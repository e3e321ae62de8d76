import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { pgPoolFor, type PgPool } from '@wdr/kit/pg-listen';
import { PgSql } from '@wdr/kit/pg-sql';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { CapChecks, cacheKeySecretOf, type ResultCacheSettings } from './domain/result-cache.js';
import type { AdmissionDeps } from './domain/requests/create.js';
import { CreditLeases } from './domain/leases.js';
import { LocalHttpRuns } from './domain/local-runs.js';
import { localStageContext, runHttpStage, type HttpStageDeps } from './domain/run-http-stage.js';
import { GeoVerifier } from './domain/proxies/geo.js';
import { DEFAULT_POOL_OPTIONS, ProxyPool } from './domain/proxies/pool.js';
import type { RouteDeps } from './domain/proxies/route.js';
import { recordTerminalStatesIn } from './domain/request-metrics.js';
import type { OrchestratorEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';

export interface OrchestratorDeps extends KafkaServiceDeps<OrchestratorEnv, PrismaClient> {
  ledger: ServiceClient;
  sealer: Sealer;
  policy: TargetPolicy;
  /** Everything create, retry and batch admission need, built once. */
  admission: AdmissionDeps;
  /** What the HTTP stage needs (the fetch.jobs consumer's and local runs'). */
  httpStage: HttpStageDeps;
  /** The result cache's key and bounds. */
  resultCache: ResultCacheSettings;
  /** Proxy exits, their health and geo verification. */
  routes: RouteDeps;
  /** Plain Postgres connections that write rendered pages as they arrive (domain/render-uploads.ts). */
  uploads: PgPool;
  /**
   * The hottest statements on node-postgres (kit/pg-sql.ts): admission's, a request's moves, the
   * HTTP stage consumer's processed record. Everything else stays on Prisma (`db`).
   */
  sql: PgSql;
  /**
   * The billing consumer's batches (a settled batch's resolutions, reflected in one statement over
   * arrays of request ids), planned at each execution: a plan Postgres keeps from a fresh
   * deployment's first minutes, when `data_requests` was small, scans the whole table for each
   * batch. Not for `sql`: planning admission's statement each time costs more than it saves.
   */
  batchSql: PgSql;
}

export function createOrchestratorDeps(env: OrchestratorEnv): OrchestratorDeps {
  const base = kafkaServiceDeps('fetch-orchestrator', env, (options) => new PrismaClient(options), {
    poolSize: Math.min(env.FETCH_CONCURRENCY, 8) + 4,
  });
  const sql = new PgSql(env.DATABASE_URL, {
    max: Math.min(env.FETCH_CONCURRENCY, 8) + 2,
    onError: (err) => base.log.warn({ err }, 'a statement connection broke'),
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
  const policy = new TargetPolicy(env.TARGET_ALLOWLIST, { dnsServers: env.TARGET_DNS_SERVERS });
  const resultCache: ResultCacheSettings = {
    keySecret: cacheKeySecretOf(env.TARGET_URL_KEY.key.toString('base64')),
    maxEntriesPerTenant: env.RESULT_CACHE_MAX_ENTRIES_PER_TENANT,
    capChecks: CapChecks.forCap(env.RESULT_CACHE_MAX_ENTRIES_PER_TENANT),
    maxTotalBytes: env.RESULT_CACHE_MAX_BYTES,
    outcomes: base.metrics.counter(
      'result_cache_total',
      'Result cache: lookups by outcome (hit, miss, bypass: not allowed to read) and entries evicted at fill.',
      ['outcome'],
    ),
  };
  const httpStage: HttpStageDeps = {
    db: base.db,
    sql,
    ledger,
    sealer,
    policy,
    log: base.log,
    maxResultBytes: env.MAX_RESULT_BYTES,
    resultRetentionHours: env.RESULT_RETENTION_HOURS,
    resultCache,
    routes,
  };
  const claimMs = env.LOCAL_HTTP_CLAIM_S * 1000;
  const local = localStageContext(sql);
  const localRuns =
    env.LOCAL_HTTP_STAGES > 0
      ? new LocalHttpRuns(
          sql,
          base.log,
          {
            slots: env.LOCAL_HTTP_STAGES,
            backlog: env.LOCAL_HTTP_BACKLOG,
            backlogWaitMs: env.LOCAL_HTTP_BACKLOG_WAIT_MS,
            claimMs,
            everyMs: Math.floor(claimMs / 3),
            drainMs: 10_000,
          },
          (row) => runHttpStage(httpStage, row.id, local, row),
          base.metrics,
        )
      : undefined;
  return {
    ...base,
    ledger,
    sealer,
    policy,
    resultCache,
    httpStage,
    sql,
    batchSql: new PgSql(env.DATABASE_URL, {
      max: 2,
      customPlans: true,
      onError: (err) => base.log.warn({ err }, 'a billing batch connection broke'),
    }),
    admission: {
      db: base.db,
      sql,
      ledger,
      sealer,
      sealRequestInputs: env.SEAL_REQUEST_INPUTS,
      targetRetentionHours: env.TARGET_URL_RETENTION_HOURS,
      pool,
      leases: env.LEASE_ENABLED
        ? new CreditLeases(base.db, ledger, { enabled: true, blockTokens: env.LEASE_BLOCK_TOKENS, slots: env.LEASE_SLOTS }, base.log)
        : undefined,
      localRuns,
    },
    routes,
    uploads: pgPoolFor(env.DATABASE_URL, { max: 3, onError: (err) => base.log.warn({ err }, 'an upload connection broke') }),
  };
}
