import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { Readable } from 'node:stream';
import type { Method } from 'got';
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

/** A bytes answer (an endpoint answering BytesAnswer), still arriving: read `body` as a stream. */
export interface StreamedAnswer {
  /** The callee's Content-Type (application/octet-stream when it sent none). */
  contentType: string;
  /** The callee's Content-Length, when it sent one. */
  contentLength: number | undefined;
  /** The bytes as they arrive; fails (and is destroyed) when the callee stalls or the connection breaks. */
  body: Readable;
}

export interface StreamOptions extends CallOptions {
  /**
   * The longest the connection may sit without a byte moving once the answer began (a reader that
   * stopped reading stops it too): then the body fails. Default 30 s.
   */
  idleTimeoutMs?: number;
}

export interface ServiceClient {
  get<T>(path: string, opts?: CallOptions): Promise<T>;
  post<T>(path: string, body: unknown, opts?: CallOptions): Promise<T>;
  /**
   * GET a bytes answer as a stream: resolves once the callee's status and headers arrived (an error
   * status is thrown like `get`'s), so nothing of a large body is held whole by the caller.
   */
  stream(path: string, opts?: StreamOptions): Promise<StreamedAnswer>;
  /**
   * POST raw bytes (`application/octet-stream` unless `contentType` says otherwise, with their
   * Content-Length), written as they are, in order, never turned to text: the answer is JSON as for `post`.
   */
  postBytes<T>(path: string, body: readonly Buffer[], opts?: CallOptions & { contentType?: string }): Promise<T>;
  readonly breaker: CircuitBreaker<[CallSpec], unknown>;
}

interface CallSpec {
  method: Method;
  path: string;
  body?: unknown;
  opts: StreamOptions;
  /** Answer the body as a stream (StreamedAnswer) instead of parsed JSON. */
  stream?: boolean;
  /** A body of raw bytes (postBytes) instead of `body` as JSON. */
  bytes?: { parts: readonly Buffer[]; contentType: string };
  /** The caller's request id, taken when the call is made (sent as X-Request-Id). */
  requestId: string | undefined;
}

/** How often the breakers' failure windows move on: two buckets of this length make the 10 s window. */
const BREAKER_BUCKET_MS = 5_000;
let bucketClock: EventEmitter | undefined;

/**
 * One timer for every breaker of the process: opossum rotates each breaker's buckets on a timer of
 * its own unless it is given an emitter to follow, so a gateway with five clients woke five times
 * per bucket instead of once. Started with the first client; unref'd, it keeps no process alive.
 */
function breakerBucketClock(): EventEmitter {
  if (bucketClock) return bucketClock;
  const clock = new EventEmitter();
  // Every client of the process listens (tests build dozens): no leak warning for that.
  clock.setMaxListeners(0);
  setInterval(() => clock.emit('rotate'), BREAKER_BUCKET_MS).unref();
  bucketClock = clock;
  return clock;
}

