import type { components } from '@wdr/contracts';
import type { DataRequest } from '../../generated/prisma/client.js';
import { shownInputs } from './sealed-inputs.js';
import { publicStatusOf } from './terminal.js';

/** Create and retry answers; a retry (and its replays) also names its source. */
export type SubmissionResponse = components['schemas']['SubmissionResponse'] & { retried_from_id?: string };
export type RequestDetail = components['schemas']['RequestDetail'];

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A workflow run's `workflow_run` (absent on other requests). */
function workflowRunOf(r: DataRequest): { workflow_run?: components['schemas']['WorkflowRunOrigin'] } {
  if (!r.projectId || !r.environmentId || !r.workflowId || !r.workflowVersionId) return {};
  return {
    workflow_run: {
      project_id: r.projectId,
      environment_id: r.environmentId,
      workflow_id: r.workflowId,
      workflow_version_id: r.workflowVersionId,
    },
  };
}

export function submissionView(r: DataRequest, chargedTokens: number, replay: boolean): SubmissionResponse {
  return {
    id: r.id,
    url: r.urlOrigin,
    status: publicStatusOf(r.status),
    cached: r.cached,
    protected: r.protected,
    pricing_version: r.pricingVersion,
    route_mode: r.routeMode as SubmissionResponse['route_mode'],
    ...(r.proxyType ? { proxy_type: r.proxyType as NonNullable<SubmissionResponse['proxy_type']> } : {}),
    base_tokens: r.baseTokens,
    protected_tokens: r.protectedTokens,
    captcha_tokens: r.captchaTokens,
    quote: ((r.options as { admission_quote?: Record<string, unknown> | null }).admission_quote ?? null) as SubmissionResponse['quote'],
    created_at: r.createdAt.toISOString(),
    charged_tokens: chargedTokens,
    idempotent_replay: replay,
    ...(r.retriedFromId ? { retried_from_id: r.retriedFromId } : {}),
    ...workflowRunOf(r),
  };
}

/**
 * The request as the tenant submitted it, minus secrets: header and cookie values and the values
 * of browser actions (`fill`'s value, `type`'s text, `select`'s values, `press`'s key) are not echoed.
 */
function requestEcho(r: DataRequest): Record<string, unknown> {
  const { input_hash: _h, admission_quote: _q, ...rest } = shownInputs(r.options);
  return { url: r.urlOrigin, route_mode: r.routeMode, ...rest };
}

export function detailView(r: DataRequest): RequestDetail {
  return {
    id: r.id,
    batch_id: r.batchId,
    url: r.urlOrigin,
    status: r.status as RequestDetail['status'],
    cached: r.cached,
    protected: r.protected,
    pricing_version: r.pricingVersion,
    base_tokens: r.baseTokens,
    protected_tokens: r.protectedTokens,
    captcha_tokens: r.captchaTokens,
    captcha_type: r.captchaType === 'captcha' ? 'captcha' : null,
    token_state: r.tokenState as RequestDetail['token_state'],
    request: requestEcho(r),
    debug_artifacts: (r.debugArtifacts as RequestDetail['debug_artifacts'] | null) ?? {},
    error: (r.error as Record<string, unknown> | null) ?? null,
    user_error: (r.userError as Record<string, unknown> | null) ?? null,
    result_meta: (r.resultMeta as Record<string, unknown> | null) ?? null,
    proxy_used: r.proxyUsed === 'platform' ? 'platform' : null,
    created_at: r.createdAt.toISOString(),
    started_at: iso(r.startedAt),
    finished_at: iso(r.finishedAt),
    result_expires_at: iso(r.resultExpiresAt),
    ...(r.retriedFromId ? { retried_from_id: r.retriedFromId } : {}),
    ...workflowRunOf(r),
  };
}
