import type { AnyInternalEndpoint, BytesAnswer, InternalAnswer, InternalCallArgs } from '@wdr/contracts';
import type { CallOptions, ServiceClient, StreamedAnswer, StreamOptions } from './http-client.js';

/**
 * One typed call of an internal endpoint described in `@wdr/contracts` (`orchestratorApi`,
 * `ledgerApi`, `rendererApi`): the path comes from the endpoint's builder, the body and query are
 * typed by its schemas, the answer by its answer type. It goes through the given ServiceClient, so
 * the breaker, the timeouts and the PublicError mapping are the client's.
 *
 *   await callInternal(deps.orchestrator, orchestratorApi.readRequest, { params: { id }, query: { tenant_id } });
 */
export function callInternal<E extends AnyInternalEndpoint>(
  client: Pick<ServiceClient, 'get' | 'post'>,
  // A bytes endpoint is read with streamInternal, never parsed as JSON.
  endpoint: E & ([InternalAnswer<E>] extends [BytesAnswer] ? never : unknown),
  args: InternalCallArgs<E>,
): Promise<InternalAnswer<E>> {
  if (endpoint.answerKind === 'bytes') throw new TypeError(`${endpoint.route} answers bytes: read it with streamInternal`);
  if (endpoint.bodyKind === 'bytes') throw new TypeError(`${endpoint.route} takes bytes: send them with sendBytesInternal`);
  const { path, opts } = callOf(endpoint, args);
  return endpoint.method === 'GET'
    ? client.get<InternalAnswer<E>>(path, opts)
    : client.post<InternalAnswer<E>>(path, a(args).body ?? {}, opts);
}

/**
 * One call of an internal endpoint that answers bytes (`BytesAnswer`: its body is the bytes, with
 * Content-Type and Content-Length): resolves once the status and headers arrived, with the body as a
 * stream, so a large page passes through without being held whole. Error answers are thrown as by
 * callInternal. Pipe `body` on (stream.pipeline) or read it; whoever holds it must end or destroy it.
 *
 *   const page = await streamInternal(deps.orchestrator, orchestratorApi.requestResult, { params: { id }, query: { tenant_id, format } });
 */
export function streamInternal<E extends AnyInternalEndpoint & { answer?: BytesAnswer; method: 'GET' }>(
  client: Pick<ServiceClient, 'stream'>,
  endpoint: E,
  args: InternalCallArgs<E> & Pick<StreamOptions, 'idleTimeoutMs'>,
): Promise<StreamedAnswer> {
  if (endpoint.answerKind !== 'bytes') throw new TypeError(`${endpoint.route} answers JSON: call it with callInternal`);
  const { path, opts } = callOf(endpoint, args);
  return client.stream(path, { ...opts, ...(args.idleTimeoutMs !== undefined ? { idleTimeoutMs: args.idleTimeoutMs } : {}) });
}

/**
 * One call of an internal endpoint whose request body is bytes (`bodyKind: 'bytes'`): `body` is
 * sent as `application/octet-stream`, its parts in order, with their total as Content-Length and
 * the given headers (a digest); the answer is JSON, typed and mapped as by callInternal.
 *
 *   await sendBytesInternal(deps.orchestrator, renderUploadApi.renderJobUpload, { params, body: [page, text], headers });
 */
export function sendBytesInternal<E extends AnyInternalEndpoint & { method: 'POST' }>(
  client: Pick<ServiceClient, 'postBytes'>,
  endpoint: E,
  args: { params: InternalCallArgs<E>['params']; body: readonly Buffer[]; headers?: Record<string, string>; timeoutMs?: number },
): Promise<InternalAnswer<E>> {
  if (endpoint.bodyKind !== 'bytes') throw new TypeError(`${endpoint.route} takes JSON: call it with callInternal`);
  const { path, opts } = callOf(endpoint, { params: args.params, ...(args.timeoutMs !== undefined ? { timeoutMs: args.timeoutMs } : {}) });
  return client.postBytes<InternalAnswer<E>>(path, args.body, { ...opts, ...(args.headers ? { headers: args.headers } : {}) });
}

/** A bytes answer read whole (for callers that need the page in memory anyway, bounded by MAX_RESULT_BYTES). */
export async function readStreamed(answer: StreamedAnswer): Promise<{ contentType: string; body: Buffer }> {
  const chunks: Buffer[] = [];
  for await (const chunk of answer.body) chunks.push(chunk as Buffer);
  return { contentType: answer.contentType, body: Buffer.concat(chunks) };
}

interface LooseArgs {
  params?: Record<string, string>;
  body?: unknown;
  query?: Record<string, unknown>;
  timeoutMs?: number;
}

const a = (args: unknown) => args as LooseArgs;

function callOf(endpoint: AnyInternalEndpoint, args: unknown): { path: string; opts: CallOptions } {
  const { params, query, timeoutMs } = a(args);
  const path = endpoint.path(params ?? {});
  const opts: CallOptions = {};
  if (query !== undefined) opts.searchParams = searchParamsOf(query);
  if (timeoutMs !== undefined) opts.timeoutMs = timeoutMs;
  return { path, opts };
}

/** Query values as the URL takes them; absent (undefined) ones are left out. */
function searchParamsOf(query: Record<string, unknown>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw new TypeError(`query parameter ${k} must be a string, number or boolean`);
    out[k] = v;
  }
  return out;
}
