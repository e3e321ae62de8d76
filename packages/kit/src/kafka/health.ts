// A consumer's health: readiness (joined, fetching, not crashed for good) and what liveness reads.
import type { Consumer } from 'kafkajs';
import type { Logger } from '../log.js';

export interface ConsumerHandle {
  /** Joined its group, not crashed, not waiting out a dependency failure, and fetched within the last minute. */
  ready: () => boolean;
  /** What liveness needs (see consumer-liveness.ts): progress and whether kafkajs gave up on the consumer. */
  liveness: () => ConsumerLiveness;
  stop: () => Promise<void>;
}

export interface ConsumerLiveness {
  /**
   * When the consumer last completed something with the broker (ms since the epoch): joined its
   * group, completed a fetch (an idle one included), sent a heartbeat (also during a long batch)
   * or finished a batch. Its start counts as the first.
   */
  progressAt: number;
  /**
   * kafkajs crashed the consumer and will not restart it (`restart: false`), with the error (names
   * along its cause chain, the innermost message) and whether it is about permissions (authentication or authorization: a restart does not fix
   * those, the configuration does). undefined while kafkajs runs it or restarts it by itself.
   */
  gaveUp?: { error: string; permissions: boolean };
}

/** Joined, not crashed for good, and fetching (or busy with a batch) within the last minute; and what liveness reads. */
export function trackHealth(consumer: Consumer, log: Logger): { ready: () => boolean; liveness: () => ConsumerLiveness } {
  let joined = false;
  let gaveUp: ConsumerLiveness['gaveUp'];
  let lastFetchAt = 0;
  let progressAt = Date.now();
  let batches = 0;
  const progressed = () => {
    progressAt = Date.now();
  };
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
    progressed();
  });
  consumer.on(consumer.events.FETCH_START, () => {
    lastFetchAt = Date.now();
  });
  consumer.on(consumer.events.FETCH, progressed);
  consumer.on(consumer.events.HEARTBEAT, progressed);
  consumer.on(consumer.events.START_BATCH_PROCESS, () => {
    batches++;
  });
  consumer.on(consumer.events.END_BATCH_PROCESS, () => {
    batches--;
    lastFetchAt = Date.now();
    progressed();
  });
  consumer.on(consumer.events.CRASH, (e) => {
    log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
    if (!e.payload.restart) gaveUp = { error: describeCrash(e.payload.error), permissions: isPermissionError(e.payload.error) };
  });
  return {
    ready: () => joined && gaveUp === undefined && (batches > 0 || Date.now() - lastFetchAt < 60_000),
    liveness: () => ({ progressAt, ...(gaveUp ? { gaveUp } : {}) }),
  };
}

/** The error's name and its causes' (kafkajs wraps: `KafkaJSNonRetriableError < TypeError`), then the innermost message. */
function describeCrash(err: Error): string {
  const names: string[] = [];
  let e: { name?: unknown; message?: unknown; cause?: unknown } | undefined = err;
  let message = '';
  for (let depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    names.push(String(e.name));
    message = String(e.message ?? '');
  }
  return `${names.join(' < ')}: ${message.slice(0, 200)}`;
}

/** SASL authentication failed, or the broker refused an operation (topic, group, cluster ACLs), anywhere along the cause chain. */
function isPermissionError(err: unknown): boolean {
  for (
    let e = err as { name?: unknown; type?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === 'KafkaJSSASLAuthenticationError') return true;
    if (typeof e.type === 'string' && /AUTHORIZATION_FAILED|AUTHENTICATION|SASL/.test(e.type)) return true;
  }
  return false;
}
