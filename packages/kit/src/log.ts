import { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';
import { currentRequestId } from './request-context.js';

export type { Logger };

/**
 * Keys whose values never reach a log, at any depth (compared without case, `-` and `_`): credentials,
 * what a tenant sends a target (headers, cookies, action values, proxy settings) and whole bodies or URLs.
 */
const SECRET_KEYS = new Set(
  [
    'apiKey',
    'token',
    'password',
    'passwd',
    'secret',
    'authorization',
    'cookie',
    'cookies',
    'setCookie',
    'headers',
    'body',
    'rawBody',
    'url',
    'href',
    'proxy',
    'proxyUrl',
    'proxies',
    'value',
    'values',
    'fill',
    'text',
    'actions',
    'options',
    'json',
    'form',
    'searchParams',
    'username',
    'credentials',
    'pepper',
    'key',
    'privateKey',
    'signature',
  ].map((k) => normalise(k)),
);

/** Strings that look like a secret wherever they appear: our keys and tokens, webhook secrets, bearer credentials, a URL's userinfo. */
const SECRET_VALUE =
  /(wdr[a-z]?_[A-Za-z0-9_-]{8,}|whsec_[A-Za-z0-9+/=_-]{8,}|Bearer\s+\S+|Basic\s+\S+|[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]*@)/g;

const CENSOR = '[redacted]';
const MAX_DEPTH = 8;

function normalise(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/**
 * An error reduced to what is safe to log: its class, message, code, status and stack (and its
 * cause, reduced the same way). Never its enumerable extras: an HTTP client's error carries the
 * request's options (body, headers, URL) and the response.
 */
export function safeError(err: Error, depth = 0): Record<string, unknown> {
  const e = err as Error & { code?: unknown; status?: unknown; statusCode?: unknown; response?: { statusCode?: unknown } };
  const out: Record<string, unknown> = { type: err.constructor?.name ?? 'Error', message: redactString(String(err.message)) };
  if (typeof e.code === 'string' || typeof e.code === 'number') out['code'] = e.code;
  const status = e.status ?? e.statusCode ?? e.response?.statusCode;
  if (typeof status === 'number') out['status'] = status;
  if (typeof err.stack === 'string') out['stack'] = redactString(err.stack);
  if (err.cause instanceof Error && depth < 3) out['cause'] = safeError(err.cause, depth + 1);
  if (err instanceof AggregateError && depth < 3)
    out['errors'] = err.errors.slice(0, 5).map((x: unknown) => (x instanceof Error ? safeError(x, depth + 1) : '[non-error]'));
  return out;
}

function redactString(s: string): string {
  return s.replace(SECRET_VALUE, CENSOR);
}

/**
 * A copy of a log line's fields with secrets censored at any depth, errors reduced (safeError).
 * An HTTP request or response object (pino-http's `req`/`res`) is left to the logger's serializers,
 * which keep only the method, the path and the status. Cycles are cut on the current path only.
 */
export function redactDeep(value: unknown, depth = 0, ancestors: object[] = []): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return safeError(value);
  if (value instanceof IncomingMessage || value instanceof ServerResponse) return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (ancestors.includes(value)) return '[circular]';
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  if (value instanceof Date) return value;
  const path = [...ancestors, value];
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => redactDeep(v, depth + 1, path));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(normalise(k)) && v !== undefined && v !== null ? CENSOR : redactDeep(v, depth + 1, path);
  }
  return out;
}

/**
 * Logs never carry keys, cookies, bodies or full URLs: every line's fields are walked before they
 * are written (redactDeep: secret-named keys at any depth, secret-looking strings, errors reduced
 * to safe fields), and callers log URLs through `originOf`. Every line written while a request or
 * a Kafka message is handled carries its `request_id` (request-context.ts). `destination`: where
 * lines go (tests capture them; stdout otherwise).
 */
export function createLogger(service: string, level: string = process.env['LOG_LEVEL'] ?? 'info', destination?: DestinationStream): Logger {
  const options = {
    name: service,
    level,
    base: { service },
    mixin: () => {
      const requestId = currentRequestId();
      return requestId === undefined ? {} : { request_id: requestId };
    },
    formatters: {
      log: (fields: Record<string, unknown>) => redactDeep(fields) as Record<string, unknown>,
    },
    hooks: {
      // The message itself: a secret-looking string in it is censored too.
      logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void) {
        method.apply(
          this,
          args.map((a) => (typeof a === 'string' ? redactString(a) : a)),
        );
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The origin of a URL (scheme, host, port): what may appear in logs and public responses. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '[invalid-url]';
  }
}
