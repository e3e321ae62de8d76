import http from 'node:http';
import got, { type Method } from 'got';
import CircuitBreaker from 'opossum';
import { DependencyUnavailableError, PublicError } from './errors.js';
import type { ServiceMetrics } from './metrics.js';
import { currentRequestId, REQUEST_ID_HEADER } from './request-context.js';
import type { CallerCredentials } from './service-identity.js';

export interface CallOptions {
  searchParams?: Record<string, string | number | boolean>;
  headers?: Record<string, string>;
  /** Overrides the client's default per-call timeout. */
  timeoutMs?: number;
}

export interface ServiceClient {
  get<T>(path: string, opts?: CallOptions): Promise<T>;
  post<T>(path: string, body: unknown, opts?: CallOptions): Promise<T>;
  readonly breaker: CircuitBreaker<[CallSpec], unknown>;
}

interface CallSpec {
  method: Method;
  path: string;
  body?: unknown;
  opts: CallOptions;
  /** The caller's request id, taken when the call is made (sent as X-Request-Id). */
  requestId: string | undefined;
}

/**
 * The one way services call each other synchronously: got with short timeouts, behind an opossum
 * breaker. A PublicError body from the callee is rethrown as the same PublicError (so a 402 from the
 * ledger reaches the tenant as a 402); transport failures and 5xx become DependencyUnavailableError
 * and count towards opening the breaker; 4xx never do.
 */
export function createServiceClient(opts: {
  name: string;
  baseUrl: string;
  timeoutMs?: number;
  breaker?: Partial<Pick<CircuitBreaker.Options, 'errorThresholdPercentage' | 'resetTimeout' | 'volumeThreshold'>>;
  /** The caller's metrics: the breaker is exported as `<prefix>_breaker_state{dependency=<name>}` and `_breaker_events_total`. */
  metrics?: ServiceMetrics;
  /**
   * The calling service's identity: each call carries `Authorization: Bearer <token>` for the
   * audience `name` (the callee service), which the callee's gate verifies (service-identity.ts).
   */
  identity?: CallerCredentials;
}): ServiceClient {
  const base = opts.baseUrl.replace(/\/$/, '');
  const defaultTimeout = opts.timeoutMs ?? 5_000;
  // One keep-alive pool per callee: a call reuses an open connection instead of a TCP handshake
  // (internal calls are plain HTTP inside the cluster); the callee's Keep-Alive timeout hint closes idle ones.
  const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 128, maxFreeSockets: 32 });

  const call = async (spec: CallSpec): Promise<unknown> => {
    const authorization = opts.identity ? { authorization: `Bearer ${await opts.identity.tokenFor(opts.name)}` } : {};
    let response;
    try {
      response = await got(`${base}${spec.path}`, {
        method: spec.method,
        agent: { http: agent },
        ...(spec.body !== undefined ? { json: spec.body } : {}),
        ...(spec.opts.searchParams ? { searchParams: spec.opts.searchParams } : {}),
        headers: {
          ...(spec.requestId !== undefined ? { [REQUEST_ID_HEADER]: spec.requestId } : {}),
          ...(spec.opts.headers ?? {}),
          ...authorization,
        },
        timeout: { request: spec.opts.timeoutMs ?? defaultTimeout },
        retry: { limit: 0 },
        throwHttpErrors: false,
        responseType: 'text',
      });
    } catch (err) {
      throw new DependencyUnavailableError(`${opts.name} is unreachable`, err);
    }
    const parsed = response.body.length > 0 ? safeJson(response.body) : undefined;
    if (response.statusCode < 400) return parsed;
    const body = parsed as { code?: unknown; message?: unknown; details?: unknown } | undefined;
    // The callee refused this service's identity (no internal route answers 401 or 403 otherwise): a
    // platform fault (a key or a route's callers misconfigured), never the tenant's to see as such.
    if (response.statusCode === 401 || response.statusCode === 403) {
      throw new PublicError(
        'INTERNAL',
        `${opts.name} refused this service's identity (${response.statusCode}: ${String(body?.message ?? '')})`,
      );
    }
    if (response.statusCode < 500 && body && PublicError.isCode(body.code)) {
      const retryAfter = Number(response.headers['retry-after']);
      throw new PublicError(body.code, typeof body.message === 'string' ? body.message : body.code, {
        ...(Array.isArray(body.details) ? { details: body.details } : {}),
        // A refusal the callee asked to be retried later (429) keeps its Retry-After on the way out.
        ...(Number.isInteger(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      });
    }
    if (response.statusCode < 500) {
      throw new PublicError('INTERNAL', `${opts.name} rejected an internal call (${response.statusCode})`);
    }
    throw new DependencyUnavailableError(`${opts.name} answered ${response.statusCode}`);
  };

  const breaker = new CircuitBreaker<[CallSpec], unknown>(call, {
    name: opts.name,
    timeout: false, // got enforces the timeout itself
    errorThresholdPercentage: opts.breaker?.errorThresholdPercentage ?? 50,
    resetTimeout: opts.breaker?.resetTimeout ?? 5_000,
    volumeThreshold: opts.breaker?.volumeThreshold ?? 10,
    // The failure rate is judged over the last 10 s in two 5 s buckets: opossum rotates buckets on
    // a timer, so ten 1 s buckets (its default) woke every caller's process each second for nothing.
    // No per-second snapshot events and no latency percentiles: nothing reads them.
    rollingCountTimeout: 10_000,
    rollingCountBuckets: 2,
    enableSnapshots: false,
    rollingPercentilesEnabled: false,
    // Domain answers (4xx PublicErrors) are not failures of the dependency.
    errorFilter: (err: unknown) => err instanceof PublicError && !(err instanceof DependencyUnavailableError) && err.status < 500,
  });

  opts.metrics?.watchBreaker(opts.name, breaker);

  const fire = async <T>(spec: CallSpec): Promise<T> => {
    try {
      return (await breaker.fire(spec)) as T;
    } catch (err) {
      if (err instanceof PublicError) throw err;
      // opossum's own "Breaker is open" error.
      throw new DependencyUnavailableError(`${opts.name} is unavailable`, err);
    }
  };

  return {
    get: (path, o = {}) => fire({ method: 'GET', path, opts: o, requestId: currentRequestId() }),
    post: (path, body, o = {}) => fire({ method: 'POST', path, body, opts: o, requestId: currentRequestId() }),
    breaker,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
