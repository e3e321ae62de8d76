import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ServiceMetrics {
  registry: Registry;
  prefix: string;
  httpRequests: Counter<'method' | 'route' | 'outcome'>;
  httpDuration: Histogram<'method' | 'route' | 'outcome'>;
  /** Express middleware recording RED metrics by route template, never by raw path. */
  httpMiddleware: RequestHandler;
  counter<L extends string>(name: string, help: string, labels: readonly L[]): Counter<L>;
  histogram<L extends string>(name: string, help: string, labels: readonly L[], buckets?: number[]): Histogram<L>;
  gauge<L extends string>(name: string, help: string, labels: readonly L[]): Gauge<L>;
}

function outcomeOf(status: number): string {
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'success';
}

/** One registry per service; metric names are `<service>_<noun>_total` / `_duration_seconds`. */
export function createMetrics(service: string): ServiceMetrics {
  const prefix = service.replace(/-/g, '_');
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  // The event-loop delay histogram samples every 500 ms instead of prom-client's 10 ms: each sample
  // is a wake-up of an otherwise idle process (at 10 ms that alone was about 0.6 % of a core per
  // process, measured; at 100 ms still a third of the fleet's idle CPU). A stall of 500 ms, the
  // WdrEventLoopLagHigh threshold, is always seen; shorter ones are seen in proportion to their length.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 500 });

  const httpRequests = new Counter({
    name: `${prefix}_http_requests_total`,
    help: 'HTTP requests served, by route template and outcome.',
    labelNames: ['method', 'route', 'outcome'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: `${prefix}_http_request_duration_seconds`,
    help: 'HTTP request latency, by route template and outcome.',
    labelNames: ['method', 'route', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const existing = (name: string): any => registry.getSingleMetric(name);

  const httpMiddleware: RequestHandler = (req, res, next) => {
    const end = process.hrtime.bigint();
    res.on('finish', () => {
      // Route template (`/api/v1/data/requests/:id`), or a fixed bucket for unmatched paths.
      const routePath = (req.route as { path?: string } | undefined)?.path;
      const route = routePath ? `${req.baseUrl}${routePath}` : 'unmatched';
      const labels = { method: req.method, route, outcome: outcomeOf(res.statusCode) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, Number(process.hrtime.bigint() - end) / 1e9);
    });
    next();
  };

  return {
    registry,
    prefix,
    httpRequests,
    httpDuration,
    httpMiddleware,
    // Asking twice for one name (two consumers in one service) returns the same metric.
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
    gauge: (name, help, labels) =>
      existing(`${prefix}_${name}`) ?? new Gauge({ name: `${prefix}_${name}`, help, labelNames: labels, registers: [registry] }),
  };
}

