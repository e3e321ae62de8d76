import type { ConcurrencyCeiling, WorkflowOrigin } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { createRequest, replayOf, type AdmissionDeps } from './requests/create.js';
import { openInputs } from './requests/sealed-inputs.js';
import type { SubmissionResponse } from './requests/views.js';

export interface RetryCommand {
  source_id: string;
  tenant_id: string;
  /** Id of the new request (derived from the tenant's Idempotency-Key by the gateway). */
  request_id: string;
  input_hash: string;
  concurrency?: ConcurrencyCeiling;
  /** The gateway found the source's extraction run failed (see `retryable`). */
  extraction_run_failed?: boolean;
  /** The source's workflow origin with the project's budget cap now (a retried run stays in its project). */
  origin?: WorkflowOrigin;
}

/**
 * The origin of a retry: a workflow run's retry is a run of the same project, environment,
 * workflow and version, held within the project's budget cap the gateway sends. An origin that
 * names another scope than the source's is refused; a run retried without one keeps its scope
 * (webhooks, run listing) with no cap known here.
 */
export function retryOriginOf(
  source: { projectId: string | null; environmentId: string | null; workflowId: string | null; workflowVersionId: string | null },
  given: WorkflowOrigin | undefined,
): WorkflowOrigin | undefined {
  if (!source.projectId || !source.environmentId || !source.workflowId || !source.workflowVersionId) {
    if (given) throw new PublicError('CONFLICT', 'This request is not a workflow run.');
    return undefined;
  }
  if (
    given &&
    (given.project_id !== source.projectId ||
      given.environment_id !== source.environmentId ||
      given.workflow_id !== source.workflowId ||
      given.workflow_version_id !== source.workflowVersionId)
  ) {
    throw new PublicError('CONFLICT', "The origin given is not the source run's.");
  }
  return {
    project_id: source.projectId,
    environment_id: source.environmentId,
    workflow_id: source.workflowId,
    workflow_version_id: source.workflowVersionId,
    budget_cap_tokens: given?.budget_cap_tokens ?? null,
  };
}

/**
 * Which sources a retry accepts: a failed request; and an extraction request whose page completed
 * but whose extraction run failed (its visible status is the run's, `failed`). The run belongs to
 * recipe-extractor, so the gateway, which reads it, says so; the source must still be a completed
 * request that asked for extraction.
 */
export function retryable(source: { status: string; options: unknown }, extractionRunFailed: boolean): boolean {
  if (source.status === 'failed') return true;
  const extraction = (source.options as { extraction?: { recipe_id?: string } | null } | null)?.extraction;
  return extractionRunFailed && source.status === 'completed' && typeof extraction?.recipe_id === 'string';
}

/**
 * Retry a failed request as a new one with the persisted inputs (options, browser actions
 * included, and the sealed full URL, re-sealed under the new id). The source is read, never
 * written. Admission is that of a create: reserve, then store request + event + job at once.
 * The options keep `extraction`, so the new request hands its page to a new run when it ends.
 */
export async function retryRequest(deps: AdmissionDeps, cmd: RetryCommand): Promise<SubmissionResponse> {
  const existing = await deps.db.dataRequest.findUnique({ where: { id: cmd.request_id } });
  if (existing) return replayOf(existing, cmd);

  const source = await deps.db.dataRequest.findUnique({ where: { id: cmd.source_id } });
  if (!source || source.tenantId !== cmd.tenant_id) throw new PublicError('NOT_FOUND', 'No such request.');
  if (!retryable(source, cmd.extraction_run_failed === true)) {
    throw new PublicError('CONFLICT', `Only failed requests can be retried; this one is ${source.status}.`);
  }
  if (!source.targetSealed) {
    throw new PublicError('CONFLICT', 'The target URL of this request passed its retention; submit the request again.');
  }
  const { input_hash: _hash, admission_quote: _quote, max_credits_per_request: maxCredits, ...options } = openInputs(deps.sealer, source);
  const origin = retryOriginOf(source, cmd.origin);
  return createRequest(
    deps,
    {
      request_id: cmd.request_id,
      tenant_id: cmd.tenant_id,
      url: deps.sealer.open(source.targetSealed, source.id),
      route_mode: source.routeMode,
      proxy_type: typeof options['proxy_type'] === 'string' ? options['proxy_type'] : null,
      max_credits: typeof maxCredits === 'number' ? maxCredits : null,
      options,
      input_hash: cmd.input_hash,
      ...(cmd.concurrency ? { concurrency: cmd.concurrency } : {}),
      ...(origin ? { origin } : {}),
    },
    { retriedFromId: source.id },
  );
}
