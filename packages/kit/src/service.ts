import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { COERCION_KEYS, coercionOverrideRefusal, errorHandler, notFoundHandler } from './errors.js';
import type { Logger } from './log.js';
import type { ServiceMetrics } from './metrics.js';
import { REQUEST_ID_HEADER, validRequestId, withRequestId } from './request-context.js';

export interface ReadinessCheck {
  name: string;
  /** Resolves true when this dependency is usable now; a throw counts as not ready. */
  check: () => Promise<boolean> | boolean;
  /**
   * false: reported in the /readyz body but not deciding it (a dependency the service's HTTP role
   * does without, such as Kafka behind the outbox). Default true.
   */
  required?: boolean;
  /** A line for the /readyz body next to the result (how the dependency runs, say). */
  detail?: () => string | undefined;
}

/**
 * A reason the process must be restarted: `check` returns undefined while live, or what is wedged.
 * Synchronous and cheap (the probe runs every few seconds); never about a dependency being down,
 * which a restart does not fix.
 */
export interface LivenessCheck {
  name: string;
  check: () => string | undefined;
}

export interface HttpShell {
  app: Express;
  /** Adds the 404 and PublicError handlers; call after mounting the service's routes. */
  seal: () => Express;
}

/** Probes: answered, never access-logged (every few seconds from every kubelet). */
const UNLOGGED_PATHS = new Set(['/healthz', '/readyz']);

/**
 * The HTTP shell every service shares: request ids, access logs, RED metrics, /healthz and /readyz.
 * `/metrics` is served on a port of its own (createMetricsApp, METRICS_PORT), so Prometheus is
 * admitted to that port only, never to the service's API.
 * Liveness says the process answers and none of its `liveness` checks found something wedged that
 * only a restart fixes (503 naming it otherwise); readiness runs the service's own checks: the
 * required ones decide 200/503, the others (`required: false`) are only reported in the body.
 */
export function createHttpShell(opts: {
  metrics: ServiceMetrics;
  log: Logger;
  readiness: ReadinessCheck[];
  liveness?: LivenessCheck[];
  jsonLimit?: string;
  /** Paths (prefixes) whose JSON bodies may be larger than `jsonLimit`, e.g. batch submissions. */
  largeBodyRoutes?: { path: string; limit: string }[];
  /**
   * Runs before any body is read (the caller gate, service-identity.ts): a caller without a valid
   * identity is refused before the service parses a byte of what it sent.
   */
  gate?: RequestHandler;
  /**
   * Runs after `gate`, still before any body is read: a public API checks its callers' credentials
   * from their headers here, so an anonymous request costs no memory proportional to its body.
   */
  authenticate?: RequestHandler;
}): HttpShell {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  // The caller's id when it is a valid one (a tenant's, or the calling service's), else a new one.
  app.use((req, res, next) => {
    const id = validRequestId(req.header(REQUEST_ID_HEADER)) ?? randomUUID();
    res.locals['requestId'] = id;
    res.setHeader('X-Request-Id', id);
    next();
  });
  // One access-log line per answered request: method, path without its query, status, duration, request_id.
  app.use(
    pinoHttp({
      logger: opts.log,
      genReqId: (_req, res) => String(res.locals['requestId']),
      autoLogging: { ignore: (req) => UNLOGGED_PATHS.has((req.url ?? '').split('?')[0]!) },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      // A client that went away before the answer was complete (an event stream closed by its reader).
      customSuccessMessage: (_req, res) => (res.writableEnded ? 'request answered' : 'request aborted'),
      customErrorMessage: () => 'request failed',
      customSuccessObject: (_req, res, val: Record<string, unknown>) => ({ ...val, request_id: res.locals['requestId'] }),
      customErrorObject: (_req, res, _err, val: Record<string, unknown>) => ({ ...val, request_id: res.locals['requestId'] }),
      serializers: {
        req: (req: { method?: string; url?: string }) => ({ method: req.method, path: (req.url ?? '').split('?')[0] }),
        res: (res: { statusCode?: number }) => ({ status_code: res.statusCode }),
      },
    }),
  );
  app.use(opts.metrics.httpMiddleware);
  // Every answer: a browser never guesses another content type than the one sent.
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  if (opts.gate) app.use(opts.gate);
  if (opts.authenticate) app.use(opts.authenticate);
  // A body parsed by a route's own parser is left alone by the general one.
  for (const r of opts.largeBodyRoutes ?? []) app.use(r.path, express.json({ limit: r.limit, reviver: noCoercionOverrides }));
  app.use(express.json({ limit: opts.jsonLimit ?? '1mb', reviver: noCoercionOverrides }));
  // The request id follows the handler's async work (internal calls, Kafka messages, log lines).
  // Entered after the body parsers: a context entered before them is lost in their stream callbacks.
  app.use((_req, res, next) => withRequestId(String(res.locals['requestId']), next));

  app.get('/healthz', (_req, res) => {
    const wedged = (opts.liveness ?? []).flatMap((c) => {
      const problem = c.check();
      return problem === undefined ? [] : [{ name: c.name, problem }];
    });
    if (wedged.length > 0) res.status(503).json({ status: 'wedged', checks: wedged });
    else res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      opts.readiness.map(async (c) => {
        const required = c.required ?? true;
        try {
          const detail = c.detail?.();
          return { name: c.name, ok: (await c.check()) === true, required, ...(detail ? { detail } : {}) };
        } catch {
          return { name: c.name, ok: false, required };
        }
      }),
    );
    const ready = results.every((r) => r.ok || !r.required);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: results });
  });
  return {
    app,
    seal: () => {
      app.use(notFoundHandler);
      app.use(errorHandler((err) => opts.log.error({ err }, 'unexpected error')));
      return app;
    },
  };
}

