import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request id that follows one unit of work across the fleet: taken from (or given to) the
 * public HTTP request, sent on every internal call (`X-Request-Id`), carried by every Kafka message
 * produced while handling it (the `x-request-id` header; through the outbox too), and restored by
 * the consumer. Every log line written meanwhile carries it as `request_id` (see createLogger).
 */
export const REQUEST_ID_HEADER = 'x-request-id';

const VALID = /^[A-Za-z0-9._-]{8,128}$/;

/** The id when it is one we accept (8..128 of `[A-Za-z0-9._-]`), else undefined: a caller's text is never logged as is. */
export function validRequestId(value: unknown): string | undefined {
  return typeof value === 'string' && VALID.test(value) ? value : undefined;
}

const storage = new AsyncLocalStorage<{ requestId: string }>();

/** Run `fn` (and everything it starts) with this request id; without one, outside any. */
export function withRequestId<T>(requestId: string | undefined, fn: () => T): T {
  return requestId === undefined ? storage.exit(fn) : storage.run({ requestId }, fn);
}

/** The request id of the work in progress, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
