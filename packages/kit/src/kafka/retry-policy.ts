// What a consumer does with a handler's failure: retry with backoff, wait out a dependency, or dead-letter.
import { TOPICS, type TopicKey } from '@wdr/contracts';
import { isDependencyFailure } from '../dependency-failure.js';
import { PoisonMessageError } from './handlers.js';

/** Backoff while a dependency (database, broker, another service) is down: 0.5 s doubling to 15 s. */
const DEPENDENCY_BACKOFF = { firstMs: 500, maxMs: 15_000 };

/** Attempts before a failing message is dead-lettered: the topic's catalog policy unless overridden. */
export const maxAttemptsOf = (topic: TopicKey, override: number | undefined): number => override ?? TOPICS[topic].retry.maxAttempts;

/**
 * A handler failed on its `attempt`-th try: a poison message, or any other failure at the last
 * attempt, is dead-lettered; a dependency failure (see isDependencyFailure) is waited out without
 * using up an attempt and is never dead-lettered; anything else is retried.
 */
export function failureVerdict(err: unknown, attempt: number, maxAttempts: number): 'dead-letter' | 'wait-dependency' | 'retry' {
  if (err instanceof PoisonMessageError || (!isDependencyFailure(err) && attempt >= maxAttempts)) return 'dead-letter';
  return isDependencyFailure(err) ? 'wait-dependency' : 'retry';
}

/** The wait after the `failures`-th dependency failure in a row: 0.5 s doubling to 15 s. */
export const dependencyBackoffMs = (failures: number): number =>
  Math.min(DEPENDENCY_BACKOFF.firstMs * 2 ** Math.min(failures - 1, 8), DEPENDENCY_BACKOFF.maxMs);

/** The wait after a handler's failed `attempt`: the topic's backoff doubling, at most 10 s. */
export const retryBackoffMs = (backoffMs: number, attempt: number): number => Math.min(backoffMs * 2 ** Math.min(attempt - 1, 6), 10_000);
