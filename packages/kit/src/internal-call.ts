import type { AnyInternalEndpoint, InternalAnswer, InternalCallArgs } from '@wdr/contracts';
import type { CallOptions, ServiceClient } from './http-client.js';

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
  endpoint: E,
  args: InternalCallArgs<E>,
): Promise<InternalAnswer<E>> {
  const a = args as { params?: Record<string, string>; body?: unknown; query?: Record<string, unknown>; timeoutMs?: number };
  const path = endpoint.path(a.params ?? {});
  const opts: CallOptions = {};
  if (a.query !== undefined) opts.searchParams = searchParamsOf(a.query);
  if (a.timeoutMs !== undefined) opts.timeoutMs = a.timeoutMs;
  return endpoint.method === 'GET' ? client.get<InternalAnswer<E>>(path, opts) : client.post<InternalAnswer<E>>(path, a.body ?? {}, opts);
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