/**
 * The one way services call each other synchronously: node:http (got for streamed reads) with short timeouts, behind an opossum
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

  const headersOf = async (spec: CallSpec): Promise<Record<string, string>> => ({
    ...(spec.requestId !== undefined ? { [REQUEST_ID_HEADER]: spec.requestId } : {}),
    ...(spec.opts.headers ?? {}),
    ...(opts.identity ? { authorization: `Bearer ${await opts.identity.tokenFor(opts.name)}` } : {}),
  });

  /** An answer of status >= 400, mapped: the callee's PublicError, or a platform fault. */
  const failure = (statusCode: number, headers: http.IncomingHttpHeaders, text: string): Error => {
    const body = (text.length > 0 ? safeJson(text) : undefined) as { code?: unknown; message?: unknown; details?: unknown } | undefined;
    // The callee refused this service's identity (no internal route answers 401 or 403 otherwise): a
    // platform fault (a key or a route's callers misconfigured), never the tenant's to see as such.
    if (statusCode === 401 || statusCode === 403) {
      return new PublicError('INTERNAL', `${opts.name} refused this service's identity (${statusCode}: ${String(body?.message ?? '')})`);
    }
    if (statusCode < 500 && body && PublicError.isCode(body.code)) {
      const retryAfter = Number(headers['retry-after']);
      return new PublicError(body.code, typeof body.message === 'string' ? body.message : body.code, {
        ...(Array.isArray(body.details) ? { details: body.details } : {}),
        // A refusal the callee asked to be retried later (429) keeps its Retry-After on the way out.
        ...(Number.isInteger(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      });
    }
    if (statusCode < 500) return new PublicError('INTERNAL', `${opts.name} rejected an internal call (${statusCode})`);
    return new DependencyUnavailableError(`${opts.name} answered ${statusCode}`);
  };

  const call = async (spec: CallSpec): Promise<unknown> => {
    if (spec.stream) return openStream(spec);
    const headers = await headersOf(spec);
    let response: JsonAnswer;
    try {
      response = await exchange(spec, headers);
    } catch (err) {
      throw new DependencyUnavailableError(`${opts.name} is unreachable`, err);
    }
    if (response.statusCode < 400) return response.body.length > 0 ? safeJson(response.body) : undefined;
    throw failure(response.statusCode, response.headers, response.body);
  };

  /**
   * One JSON call on node:http with the keep-alive pool: the body sent as JSON, the answer read
   * whole as text; the timeout bounds the whole exchange (connection, answer and body), as got's
   * `timeout.request` did. node:http directly rather than got, whose per-request machinery (options
   * normalisation, hooks, its stream and promise layers) cost more CPU than the rest of a small
   * internal call (measured in bench/README.md, 2026-11-26); streamed reads keep got.
   */
  const exchange = (spec: CallSpec, headers: Record<string, string>): Promise<JsonAnswer> =>
    new Promise((resolve, reject) => {
      const payload = spec.bytes ? undefined : spec.body !== undefined ? Buffer.from(JSON.stringify(spec.body)) : undefined;
      const bytesLength = spec.bytes?.parts.reduce((n, b) => n + b.length, 0);
      const query = spec.opts.searchParams
        ? new URLSearchParams(Object.entries(spec.opts.searchParams).map(([k, v]): [string, string] => [k, String(v)])).toString()
        : '';
      const timeoutMs = spec.opts.timeoutMs ?? defaultTimeout;
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(err);
      };
      const req = http.request(
        `${base}${spec.path}${query ? `?${query}` : ''}`,
        {
          method: spec.method,
          agent,
          headers: {
            ...headers,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
            ...(spec.bytes ? { 'content-type': spec.bytes.contentType, 'content-length': String(bytesLength) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', fail);
          res.on('close', () => {
            if (!res.complete) fail(new Error('the answer was cut short'));
          });
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
          });
        },
      );
      const timer = setTimeout(
        () => fail(Object.assign(new Error(`Timeout awaiting '${spec.method} ${spec.path}' for ${timeoutMs}ms`), { code: 'ETIMEDOUT' })),
        timeoutMs,
      );
      req.on('error', fail);
      if (spec.bytes) {
        // Each part written as it is (the socket takes them in order, paced by the callee's reading).
        for (const part of spec.bytes.parts) if (part.length > 0) req.write(part);
        req.end();
      } else req.end(payload);
    });

  /**
   * A bytes answer: resolved when the status and headers arrived; the body is the got stream, read
   * (and paced) by whoever pipes it. The status and headers must come within the call's timeout; after
   * that the body fails only when no byte moves for `idleTimeoutMs`.
   */
  const openStream = async (spec: CallSpec): Promise<StreamedAnswer> => {
    // got is loaded on the first streamed read only: most services never make one (idle memory).
    const [headers, { default: got }] = await Promise.all([headersOf(spec), import('got')]);
    const stream = got.stream(`${base}${spec.path}`, {
      method: 'GET',
      agent: { http: agent },
      ...(spec.opts.searchParams ? { searchParams: spec.opts.searchParams } : {}),
      headers,
      timeout: { response: spec.opts.timeoutMs ?? defaultTimeout, socket: spec.opts.idleTimeoutMs ?? 30_000 },
      retry: { limit: 0 },
      throwHttpErrors: false,
    });
    let response: http.IncomingMessage;
    try {
      response = await new Promise<http.IncomingMessage>((resolve, reject) => {
        stream.once('response', resolve);
        stream.once('error', reject);
      });
    } catch (err) {
      stream.destroy();
      throw new DependencyUnavailableError(`${opts.name} is unreachable`, err);
    }
    const statusCode = response.statusCode ?? 0;
    if (statusCode >= 400) {
      // An error answer is a small PublicError body: read at most 64 KiB of it.
      let text = '';
      try {
        for await (const chunk of stream) {
          text += (chunk as Buffer).toString('utf8');
          if (text.length > 65_536) break;
        }
      } catch {
        // The status decides; a body cut short maps like an unreadable one.
      } finally {
        stream.destroy();
      }
      throw failure(statusCode, response.headers, text);
    }
    const length = Number(response.headers['content-length']);
    return {
      contentType: response.headers['content-type'] ?? 'application/octet-stream',
      contentLength: Number.isSafeInteger(length) && length >= 0 ? length : undefined,
      body: stream,
    };
  };

  const breaker = new CircuitBreaker<[CallSpec], unknown>(call, {
    name: opts.name,
    timeout: false, // each call enforces its timeout itself
    errorThresholdPercentage: opts.breaker?.errorThresholdPercentage ?? 50,
    resetTimeout: opts.breaker?.resetTimeout ?? 5_000,
    volumeThreshold: opts.breaker?.volumeThreshold ?? 10,
    // The failure rate is judged over the last 10 s in two 5 s buckets: opossum rotates buckets on
    // a timer, so ten 1 s buckets (its default) woke every caller's process each second for nothing;
    // the timer is the process's one clock for every breaker (breakerBucketClock).
    // No per-second snapshot events and no latency percentiles: nothing reads them.
    rollingCountTimeout: 2 * BREAKER_BUCKET_MS,
    rollingCountBuckets: 2,
    rotateBucketController: breakerBucketClock(),
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
    stream: (path, o = {}) => fire({ method: 'GET', path, opts: o, requestId: currentRequestId(), stream: true }),
    postBytes: (path, parts, o = {}) => {
      const { contentType, ...rest } = o;
      return fire({
        method: 'POST',
        path,
        opts: rest,
        requestId: currentRequestId(),
        bytes: { parts, contentType: contentType ?? 'application/octet-stream' },
      });
    },
    breaker,
  };
}

interface JsonAnswer {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
