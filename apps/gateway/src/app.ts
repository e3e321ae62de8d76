import type { ErrorRequestHandler, Express } from 'express';
import { Redis } from 'ioredis';
import { databaseReachable, prismaClientOptions } from '@wdr/kit/db';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import { createHttpShell, createMetricsApp, type ServiceLifecycle } from '@wdr/kit/service';
import { serviceIdentityFrom } from '@wdr/kit/service-identity';
import { KafkaBus } from '@wdr/kit/kafka';
import { PgListener, pgConnectionFor } from '@wdr/kit/pg-listen';
import { PrismaClient } from './generated/prisma/client.js';
import { mountApiReference } from './api/reference.js';
import { publicValidationError } from './api/validation-errors.js';
import { CREDENTIALS_CHANNEL, CredentialCache } from './domain/auth/credential-cache.js';
import { purgeWriteClaims } from './domain/browser/claims.js';
import { withLimiterScripts, type LimiterRedis } from './domain/limits/redis-scripts.js';
import type { GatewayEnv } from './env.js';
import { RegisterRoutes } from './routes/routes.js';
import { EVENT_STREAM_PATH, requestEventStream } from './sse/event-stream.js';
import { LiveRequestEvents } from './sse/live-request-events.js';

export interface GatewayDeps {
  env: GatewayEnv;
  db: PrismaClient;
  orchestrator: ServiceClient;
  ledger: ServiceClient;
  /** browser-renderer: debug artifacts of failed requests. */
  renderer: ServiceClient;
  /** recipe-extractor: recipes, their capabilities, and the extraction runs of requests. */
  extractor: ServiceClient;
  /** webhook-dispatcher: webhook endpoints and their delivery attempts (browser workflows). */
  webhooks: ServiceClient;
  /** Rate-limit and admission counters only; nothing durable lives in Redis. */
  redis: LimiterRedis;
  log: Logger;
  metrics: ServiceMetrics;
  /** request.lifecycle events from Kafka, fanned out to the open event streams. */
  liveEvents: LiveRequestEvents;
  /** Recently verified credentials, dropped per tenant when the database says they changed. */
  credentials: CredentialCache;
  /** Keeps `credentials` told of changes (LISTEN wdr_credentials). */
  credentialChanges: PgListener;
}

/** Wire the real dependencies from configuration (tests and main.ts both use this). */
export function createGatewayDeps(env: GatewayEnv): GatewayDeps {
  const log = createLogger('gateway', env.LOG_LEVEL);
  // Short command timeout and one retry: admission limits fail open rather than wait on Redis.
  const redis = withLimiterScripts(
    new Redis(env.REDIS_URL, { lazyConnect: true, commandTimeout: 500, maxRetriesPerRequest: 1, connectTimeout: 2_000 }),
  );
  redis.on('error', (err: unknown) => log.warn({ err }, 'redis connection error'));
  const metrics = createMetrics('gateway');
  // The gateway serves no internal route; its calls to the others carry its identity.
  const identity = serviceIdentityFrom('gateway', env).signer;
  const bus = KafkaBus.fromEnv('gateway', env, log);
  const credentials = new CredentialCache({ ttlMs: env.AUTH_CACHE_TTL_MS, maxEntries: env.AUTH_CACHE_MAX_ENTRIES });
  const credentialChanges = new PgListener({
    connection: pgConnectionFor(env.DATABASE_URL).config,
    channel: CREDENTIALS_CHANNEL,
    log,
    onNotify: (tenantId) => credentials.invalidateTenant(tenantId),
    onListening: () => credentials.trust(true),
    onLost: () => credentials.trust(false),
  });
  return {
    env,
    credentials,
    credentialChanges,
    liveEvents: new LiveRequestEvents({ bus, log, metrics }),
    db: new PrismaClient(prismaClientOptions(env.DATABASE_URL)),
    orchestrator: createServiceClient({ name: 'fetch-orchestrator', baseUrl: env.ORCHESTRATOR_URL, timeoutMs: 10_000, metrics, identity }),
    ledger: createServiceClient({ name: 'billing-ledger', baseUrl: env.LEDGER_URL, metrics, identity }),
    renderer: createServiceClient({ name: 'browser-renderer', baseUrl: env.RENDERER_URL, metrics, identity }),
    extractor: createServiceClient({ name: 'recipe-extractor', baseUrl: env.EXTRACTOR_URL, metrics, identity }),
    webhooks: createServiceClient({ name: 'webhook-dispatcher', baseUrl: env.WEBHOOKS_URL, metrics, identity }),
    redis,
    log,
    metrics,
  };
}

