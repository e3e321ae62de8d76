// What a consumer's handlers are: their signature (typed by the event catalog), their context, and the poison error.
import type { CatalogEnvelope, EventType, TopicKey } from '@wdr/contracts';
import type { RawSql } from '../db.js';

/** Thrown by a handler for a message that can never succeed: it goes to the DLQ at once. */
export class PoisonMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonMessageError';
  }
}

export interface HandlerContext<Tx extends RawSql = RawSql> {
  topic: TopicKey;
  /**
   * Run `fn` in one database transaction together with recording this event as processed.
   * Returns false (and does not run `fn`) when the event was already processed.
   */
  transaction: (fn: (tx: Tx) => Promise<void>) => Promise<boolean>;
  /**
   * Record this event as processed and run `statements` with it in one transaction of the array
   * form (`$transaction([...])`: statements sent in turn, no interactive transaction). They must be
   * the service client's lazy statements (Prisma's `$queryRawUnsafe(...)` not yet awaited), or all
   * the consumer's PgSql statements (kit/pg-sql.ts; then one PgSql transaction), each safe on its
   * own to run after a crash (guarded by the state it changes). Returns their results,
   * or undefined when the event was already processed (then nothing of them committed).
   */
  writes: (statements: PromiseLike<unknown>[]) => Promise<unknown[] | undefined>;
  /** Cheap check before doing expensive I/O for a redelivered event. */
  alreadyProcessed: () => Promise<boolean>;
}

/**
 * What a handler may answer: nothing (it did its work), or `SKIPPED`: the event concerns nothing
 * here (no write, no call, nothing to record), so its offset may be committed lazily (a consumer's
 * `lazySkipCommitMs`): after a crash such events are read again and skipped again.
 */
export const SKIPPED = 'skipped' as const;
export type HandlerOutcome = void | typeof SKIPPED;

/** Handles the events of type E (any catalog type by default): their payload arrives parsed and typed. */
export type EventHandler<Tx extends RawSql = RawSql, E extends EventType = EventType> = (
  envelope: CatalogEnvelope<E>,
  ctx: HandlerContext<Tx>,
) => Promise<HandlerOutcome>;

/**
 * A consumer's handlers by event type: the handler of a type receives that type's payload, and a
 * type the catalog does not know is a compile error.
 */
export type EventHandlers<Tx extends RawSql = RawSql> = { [E in EventType]?: EventHandler<Tx, E> };

/** The handler of an event type named by a message (a string from the wire: any type, or none). */
export function handlerOf<Tx extends RawSql>(handlers: EventHandlers<Tx>, type: string): EventHandler<Tx> | undefined {
  return (handlers as Partial<Record<string, EventHandler<Tx>>>)[type];
}

export interface BatchContext<Tx extends RawSql = RawSql, E extends EventType = EventType> {
  topic: TopicKey;
  /**
   * Run `fn` in one database transaction together with recording every envelope of the batch as
   * processed (one statement). `fn` receives the envelopes not processed before, in their order,
   * each id once; when there are none it is not called. Returns what `fn` was given.
   */
  transaction: (fn: (tx: Tx, fresh: CatalogEnvelope<E>[]) => Promise<void>) => Promise<CatalogEnvelope<E>[]>;
  /**
   * The same on the consumer's node-postgres connections (its `sql`, kit/pg-sql.ts), for a handler
   * whose work is raw SQL only: Prisma's interactive transaction and raw-query path cost more CPU
   * than the statements. Present only when the consumer has `sql`.
   */
  transactionOnSql?: (fn: (tx: RawSql, fresh: CatalogEnvelope<E>[]) => Promise<void>) => Promise<CatalogEnvelope<E>[]>;
  /** The request id an envelope's message carried (`x-request-id`), for the rows its handling writes (enqueueMany's `requestId`). */
  requestIdOf: (envelope: CatalogEnvelope<E>) => string | undefined;
}

/**
 * Handles a run of consecutive messages of one event type at once (ordered consumers only). Its
 * effects must be what the type's single handler would have done for each envelope in turn, and
 * go through `ctx.transaction`: when a batch fails for any reason but a dependency failure, the
 * consumer rolls it back whole and runs the single handler on each message instead (with its
 * retries and its DLQ), so one bad message costs its batch the speed-up, never the others' effects.
 */
export type BatchHandler<Tx extends RawSql = RawSql, E extends EventType = EventType> = (
  envelopes: CatalogEnvelope<E>[],
  ctx: BatchContext<Tx, E>,
) => Promise<void>;

/** Batch handlers by event type; a type with a batch handler must have a single handler too (the fallback). */
export type EventBatchHandlers<Tx extends RawSql = RawSql> = { [E in EventType]?: BatchHandler<Tx, E> };

export function batchHandlerOf<Tx extends RawSql>(
  handlers: EventBatchHandlers<Tx> | undefined,
  type: string,
): BatchHandler<Tx> | undefined {
  return (handlers as Partial<Record<string, BatchHandler<Tx>>> | undefined)?.[type];
}
