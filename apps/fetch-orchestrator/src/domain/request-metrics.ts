import type { ServiceMetrics } from '@wdr/kit/metrics';

/**
 * How requests end, for SREs: how many reach each terminal state (by route mode, terminal stage and
 * error code) and how long from admission to that state (per route mode). Recorded by `finish()`,
 * the one place a request becomes terminal, once its transaction committed (`afterCommit`: the
 * consumers' and the render handlers' transactions know their commit), so a transaction that rolls
 * back and is retried counts once.
 */
export interface TerminalRecorder {
  record(r: { routeMode: string; createdAt: Date }, t: { status: string; terminalStage?: string; error?: Record<string, unknown> }): void;
}

let recorder: TerminalRecorder | undefined;
let httpFetches: ((outcome: string, seconds: number) => void) | undefined;

/**
 * Wire the service's metrics in (the app does, once); without it nothing is recorded (unit tests).
 * Also the HTTP stage's fetch duration (recordHttpFetch).
 */
export function recordTerminalStatesIn(metrics: ServiceMetrics): void {
  const fetchDuration = metrics.histogram(
    'http_fetch_duration_seconds',
    'HTTP stage: the fetch of the target (route, proxy exit, redirects, body), by outcome (completed, escalated to the browser, or the failure code).',
    ['outcome'],
    [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
  );
  httpFetches = (outcome, seconds) => fetchDuration.observe({ outcome }, seconds);
  const finished = metrics.counter(
    'requests_finished_total',
    'Requests that reached a terminal state, by route mode, outcome, terminal stage and error code.',
    ['route_mode', 'outcome', 'stage', 'code'],
  );
  const latency = metrics.histogram(
    'request_terminal_seconds',
    'Time from admission to the terminal state, by route mode and outcome.',
    ['route_mode', 'outcome'],
    [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 45, 90, 180, 600],
  );
  recorder = {
    record(r, t) {
      const code = typeof t.error?.['code'] === 'string' ? (t.error['code'] as string) : 'none';
      finished.inc({ route_mode: r.routeMode, outcome: t.status, stage: t.terminalStage ?? 'none', code });
      latency.observe({ route_mode: r.routeMode, outcome: t.status }, Math.max(0, (Date.now() - r.createdAt.getTime()) / 1000));
    },
  };
}

export function recordTerminal(
  r: { routeMode: string; createdAt: Date },
  t: { status: string; terminalStage?: string; error?: Record<string, unknown> },
): void {
  recorder?.record(r, t);
}

/**
 * One fetch of the HTTP stage, as `http_fetch_duration_seconds{outcome}`: `completed` (a page
 * that becomes the result), `escalated` (auto: handed to the browser), or the code the request
 * fails with (TARGET_TIMEOUT, TARGET_SERVER_ERROR, PROTECTION_NOT_PASSED, PROXY_UNAVAILABLE, ...).
 * Each fetch counts once, a redelivered job's fetch again: it is another fetch.
 */
export function recordHttpFetch(outcome: string, seconds: number): void {
  httpFetches?.(outcome, seconds);
}
