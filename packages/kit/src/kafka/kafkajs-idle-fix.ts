import { createRequire } from 'node:module';

/**
 * Two idle costs of kafkajs 2.2.4, per broker connection (a service holds four to eight):
 *
 * 1. The request queue spins on a 1 ms timer while it is
 * idle: `scheduleCheckPendingRequests` computes `throttledUntil - Date.now()` with `throttledUntil`
 * at -1 (never throttled), gets a negative delay and, with nothing pending, schedules the check
 * anyway, which schedules the next one (kafkajs issues #1556, #1704, #1751; the fix is not released).
 * That loop was most of an idle service's CPU (about 4 % of a core each). The fixed method: with
 * nothing pending and no throttle in force there is nothing to check (a new request calls the check
 * itself when it is queued); otherwise the same schedule as before.
 * 2. Request timeouts are enforced by a 100 ms interval per connection, awake whether or not a
 * request is in flight. Checked every second instead: a request's timeout (30 s; a fetch's is its
 * wait plus that) is then enforced within a second of expiring, not a tenth of one.
 *
 * Applied once per process, and only to the version it was written against: another version is
 * left alone (and `idleLoopFixApplied` says so, which a test checks).
 */
const FIXED_VERSION = '2.2.4';
const CHECK_PENDING_REQUESTS_INTERVAL = 10;

const REQUEST_TIMEOUT_CHECK_MS = 1_000;

interface RequestQueueLike {
  enforceRequestTimeout: boolean;
  requestTimeout: number;
  requestTimeoutIntervalId: NodeJS.Timeout | undefined;
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  isConnected(): boolean;
  destroy(): void;
  scheduleRequestTimeoutCheck(): void;
  throttledUntil: number;
  pending: unknown[];
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

const require = createRequire(import.meta.url);
let applied = false;

export function applyKafkajsIdleLoopFix(): boolean {
  if (applied) return true;
  const version = (require('kafkajs/package.json') as { version: string }).version;
  if (version !== FIXED_VERSION) return false;
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueLike };
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
    if (this.throttleCheckTimeoutId) return;
    let scheduleAt = this.throttledUntil - Date.now();
    if (this.pending.length > 0) scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL;
    else if (scheduleAt <= 0) return;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, scheduleAt);
  };
  RequestQueue.prototype.scheduleRequestTimeoutCheck = function scheduleRequestTimeoutCheck(this: RequestQueueLike) {
    if (!this.enforceRequestTimeout) return;
    this.destroy();
    this.requestTimeoutIntervalId = setInterval(
      () => {
        this.inflight.forEach((request) => {
          if (Date.now() - request.sentAt > request.requestTimeout) request.timeoutRequest();
        });
        if (!this.isConnected()) this.destroy();
      },
      Math.min(this.requestTimeout, REQUEST_TIMEOUT_CHECK_MS),
    );
  };
  applied = true;
  return true;
}

export function idleLoopFixApplied(): boolean {
  return applied;
}
