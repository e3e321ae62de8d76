import { orchestratorApi, type ExtractionRunView, type RequestStatusName, type WorkflowOrigin } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { StreamedAnswer } from '@wdr/kit/http-client';
import { callInternal, streamInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { DataJobStatus, RequestDetail } from '../../models/index.js';
import type { RequestEventList, RequestPage, RetrySubmissionResponse } from '../../models/reads.js';
import { withSubmissionAdmission } from '../limits/admission.js';
import { inputHashOf, requestIdFor, validateIdempotencyKey, type SubmissionContext } from '../requests/data-requests.js';
import { publicEventOf, type StoredRequestEvent } from './request-events.js';
import {
  createExtractionRun,
  extractionOptionsOf,
  runOf,
  validateExtraction,
  visibleRunStatus,
  withExtractions,
} from '../extraction/extraction-runs.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path ids are uuids (spec, shared rules): anything else is a 422 before any lookup. */
export function requireUuid(id: string, field = 'id'): string {
  if (!UUID_RE.test(id)) {
    throw new PublicError('VALIDATION_FAILED', `The ${field} is not valid.`, { details: [{ field, issue: 'must be a uuid' }] });
  }
  return id.toLowerCase();
}

export const PAGE_LIMITS = { min: 1, max: 100, default: 50 } as const;
const JOB_STATUSES: readonly DataJobStatus[] = ['pending', 'running', 'solving_captcha', 'completed', 'failed', 'cancelled'];

export interface ListQuery {
  cursor?: string | undefined;
  limit?: number | undefined;
  status?: string | undefined;
}

/** A cursor page of the tenant's requests, newest first (keyset on created_at, id in the orchestrator). */
export async function listDataRequests(
  deps: Pick<GatewayDeps, 'extractor' | 'orchestrator'>,
  tenantId: string,
  q: ListQuery,
): Promise<RequestPage> {
  const limit = q.limit ?? PAGE_LIMITS.default;
  if (!Number.isInteger(limit) || limit < PAGE_LIMITS.min || limit > PAGE_LIMITS.max) {
    throw new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: [{ field: 'limit', issue: 'must be an integer 1..100' }],
    });
  }
  if (q.status !== undefined && !(JOB_STATUSES as readonly string[]).includes(q.status)) {
    throw new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: [{ field: 'status', issue: `must be one of ${JOB_STATUSES.join(', ')}` }],
    });
  }
  const page = await callInternal(deps.orchestrator, orchestratorApi.listRequests, {
    query: {
      tenant_id: tenantId,
      limit,
      // Checked against JOB_STATUSES above.
      ...(q.status !== undefined ? { status: q.status as RequestStatusName } : {}),
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
    },
  });
  // Extraction requests show their run's status, as in their detail (the filter is the page fetch's).
  return { ...page, data: await withExtractions(deps, tenantId, page.data as RequestDetail[]) } as RequestPage;
}

export interface StoredEventHistory {
  /** The request's visible status (an extraction request's readiness). */
  request_status: string;
  /** An extraction request: its history ends with `extraction.completed` / `extraction.failed`. */
  extraction?: boolean;
  events: StoredRequestEvent[];
}

/** The stored history of one request of the tenant after `afterId` (0: all of it). */
export async function storedEventsOf(
  deps: Pick<GatewayDeps, 'orchestrator'>,
  tenantId: string,
  id: string,
  afterId = 0,
): Promise<StoredEventHistory> {
  return callInternal(deps.orchestrator, orchestratorApi.requestEvents, {
    params: { id: requireUuid(id) },
    query: { tenant_id: tenantId, after: afterId },
  });
}

export async function listRequestEvents(deps: Pick<GatewayDeps, 'orchestrator'>, tenantId: string, id: string): Promise<RequestEventList> {
  const history = await storedEventsOf(deps, tenantId, id);
  return { data: history.events.map(publicEventOf) };
}

export type ResultFormat = 'html' | 'text';

/**
 * The stored page (claim-check in the orchestrator), as fetched or reduced to its text (derived
 * once and stored by the orchestrator), streamed: resolved once the orchestrator's status and
 * headers arrived; the bytes pass through as they come, never held whole here.
 */
