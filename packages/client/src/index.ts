import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './generated/openapi.js';

/**
 * The typed client of the public API: openapi-fetch over the types openapi-typescript generates
 * from the committed OpenAPI document (`@wdr/contracts`), so every path, parameter, body and answer
 * is checked by the compiler against the document the gateway serves. Plus `followEvents`, which
 * reads a request's Server-Sent Events and reconnects with `Last-Event-ID` until it is terminal.
 *
 *   const api = createWdrClient({ baseUrl: 'http://127.0.0.1:8080', apiKey });
 *   const { data, error } = await api.POST('/api/v1/data/requests', { body: { url, mode: 'http' } });
 */
export type { components, paths };
export type WdrClient = Client<paths>;
export type RequestEvent = components['schemas']['RequestEvent'];
export type RequestDetail = components['schemas']['RequestDetail'];
export type SubmissionResponse = components['schemas']['SubmissionResponse'];
export type PublicErrorBody = components['schemas']['PublicErrorBody'];

export interface WdrClientOptions {
  /** The gateway's origin, e.g. `http://127.0.0.1:8080` (paths carry `/api/v1`). */
  baseUrl: string;
  /** A Data API key (`X-API-Key`). */
  apiKey?: string;
  /** A cabinet token (`Authorization: Bearer`), for the Client API. */
  bearerToken?: string;
  /** Sent as `X-Request-Id` on every call (8..128 of `[A-Za-z0-9._-]`); the gateway makes one otherwise. */
  requestId?: string;
  headers?: Record<string, string>;
  fetch?: ClientOptions['fetch'];
}

export function createWdrClient(opts: WdrClientOptions): WdrClient {
  return createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/$/, ''),
    headers: credentialHeaders(opts),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

function credentialHeaders(opts: Pick<WdrClientOptions, 'apiKey' | 'bearerToken' | 'requestId' | 'headers'>): Record<string, string> {
  return {
    ...(opts.apiKey !== undefined ? { 'X-API-Key': opts.apiKey } : {}),
    ...(opts.bearerToken !== undefined ? { Authorization: `Bearer ${opts.bearerToken}` } : {}),
    ...(opts.requestId !== undefined ? { 'X-Request-Id': opts.requestId } : {}),
    ...(opts.headers ?? {}),
  };
}

/** The statuses after which a request's events end. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** A refusal of the API, with its stable code, HTTP status and request id. */
export class WdrApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: PublicErrorBody | undefined,
  ) {
    super(body ? `${status} ${body.code}: ${body.message} (request_id ${body.request_id})` : `HTTP ${status}`);
    this.name = 'WdrApiError';
  }
}

/**
 * Every event of a request, in order, each once, until the one that makes it `completed`,
 * `failed` or `cancelled`: reads `GET /api/v1/data/requests/{id}/events/stream` and reconnects
 * with `Last-Event-ID` when the stream ends early (its maximum duration, a dropped connection);
 * a 204 means the request is terminal with nothing after the last id. `lastEventId` resumes.
 */
export async function* followEvents(opts: {
  baseUrl: string;
  apiKey: string;
  id: string;
  lastEventId?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** Pause before reconnecting after a stream that ended without a terminal event. */
  reconnectMs?: number;
  /** Give up after this many reconnects in a row that brought no event. */
  maxEmptyReconnects?: number;
}): AsyncGenerator<RequestEvent> {
  const doFetch = opts.fetch ?? fetch;
  const url = `${opts.baseUrl.replace(/\/$/, '')}/api/v1/data/requests/${encodeURIComponent(opts.id)}/events/stream`;
  let last = opts.lastEventId;
  let empty = 0;
  for (;;) {
    const headers: Record<string, string> = { 'X-API-Key': opts.apiKey, Accept: 'text/event-stream' };
    if (last !== undefined) headers['Last-Event-ID'] = String(last);
    const res = await doFetch(url, { headers, ...(opts.signal ? { signal: opts.signal } : {}) });
    if (res.status === 204) return;
    if (!res.ok) throw new WdrApiError(res.status, (await res.json().catch(() => undefined)) as PublicErrorBody | undefined);
    let got = false;
    for await (const event of readEventStream(res)) {
      got = true;
      last = event.id;
      yield event;
      if (TERMINAL_STATUSES.has(event.status)) return;
    }
    empty = got ? 0 : empty + 1;
    if (empty > (opts.maxEmptyReconnects ?? 10)) throw new Error(`the event stream of ${opts.id} keeps ending without events`);
    await new Promise((r) => setTimeout(r, opts.reconnectMs ?? 500));
  }
}

/** The `data:` messages of a `text/event-stream` body, parsed as request events; comments skipped. */
async function* readEventStream(res: Response): AsyncGenerator<RequestEvent> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield JSON.parse(data) as RequestEvent;
    }
  }
}
