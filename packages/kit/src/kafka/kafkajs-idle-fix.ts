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
 * request is in flight. Replaced by one timer per connection armed for the earliest deadline of the
 * requests in flight (30 s; a fetch's is its wait plus that), re-armed when it fires and something
 * is still in flight, cleared when the last answer arrives: a connection wakes when a request could have
 * timed out, not ten times a second. A request still times out at its deadline (within a few ms).
 *
 * 3. A consumer configured for batched fetches (`minBytes` above 1, a short `maxWaitTimeInMs`, as
 * webhook-dispatcher's 64 KB or 50 ms) asks the broker again every `maxWaitTimeInMs` while the
 * topics are quiet: 20 fetch round trips a second at rest, most of an idle dispatcher's CPU. After a
 * fetch that brought nothing, the next asks for any byte (`minBytes` 1) and waits up to
 * the idle fetch wait (kafkajs's own default, 5 s, or the group's `setFetchWaits`: the
 * service's KAFKA_FETCH_WAIT_MS): the broker answers as soon as one message is there,
 * so the first event after a quiet spell arrives no later than before, and once messages flow the
 * configured batching is back from the next fetch on.
 *
 * 4. The end of a flow. A batched consumer's fetch that filled (`minBytes` there before its wait ran
 * out) says messages are flowing: then the next fetch waits at most the group's flowing wait, where
 * one is set (`setFetchWaits`), so the last messages of a flow, too few to fill a fetch, wait that
 * long and not the whole batching window. A fetch that did not fill puts the window back: a trickle
 * still gathers for the full wait.
 *
 * Applied once per process, and only to the version it was written against: another version is
 * left alone (and `idleLoopFixApplied` says so, which a test checks).
 */
const FIXED_VERSION = '2.2.4';
const CHECK_PENDING_REQUESTS_INTERVAL = 10;
/** A fetch answered this much before its wait ran out was answered because it filled. */
const FILLED_MARGIN_MS = 10;
/** How long a fetch after an empty one may wait for its first byte (kafkajs's default maxWaitTimeInMs). */
export const IDLE_FETCH_WAIT_MS = 5_000;
/** A batched consumer group's fetch waits where not the defaults (see above, 3 and 4). */
export interface FetchWaits {
  /** After a fetch that brought nothing (default IDLE_FETCH_WAIT_MS). */
  idleMs?: number;
  /** After a fetch that filled (default: the configured wait, as after any other). */
  flowingMs?: number;
}
const fetchWaits = new Map<string, FetchWaits>();

/** The waits of a batched consumer group's fetches (undefined: the defaults again). */
export function setFetchWaits(groupId: string, waits: FetchWaits | undefined): void {
  if (waits === undefined) fetchWaits.delete(groupId);
  else fetchWaits.set(groupId, waits);
}

interface ConsumerGroupLike {
  groupId: string;
  minBytes: number;
  maxWaitTime: number;
  /** The configured values, kept while an idle fetch has them replaced. */
  wdrBatchedFetch?: { minBytes: number; maxWaitTime: number };
  fetch(nodeId: string): Promise<{ isEmpty(): boolean }[]>;
}

interface InflightRequest {
  sentAt: number | null;
  requestTimeout: number;
  timeoutRequest(): void;
}

interface RequestQueueLike {
  enforceRequestTimeout: boolean;
  requestTimeoutIntervalId: NodeJS.Timeout | undefined;
  inflight: Map<number, InflightRequest>;
  isConnected(): boolean;
  destroy(): void;
  scheduleRequestTimeoutCheck(): void;
  throttledUntil: number;
  pending: unknown[];
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** The in-flight map of a queue: adding a request arms the queue's deadline timer. */
class DeadlineMap extends Map<number, InflightRequest> {
  constructor(
    private readonly queue: RequestQueueLike,
    entries: Iterable<[number, InflightRequest]>,
  ) {
    super(entries);
  }

  override set(key: number, value: InflightRequest): this {
    super.set(key, value);
    armDeadline(this.queue);
    return this;
  }

  override delete(key: number): boolean {
    const deleted = super.delete(key);
    // Nothing left in flight: nothing can time out, so nothing needs to wake the process.
    if (this.size === 0 && this.queue.requestTimeoutIntervalId) {
      clearTimeout(this.queue.requestTimeoutIntervalId);
      this.queue.requestTimeoutIntervalId = undefined;
    }
    return deleted;
  }
}

/** Arm the queue's timer for the earliest deadline in flight, unless it is armed already. */
function armDeadline(queue: RequestQueueLike): void {
  if (queue.requestTimeoutIntervalId || queue.inflight.size === 0) return;
  const now = Date.now();
  let earliest = Infinity;
  // `sentAt` is set just after the request joins the map: a missing one means "now".
  for (const r of queue.inflight.values()) earliest = Math.min(earliest, (r.sentAt ?? now) + r.requestTimeout);
  const timer = setTimeout(
    () => {
      queue.requestTimeoutIntervalId = undefined;
      const at = Date.now();
      queue.inflight.forEach((r) => {
        if (r.sentAt !== null && at - r.sentAt > r.requestTimeout) r.timeoutRequest();
      });
      if (queue.isConnected()) armDeadline(queue);
    },
    Math.max(1, earliest - now + 1),
  );
  // Like the interval it replaces, the timer alone does not keep the process alive.
  timer.unref();
  queue.requestTimeoutIntervalId = timer;
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
    if (!(this.inflight instanceof DeadlineMap)) this.inflight = new DeadlineMap(this, this.inflight);
    armDeadline(this);
  };
  const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupLike };
  // eslint-disable-next-line typescript/unbound-method -- kept to be called with the group as `this` (fetch.call below)
  const fetch = ConsumerGroup.prototype.fetch;
  ConsumerGroup.prototype.fetch = async function fetchAdaptively(this: ConsumerGroupLike, nodeId: string) {
    this.wdrBatchedFetch ??= { minBytes: this.minBytes, maxWaitTime: this.maxWaitTime };
    const batched = this.wdrBatchedFetch;
    if (batched.minBytes <= 1) return fetch.call(this, nodeId);
    const waits = fetchWaits.get(this.groupId);
    // Filled: asked for the batch's bytes and answered before its wait ran out (the broker holds
    // an unfilled fetch for the whole wait).
    const asked = { minBytes: this.minBytes, maxWaitTime: this.maxWaitTime, at: Date.now() };
    const batches = await fetch.call(this, nodeId);
    const quiet = batches.every((b) => b.isEmpty());
    const filled = !quiet && asked.minBytes > 1 && Date.now() - asked.at < asked.maxWaitTime - FILLED_MARGIN_MS;
    this.minBytes = quiet ? 1 : batched.minBytes;
    this.maxWaitTime = quiet
      ? Math.max(batched.maxWaitTime, waits?.idleMs ?? IDLE_FETCH_WAIT_MS)
      : filled && waits?.flowingMs !== undefined
        ? Math.min(batched.maxWaitTime, waits.flowingMs)
        : batched.maxWaitTime;
    return batches;
  };
  // eslint-disable-next-line typescript/unbound-method -- kept to be called with the queue as `this` (destroy.call below)
  const destroy = RequestQueue.prototype.destroy;
  RequestQueue.prototype.destroy = function destroyQueueTimers(this: RequestQueueLike) {
    destroy.call(this);
    this.requestTimeoutIntervalId = undefined;
  };
  applied = true;
  return true;
}

export function idleLoopFixApplied(): boolean {
  return applied;
}
