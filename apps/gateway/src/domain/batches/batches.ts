import { randomUUID } from 'node:crypto';
import { orchestratorApi, type CreateBatchBody } from '@wdr/contracts';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { Batch, CabinetBatchResponse } from '../../models/reads.js';
import { takeSubmissionRate } from '../limits/admission.js';
import { inputHashOf, requestIdFor, resolveRouteMode, validateIdempotencyKey, type SubmissionContext } from '../requests/data-requests.js';
import { normalizeSubmission } from '../validation/submission-body.js';
import { requireUuid } from '../reads/request-reads.js';

/** At least the spec's "up to 1,000 jobs": admitted all together or not at all. */
export const MAX_BATCH_JOBS = 1000;

/** One job as the orchestrator takes it: the same command as a single submission, minus ids. */
type BatchJobCommand = CreateBatchBody['jobs'][number];

/**
 * Validate every job with the single-submission rules; all problems are reported at once, each
 * under `jobs.<index>.<field>`.
 */
export function batchJobCommands(jobs: unknown): BatchJobCommand[] {
  if (!Array.isArray(jobs) || jobs.length < 1 || jobs.length > MAX_BATCH_JOBS) {
    throw new PublicError('VALIDATION_FAILED', 'The request body is not valid.', {
      details: [{ field: 'jobs', issue: `must be an array of 1..${MAX_BATCH_JOBS} jobs` }],
    });
  }
  const details: FieldIssue[] = [];
  const commands: BatchJobCommand[] = [];
  jobs.forEach((job, i) => {
    try {
      const { url, ...options } = normalizeSubmission(job);
      commands.push({
        url,
        route_mode: resolveRouteMode(options),
        proxy_type: options.proxy_type ?? null,
        max_credits: options.max_credits_per_request ?? null,
        options,
      });
    } catch (err) {
      if (!(err instanceof PublicError)) throw err;
      for (const d of err.details ?? [{ field: 'body', issue: err.message }]) {
        details.push({ field: `jobs.${i}${d.field === 'body' ? '' : `.${d.field}`}`, issue: d.issue });
      }
    }
  });
  if (details.length > 0) throw new PublicError('VALIDATION_FAILED', 'The request body is not valid.', { details: details.slice(0, 100) });
  return commands;
}

/**
 * Submit a batch. The batch id derives from (tenant, Idempotency-Key) like a request id, so a
 * repeated submission replays; without a key the server uses a fresh internal one (the client
 * API's rule), which makes every such submission new.
 */
export async function submitBatch(
  deps: Pick<GatewayDeps, 'env' | 'log' | 'metrics' | 'orchestrator' | 'redis'>,
  ctx: SubmissionContext,
  body: { jobs: unknown },
): Promise<CabinetBatchResponse> {
  const { tenant, idempotencyKey } = ctx;
  const tenantId = tenant.tenantId;
  validateIdempotencyKey(idempotencyKey);
  const jobs = batchJobCommands(body.jobs);
  // One submission for the rate limit. Not refused for concurrency: a batch is admitted whole and
  // its jobs queue in the fleet (a batch larger than the ceiling could never be admitted otherwise);
  // its jobs do count as active requests for later single submissions.
  await takeSubmissionRate(deps, tenant, ctx.setHeader);
  return callInternal(deps.orchestrator, orchestratorApi.createBatch, {
    body: {
      batch_id: requestIdFor(tenantId, `batch\u0000${idempotencyKey ?? randomUUID()}`),
      tenant_id: tenantId,
      input_hash: inputHashOf({ jobs }),
      jobs,
    },
    timeoutMs: 60_000,
  });
}

export async function getBatch(deps: Pick<GatewayDeps, 'orchestrator'>, tenantId: string, id: string): Promise<Batch> {
  return callInternal(deps.orchestrator, orchestratorApi.readBatch, { params: { id: requireUuid(id) }, query: { tenant_id: tenantId } });
}
