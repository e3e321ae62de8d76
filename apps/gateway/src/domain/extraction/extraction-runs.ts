import { extractorApi, type ExtractionRunView } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { DataJobStatus, ExtractionResult, ExtractionRunStatus, RequestDetail } from '../../models/index.js';

/**
 * Extraction requests seen by the tenant: the page fetch is the orchestrator's request, the
 * extraction is recipe-extractor's run of the same id. Top-level `status` is the run's
 * (waiting_for_page -> queued -> running -> completed | failed) and `page_status` the fetch's; the
 * page's own error moves to `page_error` / `page_user_error`.
 */
export interface ExtractionOptions {
  recipe_id: string;
  version_id?: string | undefined;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function extractionOptionsOf(detail: Pick<RequestDetail, 'request'>): ExtractionOptions | undefined {
  const e = (detail.request as { extraction?: ExtractionOptions | null }).extraction;
  return e && typeof e.recipe_id === 'string' ? e : undefined;
}

/** Check a submission's recipe (and version) before anything is created or charged. */
export async function validateExtraction(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  requestId: string,
  e: ExtractionOptions,
): Promise<void> {
  await callInternal(deps.extractor, extractorApi.createRun, {
    body: {
      validate_only: true,
      tenant_id: tenantId,
      request_id: requestId,
      recipe_id: e.recipe_id,
      ...(e.version_id ? { version_id: e.version_id } : {}),
    },
  });
}

/** Create the run of an admitted request (idempotent by request id). */
export async function createExtractionRun(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  requestId: string,
  e: ExtractionOptions,
  extra: { pageOrigin?: string; retriedFromRunId?: string } = {},
): Promise<ExtractionRunView | null> {
  return callInternal(deps.extractor, extractorApi.createRun, {
    body: {
      tenant_id: tenantId,
      request_id: requestId,
      recipe_id: e.recipe_id,
      ...(e.version_id ? { version_id: e.version_id } : {}),
      ...(extra.pageOrigin ? { page_origin: extra.pageOrigin } : {}),
      ...(extra.retriedFromRunId ? { retried_from_run_id: extra.retriedFromRunId } : {}),
    },
  });
}

/** The run of a request, or undefined when it has none (not an extraction request, or its run was never created). */
export async function runOf(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  requestId: string,
): Promise<ExtractionRunView | undefined> {
  try {
    return await callInternal(deps.extractor, extractorApi.readRun, { params: { requestId }, query: { tenant_id: tenantId } });
  } catch (err) {
    if (err instanceof PublicError && err.code === 'NOT_FOUND') return undefined;
    throw err;
  }
}

/** A run still waiting while its page is already terminal is queued: its job is on its way. */
export function visibleRunStatus(run: ExtractionRunView | undefined, pageStatus: string): ExtractionRunStatus {
  if (!run) return TERMINAL.has(pageStatus) ? (pageStatus === 'completed' ? 'queued' : 'failed') : 'waiting_for_page';
  if (run.status === 'waiting_for_page' && TERMINAL.has(pageStatus)) return 'queued';
  return run.status;
}

/** The request detail of an extraction request: the run's status and error on top, the page's beside them. */
export async function withExtraction(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  detail: RequestDetail,
): Promise<RequestDetail> {
  if (!extractionOptionsOf(detail)) return detail;
  return withRun(detail, await runOf(deps, tenantId, detail.id));
}

/**
 * A page of the request list shows extraction requests as their detail does (run status on top,
 * `result_kind`, `page_status`, `extraction`): one lookup of the page's runs.
 */
export async function withExtractions(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  items: RequestDetail[],
): Promise<RequestDetail[]> {
  const ids = items.filter((d) => extractionOptionsOf(d)).map((d) => d.id);
  if (ids.length === 0) return items;
  const { items: runs } = await callInternal(deps.extractor, extractorApi.lookupRuns, { body: { tenant_id: tenantId, request_ids: ids } });
  const byRequest = new Map(runs.map((r) => [r.request_id, r]));
  return items.map((d) => (extractionOptionsOf(d) ? withRun(d, byRequest.get(d.id)) : d));
}

function withRun(detail: RequestDetail, run: ExtractionRunView | undefined): RequestDetail {
  const status = visibleRunStatus(run, detail.status);
  const runError = run?.error ?? null;
  return {
    ...detail,
    status,
    error: runError ? { ...runError } : null,
    user_error: runError ? { code: runError.code, message: runError.message } : null,
    result_kind: 'extraction',
    page_status: detail.status as DataJobStatus,
    page_error: detail.error,
    page_user_error: detail.user_error,
    ...(run?.retried_from_run_id ? { retried_from_run_id: run.retried_from_run_id } : {}),
    ...(run
      ? {
          extraction: {
            run_id: run.run_id,
            recipe_id: run.recipe_id,
            version_id: run.version_id,
            status,
            error: runError,
            retried_from_run_id: run.retried_from_run_id,
          },
        }
      : {}),
  };
}

/** GET .../{id}/extraction: the run's output once it ended (409 RESULT_NOT_READY before). */
export async function extractionResultOf(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  detail: RequestDetail,
): Promise<ExtractionResult> {
  if (!extractionOptionsOf(detail)) throw new PublicError('NOT_FOUND', 'This request did not ask for extraction.');
  const run = await runOf(deps, tenantId, detail.id);
  if (!run || (run.status !== 'completed' && run.status !== 'failed')) {
    throw new PublicError('RESULT_NOT_READY', 'The extraction has not finished yet; its status is in the request detail.');
  }
  return {
    request_id: run.request_id,
    run_id: run.run_id,
    recipe_id: run.recipe_id,
    version_id: run.version_id,
    status: run.status,
    page_status: detail.status as DataJobStatus,
    error: run.error,
    data: run.data,
    warnings: run.warnings,
    retried_from_run_id: run.retried_from_run_id,
    created_at: run.created_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
  };
}
