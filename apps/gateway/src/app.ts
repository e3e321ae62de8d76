import type { ErrorRequestHandler, Express } from 'express';
import { databaseReachable } from '@wdr/kit/db';
import { createHttpShell, createMetricsApp, type ServiceLifecycle } from '@wdr/kit/service';
import { expressAuthentication } from './api/authentication.js';
import { authenticateBeforeBody } from './api/pre-authentication.js';
import { refuseNulStrings } from './api/nul-strings.js';
import { limitReads } from './api/read-limits.js';
import { mountApiReference } from './api/reference.js';
import { publicValidationError } from './api/validation-errors.js';
import type { GatewayDeps } from './deps.js';
import { AuthFailureThrottle } from './domain/limits/auth-failures.js';
import { purgeWriteClaims } from './domain/browser/claims.js';
import { RegisterRoutes } from './routes/routes.js';
import { EVENT_STREAM_PATH, requestEventStream } from './sse/event-stream.js';

/**
 * The gateway's lifecycle: its database, Redis for the admission limits, and the live events
 * consumer. Ready means "can serve the API": the database only (Redis and Kafka degrade, see createGatewayDeps in deps.ts).
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
      deps.streamListeners.stop();
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
    // Authenticate, then read: credentials are checked from the headers before any body parser runs.
    authenticate: authenticateBeforeBody({ authenticate: expressAuthentication, throttle: new AuthFailureThrottle(deps) }),
  });
  shell.app.locals['deps'] = deps;
  // Which address is the client's (req.ip): the failed-authentication throttle counts it.
  shell.app.set('trust proxy', deps.env.TRUSTED_PROXY_HOPS === 0 ? false : deps.env.TRUSTED_PROXY_HOPS);
  // The OpenAPI document and a reference page rendered from it, read on first request; no key needed.
  mountApiReference(shell.app);
  // No NUL character in anything a tenant writes (body, query, path): Postgres stores none.
  shell.app.use(refuseNulStrings);
  // Per-tenant read rate and concurrency of the data API's GETs (event streams: rate only here).
  shell.app.use(limitReads(deps));
  // Server-Sent Events need a response held open, which tsoa cannot do: a plain route, registered
  // first; RequestReadsController.streamEvents documents it in the OpenAPI document.
  shell.app.get(
    EVENT_STREAM_PATH,
    requestEventStream(deps, {
      heartbeatMs: deps.env.SSE_HEARTBEAT_MS,
      maxDurationMs: deps.env.SSE_MAX_DURATION_MS,
      retryMs: deps.env.SSE_RETRY_MS,
      pollMs: deps.env.SSE_POLL_MS,
      maxStreamsPerTenant: deps.env.SSE_MAX_STREAMS_PER_TENANT,
    }),
  );
  RegisterRoutes(shell.app);
  // tsoa's validation errors, in the API's words, before the shell's PublicError handler answers.
  shell.app.use(((err, req, _res, next) => next(publicValidationError(err, req))) as ErrorRequestHandler);
  return shell.seal();
}