/**
 * The metrics listener: `GET /metrics` (Prometheus text) and nothing else, on METRICS_PORT. No
 * internal or public route is reachable through it, and no route of the API port serves metrics.
 */
export function createMetricsApp(metrics: ServiceMetrics): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  app.use((_req, res) => {
    res.status(404).json({ code: 'NOT_FOUND', message: 'Only /metrics is served on this port.' });
  });
  return app;
}

/** METRICS_PORT, or PORT + 1000 when unset (0 when PORT is 0: any free port). */
export function metricsPortOf(env: { PORT: number; METRICS_PORT?: number | undefined }): number {
  return env.METRICS_PORT ?? (env.PORT === 0 ? 0 : env.PORT + 1000);
}

export function listen(app: Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
    server.keepAliveTimeout = 65_000;
  });
}

export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

export interface RunningService {
  /** Stop taking work, finish or hand back what is in flight, commit offsets, close connections. */
  stop: () => Promise<void>;
  /** What stop() waits for now: named in the log when the grace period runs out. */
  waitingFor?: () => string;
}

/**
 * What every main.ts calls: start, then on SIGTERM/SIGINT stop gracefully within the grace period.
 */
export async function runService(opts: { log: Logger; graceMs: number; start: () => Promise<RunningService> }): Promise<void> {
  const { log } = opts;
  process.on('unhandledRejection', (err) => {
    log.fatal({ err }, 'unhandled rejection');
    process.exit(1);
  });
  let running: RunningService;
  try {
    running = await opts.start();
  } catch (err) {
    log.fatal({ err }, 'failed to start');
    process.exit(1);
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const started = Date.now();
    const timer = setTimeout(() => {
      log.error({ grace_ms: opts.graceMs, waiting_for: running.waitingFor?.() ?? null }, 'graceful shutdown timed out');
      process.exit(1);
    }, opts.graceMs);
    timer.unref();
    running
      .stop()
      .then(() => {
        log.info({ ms: Date.now() - started }, 'stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        log.error({ err }, 'error during shutdown');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** What a service's factory returns: its HTTP app and how to start and stop its background work. */
export interface ServiceLifecycle {
  app: Express;
  /** `/metrics` only, listened on METRICS_PORT by `serve` (createMetricsApp). */
  metricsApp?: Express;
  start: () => Promise<void>;
  stop: () => Promise<void>;
  /**
   * Called once the server stopped accepting connections, before waiting for open ones: end
   * long-lived responses (event streams) here, or the wait lasts until the grace period ends.
   */
  beforeClose?: () => Promise<void> | void;
}

/** main.ts of every service: start the work, listen, and on SIGTERM close HTTP first, then the work. */
export async function serve(opts: {
  name: string;
  log: Logger;
  graceMs: number;
  port: number;
  host: string;
  /** Where `service.metricsApp` listens (metricsPortOf(env)). */
  metricsPort?: number;
  service: ServiceLifecycle;
}): Promise<void> {
  await runService({
    log: opts.log,
    graceMs: opts.graceMs,
    start: async () => {
      await opts.service.start();
      const server = await listen(opts.service.app, opts.port, opts.host);
      const metricsServer =
        opts.service.metricsApp && opts.metricsPort !== undefined
          ? await listen(opts.service.metricsApp, opts.metricsPort, opts.host)
          : undefined;
      opts.log.info({ port: portOf(server), metrics_port: metricsServer ? portOf(metricsServer) : null }, `${opts.name} listening`);
      let waitingFor = 'nothing';
      return {
        stop: async () => {
          // Metrics stay scrapeable until the work has stopped.
          waitingFor = 'open HTTP connections';
          const closed = closeServer(server);
          await opts.service.beforeClose?.();
          await closed;
          waitingFor = 'the work in flight (consumers, jobs, pools)';
          await opts.service.stop();
          waitingFor = 'the metrics server';
          if (metricsServer) await closeServer(metricsServer);
        },
        waitingFor: () => waitingFor,
      };
    },
  });
}

/**
 * A JSON body may not define `toString` or `valueOf` as data: such a value breaks every String() or
 * template of the object it sits in, the validators' included, and turned a refusal into a 500 (the
 * fuzz sent `"mode": {"toString": ""}`). Refused as an unreadable body (400 MALFORMED_REQUEST naming the key).
 */
export function noCoercionOverrides(key: string, value: unknown): unknown {
  if (COERCION_KEYS.has(key)) throw new SyntaxError(coercionOverrideRefusal(key));
  return value;
}
