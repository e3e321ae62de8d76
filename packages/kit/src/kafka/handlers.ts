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
