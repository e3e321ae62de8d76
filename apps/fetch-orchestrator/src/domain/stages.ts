import { makeEnvelope } from '@wdr/kit/kafka';
import type { Envelope, TopicKey } from '@wdr/contracts';

/**
 * Where a request's execution starts, by route mode. HTTP modes (and `auto`, which tries HTTP
 * first and escalates) run the orchestrator's own HTTP stage; `browser` and `residential_browser`
 * go to browser-renderer. The network the stage goes out through is the route's business
 * (domain/proxies/route.ts), decided when the stage starts.
 */
export type FirstStage = 'http' | 'browser';

export function firstStageOf(routeMode: string): FirstStage {
  return routeMode === 'browser' || routeMode === 'residential_browser' ? 'browser' : 'http';
}

/** The job message that starts a stored request. */
export function firstJobOf(row: { id: string; tenantId: string; routeMode: string }): { topic: TopicKey; key: string; envelope: Envelope } {
  return firstStageOf(row.routeMode) === 'browser' ? renderJobOf(row) : fetchJobOf(row);
}

/** The job message of the HTTP stage (local-runs.ts queues it for a claim handed back). */
export function fetchJobOf(row: { id: string; tenantId: string }): { topic: TopicKey; key: string; envelope: Envelope } {
  return {
    topic: 'fetchJobs',
    key: row.id,
    envelope: makeEnvelope('fetchJobs', 'fetch.job_requested', row.tenantId, { request_id: row.id }),
  };
}

export function renderJobOf(row: { id: string; tenantId: string }): { topic: TopicKey; key: string; envelope: Envelope } {
  return {
    topic: 'renderJobs',
    key: row.id,
    envelope: makeEnvelope('renderJobs', 'render.job_requested', row.tenantId, { request_id: row.id }),
  };
}