/**
 * The gateway's lifecycle: its database, Redis for the admission limits, and the live events
 * consumer. Ready means "can serve the API": the database only (Redis and Kafka degrade, see above).
 */
export function createGatewayService(deps: GatewayDeps): ServiceLifecycle {
  let purgeTimer: NodeJS.Timeout | undefined;
  return {
    app: createApp(deps),
    metricsApp: createMetricsApp(deps.metrics),
    start: async () => {
      await deps.db.$connect();
      deps.credentialChanges.start();
      // Redis is not required to serve (limits fail open); ioredis keeps reconnecting in the background.
      await deps.redis.connect().catch((err: unknown) => deps.log.warn({ err }, 'redis unavailable at start'));
      // Kafka is not required to serve: the live feed connects in the background (streams poll
      // the stored events until it does).
      deps.liveEvents.start();
      // Idempotency claims of the cabinet's writes outlive their window otherwise (every replica
      // purges; the deletes of two at once only overlap).
      purgeTimer = setInterval(() => {
        purgeWriteClaims(deps.db, deps.env.IDEMPOTENCY_RETENTION_HOURS)
          .then((n) => n > 0 && deps.log.info({ purged: n }, 'expired write claims purged'))
          .catch((err: unknown) => deps.log.warn({ err }, 'purging write claims failed'));
      }, 3_600_000);
      purgeTimer.unref();
    },
    // Open event streams would hold the HTTP server's shutdown until the grace period ends.
    beforeClose: () => deps.liveEvents.closeAll(),
    stop: async () => {
      clearInterval(purgeTimer);
      await deps.liveEvents.stop();
      await deps.credentialChanges.stop();
      deps.credentials.trust(false);
      deps.redis.disconnect();
      await deps.db.$disconnect();
    },
  };
}

export function createApp(deps: GatewayDeps): Express {
  const shell = createHttpShell({
    metrics: deps.metrics,
    log: deps.log,
    readiness: [
      { name: 'database', check: () => databaseReachable(deps.db) },
      // Reported, not required: without it event streams poll the stored events.
      { name: 'kafka_live_events', required: false, check: () => deps.liveEvents.ready() },
    ],
    // A batch of 1,000 jobs, each with its options and a URL of up to 4 KiB; 1 MB elsewhere.
    largeBodyRoutes: ['/api/v1/data/batches', '/api/v1/client/batches'].map((path) => ({ path, limit: '8mb' })),
  });
  shell.app.locals['deps'] = deps;
  // The OpenAPI document and a reference page rendered from it, read once here; no key needed.
  mountApiReference(shell.app);
  // Server-Sent Events need a response held open, which tsoa cannot do: a plain route, registered
  // first; RequestReadsController.streamEvents documents it in the OpenAPI document.
  shell.app.get(
    EVENT_STREAM_PATH,
    requestEventStream(deps, {
      heartbeatMs: deps.env.SSE_HEARTBEAT_MS,
      maxDurationMs: deps.env.SSE_MAX_DURATION_MS,
      retryMs: deps.env.SSE_RETRY_MS,
      pollMs: deps.env.SSE_POLL_MS,
    }),
  );
  RegisterRoutes(shell.app);
  // tsoa's validation errors, in the API's words, before the shell's PublicError handler answers.
  shell.app.use(((err, req, _res, next) => next(publicValidationError(err, req))) as ErrorRequestHandler);
  return shell.seal();
}
