import { makeEnvelope } from '@wdr/kit/kafka';
import type { Envelope, TopicKey } from '@wdr/contracts';
import type { Termination } from './requests.js';

/**
 * Where a request's execution starts, by route mode. HTTP modes (and `auto`, which tries HTTP
 * first and escalates) run the orchestrator's own HTTP stage; `browser` goes to browser-renderer.
 * `residential_browser` needs a residential route for the browser, which does not exist yet: it is
 * refused at once and refunded rather than billed at the residential tariff and run another way.
 */
export type FirstStage = 'http' | 'browser' | 'unavailable';

export function firstStageOf(routeMode: string): FirstStage {
  switch (routeMode) {
    case 'direct':
    case 'http':
    case 'residential':
    case 'auto':
      return 'http';
    case 'browser':
      return 'browser';
    default:
      return 'unavailable';
  }
}

/** The job message that starts a stored request, or undefined when its mode has no route. */
export function firstJobOf(row: { id: string; tenantId: string; routeMode: string }): { topic: TopicKey; key: string; envelope: Envelope } | undefined {
  switch (firstStageOf(row.routeMode)) {
    case 'http':
      return { topic: 'fetchJobs', key: row.id, envelope: makeEnvelope('fetchJobs', 'fetch.job_requested', row.tenantId, { request_id: row.id }) };
    case 'browser':
      return renderJobOf(row);
    case 'unavailable':
      return undefined;
  }
}

export function renderJobOf(row: { id: string; tenantId: string }): { topic: TopicKey; key: string; envelope: Envelope } {
  return { topic: 'renderJobs', key: row.id, envelope: makeEnvelope('renderJobs', 'render.job_requested', row.tenantId, { request_id: row.id }) };
}

/** A route the platform cannot provide: failed at once, refunded, with a code that says why. */
export function routeUnavailable(routeMode: string): Termination {
  return {
    status: 'failed',
    error: { code: 'ROUTE_UNAVAILABLE', message: `no ${routeMode} route is configured` },
    userError: {
      code: 'ROUTE_UNAVAILABLE',
      message: `The ${routeMode} mode needs a residential proxy route for the browser, which is not available; nothing was charged. Use mode browser.`,
    },
  };
}
