import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '@wdr/kit/canonical-json';
import { orchestratorApi, type WorkflowOrigin } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type {
  CabinetRequestResponse,
  CreateDataRequestBody,
  ExtractionResult,
  RequestDetail,
  RequestMode,
  SubmissionResponse,
} from '../../models/index.js';
import {
  createExtractionRun,
  extractionResultOf,
  validateExtraction,
  visibleRunStatus,
  withExtraction,
} from '../extraction/extraction-runs.js';
import { withSubmissionAdmission, type SetHeader } from '../limits/admission.js';
import type { AuthenticatedTenant } from '../tenants/tenants.js';
import { normalizeSubmission } from '../validation/submission-body.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Mode resolution of the spec: an explicit `mode` wins; otherwise `javascript` (default true)
 * chooses browser or http. Browser actions and debug artifacts need a browser, so they promote
 * HTTP routes to their browser equivalent.
 */
export function resolveRouteMode(
  body: Pick<CreateDataRequestBody, 'mode' | 'javascript' | 'browser_actions' | 'debug_artifacts'>,
): RequestMode {
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

export function validateIdempotencyKey(key: string | undefined): void {
  if (key === undefined) return;
  if (key.length < 8 || key.length > 200) {
    throw new PublicError('VALIDATION_FAILED', 'The Idempotency-Key header is not valid.', {
      details: [{ field: 'Idempotency-Key', issue: 'length must be 8..200' }],
    });
  }
}

export interface SubmissionContext {
  tenant: AuthenticatedTenant;
  idempotencyKey: string | undefined;
  /** Where the admission limits write their RateLimit-* headers (on success and on refusal). */
  setHeader: SetHeader;
}

/** What a workflow run adds to a submission (domain/browser/workflow-runs.ts). */
export interface RunOfWorkflow {
  origin: WorkflowOrigin;
  /** Idempotency keys of runs live in their own space (per environment and workflow), apart from the tenant's submissions. */
  keySpace: string;
  /** The run's own input (the workflow and what the caller sent), not the version's definition: a replay after a new activation is a replay. */
  inputHash: string;
}

/**
 * Admit one submission: validate the body against the spec's table, apply the tenant's rate and
 * concurrency limits, and ask the orchestrator to create the request under an id derived from
 * (tenant, Idempotency-Key). The orchestrator stores the hash of the normalized body with the
 * request, so the same key with the same body (after defaults and normalization) is a free replay
 * and with another body an IDEMPOTENCY_CONFLICT, for as long as the request exists.
 * Cabinet submissions without the header get a server-generated key (a fresh request each time).
 */
export async function submitRequest(
  deps: Pick<GatewayDeps, 'env' | 'extractor' | 'log' | 'metrics' | 'orchestrator' | 'redis'>,
  ctx: SubmissionContext,
  body: unknown,
  surface: 'data' | 'client',
  run?: RunOfWorkflow,
): Promise<SubmissionResponse> {
  validateIdempotencyKey(ctx.idempotencyKey);
  const normalized = normalizeSubmission(body);
  const tenantId = ctx.tenant.tenantId;
  const given = run && ctx.idempotencyKey !== undefined ? `${run.keySpace}\u0000${ctx.idempotencyKey}` : ctx.idempotencyKey;
  const key = given ?? (surface === 'client' ? `server:${randomUUID()}` : undefined);
  const requestId = requestIdFor(tenantId, key);

  const { url, max_credits_per_request, ...options } = normalized;
  const extraction = normalized.extraction ?? undefined;
  // The rate and the concurrency ticket in one Redis round trip; the recipe is checked holding it.
  const created = await withSubmissionAdmission(deps, ctx.tenant, ctx.setHeader, async (concurrency) => {
    if (extraction) await validateExtraction(deps, tenantId, requestId, extraction);
    return callInternal(deps.orchestrator, orchestratorApi.createRequest, {
      body: {
        request_id: requestId,
        tenant_id: tenantId,
        url,
        route_mode: resolveRouteMode(normalized),
        proxy_type: normalized.proxy_type ?? null,
        max_credits: max_credits_per_request ?? null,
        options,
        input_hash: run?.inputHash ?? inputHashOf(normalized),
        concurrency,
        ...(run ? { origin: run.origin } : {}),
      },
    });
  });
  if (!extraction) return created;
  // After the request exists: a run created for a request that then failed admission would be an
  // orphan. If this call is lost, the extraction job creates the run itself (recipe-extractor).
  const extractionRun = await createExtractionRun(deps, tenantId, created.id, extraction, { pageOrigin: new URL(url).origin });
  // The top-level status tracks the extraction's readiness, as in the detail (a replay included).
  return {
    ...created,
    status: visibleRunStatus(extractionRun ?? undefined, created.status),
    result_kind: 'extraction',
    page_status: created.status,
  };
}

/** The cabinet's view of a submission: the spec's Cabinet request response fields, nothing more. */
export function cabinetView(s: SubmissionResponse): CabinetRequestResponse {
  return {
    id: s.id,
    ...(s.url !== undefined ? { url: s.url } : {}),
    status: s.status,
    cached: s.cached,
    protected: s.protected,
    base_tokens: s.base_tokens,
    protected_tokens: s.protected_tokens,
    captcha_tokens: s.captcha_tokens,
    created_at: s.created_at,
    charged_tokens: s.charged_tokens,
    pricing_version: s.pricing_version,
    route_mode: s.route_mode,
    idempotent_replay: s.idempotent_replay,
    ...(s.result_kind !== undefined ? { result_kind: s.result_kind } : {}),
    ...(s.page_status !== undefined ? { page_status: s.page_status } : {}),
  };
}

export async function getDataRequest(
  deps: Pick<GatewayDeps, 'extractor' | 'orchestrator'>,
  tenantId: string,
  id: string,
): Promise<RequestDetail> {
  if (!UUID_RE.test(id)) {
    throw new PublicError('VALIDATION_FAILED', 'The request id is not valid.', { details: [{ field: 'id', issue: 'must be a uuid' }] });
  }
  const detail = await callInternal(deps.orchestrator, orchestratorApi.readRequest, { params: { id }, query: { tenant_id: tenantId } });
  return withExtraction(deps, tenantId, detail as RequestDetail);
}

/** GET /api/v1/data/requests/{id}/extraction. */
export async function getExtractionResult(
  deps: Pick<GatewayDeps, 'extractor' | 'orchestrator'>,
  tenantId: string,
  id: string,
): Promise<ExtractionResult> {
  if (!UUID_RE.test(id)) {
    throw new PublicError('VALIDATION_FAILED', 'The request id is not valid.', { details: [{ field: 'id', issue: 'must be a uuid' }] });
  }
  const detail = await callInternal(deps.orchestrator, orchestratorApi.readRequest, { params: { id }, query: { tenant_id: tenantId } });
  return extractionResultOf(deps, tenantId, detail as RequestDetail);
}
