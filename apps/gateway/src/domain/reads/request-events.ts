import { publicRequestEventOf, TERMINAL_REQUEST_STATUSES, type StoredRequestEvent } from '@wdr/contracts';

/**
 * A request event as the orchestrator stores it and publishes it on `request.lifecycle`
 * (`request.event_appended`): the internal record, before it is made public.
 */
export type { StoredRequestEvent };

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(TERMINAL_REQUEST_STATUSES);

/**
 * The public, provider-neutral form of one event: the history entry and the SSE `data`, identical.
 * The allow-list is the contracts' one, shared with webhook payloads: one list for every way out.
 */
export const publicEventOf = publicRequestEventOf;
