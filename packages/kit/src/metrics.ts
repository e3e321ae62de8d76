import perfHooks, { type ELDHistogram } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { IdleAwareDelayMonitor } from './event-loop-delay.js';

/**
 * prom-client's default metrics, with `monitor` as the histogram behind `nodejs_eventloop_lag_*`
 * instead of node's `monitorEventLoopDelay` (which prom-client creates itself and offers no way to
 * replace): it is handed to prom-client for the one call that builds those metrics. Why, and how
 * it samples: event-loop-delay.ts.
 */
function collectDefaultMetricsWith(registry: Registry, monitor: IdleAwareDelayMonitor): void {
  const nodes = perfHooks.monitorEventLoopDelay;
  perfHooks.monitorEventLoopDelay = () => monitor as unknown as ELDHistogram;
  try {
    collectDefaultMetrics({ register: registry });
  } finally {
    perfHooks.monitorEventLoopDelay = nodes;
  }
}

/**
 * The label every series of a service carries. Not `service`: under the Prometheus Operator a
 * ServiceMonitor sets `service` (the Kubernetes Service's name) as a target label, and a const label
 * of the same name is then either overwritten or renamed to `exported_service`, depending on
 * `honorLabels`. `wdr_service` never collides.
 */
export const SERVICE_LABEL = 'wdr_service';

/**
 * The name prefix of the metrics every service exports alike (HTTP RED, breakers, Kafka consumers and
 * producer, outbox relay, processed-event purge): one name for the fleet, told apart by SERVICE_LABEL,
 * so rules and dashboards select `wdr_http_requests_total{wdr_service="gateway"}` and never need a
 * `__name__` regex. A service's own metrics keep its prefix (`fetch_orchestrator_requests_finished_total`).
 */
export const SHARED_PREFIX = 'wdr';

export interface MetricFactory {
  counter<L extends string>(name: string, help: string, labels: readonly L[]): Counter<L>;
  histogram<L extends string>(name: string, help: string, labels: readonly L[], buckets?: number[]): Histogram<L>;
  /**
   * `collect`, when given, sets the gauge's values at each scrape (a state read when asked, with no
   * timer keeping it fresh); asked again for the same name, the newest `collect` is the one called.
   */
  gauge<L extends string>(name: string, help: string, labels: readonly L[], collect?: (this: Gauge<L>) => void | Promise<void>): Gauge<L>;
}

/** What `watchBreaker` reads of an opossum CircuitBreaker. */
export interface WatchedBreaker {
  readonly opened: boolean;
  readonly halfOpen: boolean;
  on(event: 'success' | 'failure' | 'timeout' | 'reject' | 'open' | 'halfOpen' | 'close', listener: () => void): unknown;
}

export interface ServiceMetrics extends MetricFactory {
  registry: Registry;
  /** The service's own prefix (`fetch_orchestrator`): `counter`, `histogram` and `gauge` name metrics `<prefix>_<name>`. */
  prefix: string;
  /** The fleet's shared metrics, named `wdr_<name>` (SHARED_PREFIX) with the `wdr_service` label telling services apart. */
  shared: MetricFactory;
  httpRequests: Counter<'method' | 'route' | 'outcome' | 'status_class'>;
  httpDuration: Histogram<'method' | 'route' | 'outcome'>;
  /**
   * Express middleware recording RED metrics by route template, never by raw path. Streaming
   * responses (`text/event-stream`) are counted but kept out of the latency histogram: their
   * "duration" is how long a tenant kept the stream open.
   */
  httpMiddleware: RequestHandler;
  /**
   * Export an opossum breaker as `wdr_breaker_state{dependency}` (0 closed, 1 half-open,
   * 2 open, read at scrape time) and `wdr_breaker_events_total{dependency, event}` (success,
   * failure, timeout, reject: refused while open, open, half_open, close).
   */
  watchBreaker(dependency: string, breaker: WatchedBreaker): void;
}

function outcomeOf(status: number): string {
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'success';
}

/** `2xx`, `3xx`, `4xx`, `5xx`: finer than `outcome` (429 and 404 both are client errors) without a label per code. */
function statusClassOf(status: number): string {
  return `${Math.min(5, Math.max(1, Math.floor(status / 100)))}xx`;
}

const BREAKER_EVENTS = {
  success: 'success',
  failure: 'failure',
  timeout: 'timeout',
  reject: 'reject',
  open: 'open',
  halfOpen: 'half_open',
  close: 'close',
} as const;

