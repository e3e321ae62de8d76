import type { components } from './openapi/types.js';

/**
 * The fleet's shared words, spelled once. Internal contracts (`internal/*`), the event catalog and
 * the services' internal routes build their `z.enum(...)` from these lists; the public names of the
 * same sets are the OpenAPI components (checked against them below, at compile time).
 */

/** How a submission is routed (`RequestMode` in the public API; `RouteMode` adds `mixed` for batches). */
export const ROUTE_MODES = ['direct', 'auto', 'browser', 'http', 'residential', 'residential_browser'] as const;
export type RouteModeName = (typeof ROUTE_MODES)[number];

/** The proxy network a request is priced and routed on (`ProxyNetworkType`). */
export const PROXY_NETWORK_TYPES = ['datacenter', 'residential', 'premium'] as const;
export type ProxyNetworkTypeName = (typeof PROXY_NETWORK_TYPES)[number];

/** The browser's resource policy (`ResourcePolicy`). */
export const RESOURCE_POLICIES = ['adaptive', 'compatible'] as const;
export type ResourcePolicyName = (typeof RESOURCE_POLICIES)[number];

/** Statuses of create and retry answers and of the list filter (`DataJobStatus`). */
export const REQUEST_STATUSES = ['pending', 'running', 'solving_captcha', 'completed', 'failed', 'cancelled'] as const;
export type RequestStatusName = (typeof REQUEST_STATUSES)[number];

/** Statuses a request detail can show (`DataVisibleStatus`): the six above plus two waiting ones. */
export const VISIBLE_REQUEST_STATUSES = [...REQUEST_STATUSES, 'waiting_for_page', 'queued'] as const;
export type VisibleRequestStatusName = (typeof VISIBLE_REQUEST_STATUSES)[number];

/** Where a request stops moving. */
export const TERMINAL_REQUEST_STATUSES = ['completed', 'failed', 'cancelled'] as const;

/** Batch statuses (`BatchStatus`). */
export const BATCH_STATUSES = ['pending', 'running', 'completed', 'partial', 'failed', 'cancelled'] as const;

/**
 * Batch status from its jobs' statuses (the orchestrator's from the pages, the gateway's from what
 * each job shows: an extraction job's readiness). Not every job terminal: `pending` while all are
 * pending, else `running`. All terminal: `completed` when all completed, `cancelled` when all were
 * cancelled, `failed` when none completed, `partial` when some completed and some did not.
 */
export function batchStatusOf(statuses: readonly string[]): (typeof BATCH_STATUSES)[number] {
  const terminal: readonly string[] = TERMINAL_REQUEST_STATUSES;
  if (statuses.length === 0) return 'pending';
  if (statuses.some((s) => !terminal.includes(s))) return statuses.every((s) => s === 'pending') ? 'pending' : 'running';
  const completed = statuses.filter((s) => s === 'completed').length;
  if (completed === statuses.length) return 'completed';
  if (statuses.every((s) => s === 'cancelled')) return 'cancelled';
  return completed === 0 ? 'failed' : 'partial';
}

/** Where a request's tokens are (`DataTokenState`). */
export const TOKEN_STATES = ['reserved', 'settlement_pending', 'settled', 'refunded'] as const;
export type TokenStateName = (typeof TOKEN_STATES)[number];

/** The token states a settlement ends in. */
export const SETTLED_TOKEN_STATES = ['settled', 'refunded'] as const;

/** The two execution stages of a request. */
export const STAGES = ['http', 'browser'] as const;
export type StageName = (typeof STAGES)[number];

/** How a stored result is read back: as fetched, or reduced to its text. */
export const RESULT_FORMATS = ['html', 'text'] as const;
export type ResultFormatName = (typeof RESULT_FORMATS)[number];

// Compile-time: each list is exactly its public OpenAPI counterpart (a drift fails `tsc`).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type VocabularyMatchesOpenApi = [
  Holds<Same<RouteModeName, components['schemas']['RequestMode']>>,
  Holds<Same<ProxyNetworkTypeName, components['schemas']['ProxyNetworkType']>>,
  Holds<Same<ResourcePolicyName, components['schemas']['ResourcePolicy']>>,
  Holds<Same<RequestStatusName, components['schemas']['DataJobStatus']>>,
  Holds<Same<VisibleRequestStatusName, components['schemas']['DataVisibleStatus']>>,
  Holds<Same<(typeof BATCH_STATUSES)[number], components['schemas']['BatchStatus']>>,
  Holds<Same<TokenStateName, components['schemas']['DataTokenState']>>,
];