export async function readRequestResult(
  deps: Pick<GatewayDeps, 'orchestrator'>,
  tenantId: string,
  id: string,
  format: string | undefined,
): Promise<StreamedAnswer> {
  const f = format ?? 'html';
  if (f !== 'html' && f !== 'text') {
    throw new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: [{ field: 'format', issue: 'must be one of html, text' }],
    });
  }
  return streamInternal(deps.orchestrator, orchestratorApi.requestResult, {
    params: { id: requireUuid(id) },
    query: { tenant_id: tenantId, format: f },
    // Until the orchestrator's headers: it loads the row (and, at the first text read, derives the text).
    timeoutMs: 30_000,
  });
}

/** Cancel a pending or running request of the tenant; cancelling a cancelled request answers it again. */
export async function cancelDataRequest(deps: Pick<GatewayDeps, 'orchestrator'>, tenantId: string, id: string): Promise<RequestDetail> {
  return callInternal(deps.orchestrator, orchestratorApi.cancelRequest, { params: { id: requireUuid(id) }, body: { tenant_id: tenantId } });
}

/**
 * Retry a failed request of the tenant as a new request with the persisted inputs. It is a
 * submission: it counts against the tenant's rate and concurrency limits like a create. Idempotency
 * works as for create: the new id derives from (tenant, key), and the "body" of a retry is its
 * source id, so the same key retrying the same request replays and anything else conflicts.
 *
 * An extraction request is failed when its run failed, even if its page completed: the gateway
 * reads the source's run and tells the orchestrator (which only knows the page). The recipe is
 * checked before anything is charged; the new request gets a new run that names the source's run
 * (`retried_from_run_id`), on the version the source named, else the recipe's active version now.
 */
export async function retryDataRequest(
  deps: Pick<GatewayDeps, 'db' | 'env' | 'extractor' | 'log' | 'metrics' | 'orchestrator' | 'redis'>,
  ctx: SubmissionContext,
  id: string,
): Promise<RetrySubmissionResponse> {
  const sourceId = requireUuid(id);
  validateIdempotencyKey(ctx.idempotencyKey);
  const tenantId = ctx.tenant.tenantId;
  const requestId = requestIdFor(tenantId, ctx.idempotencyKey);
  const source = (await callInternal(deps.orchestrator, orchestratorApi.readRequest, {
    params: { id: sourceId },
    query: { tenant_id: tenantId },
  })) as RequestDetail;
  const extraction = extractionOptionsOf(source);
  let sourceRun: ExtractionRunView | undefined;
  if (extraction) {
    sourceRun = await runOf(deps, tenantId, sourceId);
    const visible = visibleRunStatus(sourceRun, source.status);
    if (visible !== 'failed') {
      throw new PublicError('CONFLICT', `Only failed requests can be retried; this extraction request is ${visible}.`);
    }
    await validateExtraction(deps, tenantId, requestId, extraction);
  }
  const origin = await retriedRunOrigin(deps, tenantId, source);
  const created = await withSubmissionAdmission(deps, ctx.tenant, ctx.setHeader, (concurrency) =>
    callInternal(deps.orchestrator, orchestratorApi.retryRequest, {
      params: { id: sourceId },
      body: {
        tenant_id: tenantId,
        request_id: requestId,
        input_hash: inputHashOf({ retry_of: sourceId }),
        concurrency,
        ...(extraction ? { extraction_run_failed: true } : {}),
        ...(origin ? { origin } : {}),
      },
    }),
  );
  if (!extraction) return created;
  const run = await createExtractionRun(deps, tenantId, created.id, extraction, {
    pageOrigin: source.url,
    ...(sourceRun ? { retriedFromRunId: sourceRun.run_id } : {}),
  });
  return {
    ...created,
    status: visibleRunStatus(run ?? undefined, created.status),
    result_kind: 'extraction',
    page_status: created.status,
    ...(run?.retried_from_run_id ? { retried_from_run_id: run.retried_from_run_id } : {}),
  };
}

/**
 * A retried workflow run stays a run of its project (its webhooks, its run listing) and within
 * the project's budget cap as it is at the retry: the source's origin with the project's cap now.
 */
async function retriedRunOrigin(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  source: RequestDetail,
): Promise<WorkflowOrigin | undefined> {
  const run = source.workflow_run;
  if (!run) return undefined;
  const project = await deps.db.project.findFirst({ where: { id: run.project_id, tenantId }, select: { budgetCapTokens: true } });
  return {
    project_id: run.project_id,
    environment_id: run.environment_id,
    workflow_id: run.workflow_id,
    workflow_version_id: run.workflow_version_id,
    budget_cap_tokens: project?.budgetCapTokens ?? null,
  };
}