/**
 * One registry per service; every series carries `wdr_service="<service>"` (see SERVICE_LABEL). What
 * every service exports alike is named `wdr_<noun>` (SHARED_PREFIX: `wdr_http_requests_total`), what is
 * the service's own `<service>_<noun>` (`billing_ledger_tokens_charged_total`).
 */
export function createMetrics(service: string): ServiceMetrics {
  const prefix = service.replace(/-/g, '_');
  const registry = new Registry();
  registry.setDefaultLabels({ [SERVICE_LABEL]: service });
  collectDefaultMetricsWith(registry, new IdleAwareDelayMonitor());

  const httpRequests = new Counter({
    name: `${SHARED_PREFIX}_http_requests_total`,
    help: 'HTTP requests served, by route template, outcome and status class (2xx..5xx).',
    labelNames: ['method', 'route', 'outcome', 'status_class'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: `${SHARED_PREFIX}_http_request_duration_seconds`,
    help: 'HTTP request latency, by route template and outcome (event streams are not observed).',
    labelNames: ['method', 'route', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const httpMiddleware: RequestHandler = (req, res, next) => {
    const end = process.hrtime.bigint();
    res.on('finish', () => {
      // Route template (`/api/v1/data/requests/:id`), or a fixed bucket for unmatched paths.
      const routePath = (req.route as { path?: string } | undefined)?.path;
      const route = routePath ? `${req.baseUrl}${routePath}` : 'unmatched';
      const labels = { method: req.method, route, outcome: outcomeOf(res.statusCode) };
      httpRequests.inc({ ...labels, status_class: statusClassOf(res.statusCode) });
      if (!String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) {
        httpDuration.observe(labels, Number(process.hrtime.bigint() - end) / 1e9);
      }
    });
    next();
  };

  const breakers = new Map<string, WatchedBreaker>();
  const breakerEvents = new Counter({
    name: `${SHARED_PREFIX}_breaker_events_total`,
    help: 'Circuit breaker events of internal HTTP clients, by dependency and event (failure, reject = refused while open, open, ...).',
    labelNames: ['dependency', 'event'] as const,
    registers: [registry],
  });
  new Gauge({
    name: `${SHARED_PREFIX}_breaker_state`,
    help: 'Circuit breaker state of internal HTTP clients: 0 closed, 1 half-open, 2 open.',
    labelNames: ['dependency'] as const,
    registers: [registry],
    collect() {
      for (const [dependency, b] of breakers) this.set({ dependency }, b.opened ? 2 : b.halfOpen ? 1 : 0);
    },
  });
  const watchBreaker: ServiceMetrics['watchBreaker'] = (dependency, breaker) => {
    breakers.set(dependency, breaker);
    for (const [event, label] of Object.entries(BREAKER_EVENTS)) {
      // Zero from the start, so rate() and increase() see the first failure.
      breakerEvents.inc({ dependency, event: label }, 0);
      breaker.on(event as keyof typeof BREAKER_EVENTS, () => breakerEvents.inc({ dependency, event: label }));
    }
  };

  return {
    registry,
    prefix,
    httpRequests,
    httpDuration,
    httpMiddleware,
    watchBreaker,
    shared: factory(registry, SHARED_PREFIX),
    ...factory(registry, prefix),
  };
}

/** Metrics named `<prefix>_<name>` in `registry`; asking twice for one name (two consumers in one service) returns the same metric. */
function factory(registry: Registry, prefix: string): MetricFactory {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const existing = (name: string): any => registry.getSingleMetric(name);
  return {
    counter: (name, help, labels) =>
      existing(`${prefix}_${name}`) ?? new Counter({ name: `${prefix}_${name}`, help, labelNames: labels, registers: [registry] }),
    histogram: (name, help, labels, buckets) =>
      existing(`${prefix}_${name}`) ??
      new Histogram({
        name: `${prefix}_${name}`,
        help,
        labelNames: labels,
        registers: [registry],
        ...(buckets ? { buckets } : {}),
      }),
    gauge: (name, help, labels, collect) => {
      const found = existing(`${prefix}_${name}`);
      if (found && collect) found.collect = collect;
      return (
        found ?? new Gauge({ name: `${prefix}_${name}`, help, labelNames: labels, registers: [registry], ...(collect ? { collect } : {}) })
      );
    },
  };
}
