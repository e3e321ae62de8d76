import { PublicError } from './public-error.js';

/**
 * One answer, used by the Kafka consumer and the HTTP error mapping alike, to "did this fail
 * because something we depend on is down or overloaded, so the same work will succeed later?".
 * Such failures are retried without bound and never dead-letter a message; over HTTP they are a
 * 503 with Retry-After, never a 500.
 *
 * Recognised, anywhere along the `cause` chain (and Prisma's `meta.driverAdapterError`):
 * - an explicit DEPENDENCY_UNAVAILABLE (a breaker-guarded internal call, a service's own verdict);
 * - Prisma's connection, pool and transaction-start errors (P1001 unreachable, P1002 timed out,
 *   P1008 operation timed out, P1017 connection closed, P2024 pool timeout, P2028 transaction could
 *   not start or was closed by a timeout, P2034 write conflict or deadlock);
 * - the driver adapter's kinds for the same (DatabaseNotReachable, ConnectionClosed, SocketTimeout,
 *   TooManyConnections, TransactionAlreadyClosed, TransactionWriteConflict, TlsConnectionError);
 * - node-postgres and socket errors: ECONNREFUSED and its kin, "Connection terminated", a pool
 *   connect timeout, and SQLSTATE class 08 (connection), 53 (insufficient resources), 57P0x
 *   (server shutting down or starting), 40001/40P01 (serialization failure, deadlock);
 * - kafkajs errors it marks `retriable`, and its connection, timeout and retries-exhausted errors;
 * - opossum's open breaker (EOPENBREAKER) and its timeouts (ETIMEDOUT).
 */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2034']);
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TransactionAlreadyClosed',
  'TransactionWriteConflict',
  'TlsConnectionError',
]);
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EOPENBREAKER',
]);
const KAFKAJS_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSLockTimeout',
]);
const PG_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /connection is closed/i,
];

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  kind?: unknown;
  message?: unknown;
  retriable?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: unknown };
  originalError?: unknown;
}

function sqlStateTransient(code: string): boolean {
  return /^(08|53)/.test(code) || /^57P0[1-4]$/.test(code) || code === '40001' || code === '40P01';
}

function oneLevel(e: ErrorLike): boolean {
  if (e instanceof PublicError) return e.code === 'DEPENDENCY_UNAVAILABLE';
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && (PRISMA_CODES.has(code) || SOCKET_CODES.has(code))) return true;
  if (code && /^[0-9A-Z]{5}$/.test(code) && sqlStateTransient(code)) return true;
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  if (e.kind === 'postgres' && typeof (e as { code?: unknown }).code === 'string' && sqlStateTransient((e as { code: string }).code))
    return true;
  if (typeof e.name === 'string' && KAFKAJS_NAMES.has(e.name)) return true;
  if (typeof e.name === 'string' && e.name.startsWith('KafkaJS') && e.retriable === true) return true;
  if (typeof e.message === 'string' && PG_MESSAGES.some((re) => re.test(e.message as string))) return true;
  return false;
}

export function isDependencyFailure(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === null || typeof e !== 'object' || seen.has(e) || seen.size > 16) continue;
    seen.add(e);
    const el = e as ErrorLike;
    if (oneLevel(el)) return true;
    // A deliberate domain answer is never a dependency failure, whatever it wraps.
    if (e instanceof PublicError && e.code !== 'INTERNAL') return false;
    queue.push(el.cause, el.meta?.driverAdapterError, el.originalError);
  }
  return false;
}
