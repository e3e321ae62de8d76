import { createHash, randomUUID } from 'node:crypto';
import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../../app.js';
import type { CreateDataRequestBody, RequestDetail, RequestMode, SubmissionResponse } from '../../api/models.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Mode resolution of the spec: an explicit `mode` wins; otherwise `javascript` (default true)
 * chooses browser or http. Browser actions and debug artifacts need a browser, so they promote
 * HTTP routes to their browser equivalent.
 */
export function resolveRouteMode(body: Pick<CreateDataRequestBody, 'mode' | 'javascript' | 'browser_actions' | 'debug_artifacts'>): RequestMode {
  const mode: RequestMode = body.mode ?? (body.javascript === false ? 'http' : 'browser');
  const needsBrowser = (body.browser_actions?.length ?? 0) > 0 || body.debug_artifacts === true;
  if (!needsBrowser) return mode;
  switch (mode) {
    case 'direct':
    case 'http':
    case 'auto':
      return 'browser';
    case 'residential':
      return 'residential_browser';
    default:
      return mode;
  }
}

/** A request created under an idempotency key gets an id derived from (tenant, key): a retried create is a replay. */
export function requestIdFor(tenantId: string, idempotencyKey: string | undefined): string {
  if (idempotencyKey === undefined) return randomUUID();
  const h = createHash('sha256').update(`${tenantId}\u0000${idempotencyKey}`).digest('hex');
  // RFC 4122 layout, version 8 (custom), variant 10.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** Stable hash of the submitted body: same key + different body is an IDEMPOTENCY_CONFLICT. */
export function inputHashOf(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function validateIdempotencyKey(key: string | undefined): void {
  if (key === undefined) return;
  if (key.length < 8 || key.length > 200) {
    throw new PublicError('VALIDATION_FAILED', 'The Idempotency-Key header is not valid.', {
      details: [{ field: 'Idempotency-Key', issue: 'length must be 8..200' }],
    });
  }
}

export async function submitDataRequest(
  deps: GatewayDeps,
  tenantId: string,
  body: CreateDataRequestBody,
  idempotencyKey: string | undefined,
): Promise<SubmissionResponse> {
  validateIdempotencyKey(idempotencyKey);
  const { url, ...options } = body;
  return deps.orchestrator.post<SubmissionResponse>('/internal/v1/requests', {
    request_id: requestIdFor(tenantId, idempotencyKey),
    tenant_id: tenantId,
    url,
    route_mode: resolveRouteMode(body),
    proxy_type: body.proxy_type ?? null,
    max_credits: body.max_credits_per_request ?? null,
    options: {
      ...options,
      timeout_ms: body.timeout_ms ?? 45_000,
      geo_country: body.geo_country?.toUpperCase(),
    },
    input_hash: inputHashOf(body),
  });
}

export async function getDataRequest(deps: GatewayDeps, tenantId: string, id: string): Promise<RequestDetail> {
  if (!UUID_RE.test(id)) {
    throw new PublicError('VALIDATION_FAILED', 'The request id is not valid.', { details: [{ field: 'id', issue: 'must be a uuid' }] });
  }
  return deps.orchestrator.get<RequestDetail>(`/internal/v1/requests/${id}`, { searchParams: { tenant_id: tenantId } });
}
