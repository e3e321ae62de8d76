import { randomUUID } from 'node:crypto';
import { orchestratorApi, type CreateBatchBody } from '@wdr/contracts';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { Batch, CabinetBatchResponse } from '../../models/reads.js';
import { takeSubmissionRate } from '../limits/admission.js';
import { inputHashOf, requestIdFor, resolveRouteMode, validateIdempotencyKey, type SubmissionContext } from '../requests/data-requests.js';
import { normalizeSubmission } from '../validation/submission-body.js';
import { createExtractionRun, validateExtraction, type ExtractionOptions } from '../extraction/extraction-runs.js';
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
  deps: Pick<GatewayDeps, 'env' | 'extractor' | 'log' | 'metrics' | 'orchestrator' | 'redis'>,
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
  await validateJobExtractions(deps, tenantId, jobs);
  const created = await callInternal(deps.orchestrator, orchestratorApi.createBatch, {
    body: {
      batch_id: requestIdFor(tenantId, `batch\u0000${idempotencyKey ?? randomUUID()}`),
      tenant_id: tenantId,
      input_hash: inputHashOf({ jobs }),
      jobs,
    },
    timeoutMs: 60_000,
  });
  await createJobRuns(deps, tenantId, jobs, created);
  return created;
}

const extractionOf = (job: BatchJobCommand): ExtractionOptions | undefined => {
  const e = (job.options as { extraction?: ExtractionOptions | null }).extraction;
  return e && typeof e.recipe_id === 'string' ? e : undefined;
};

/**
 * A job's `extraction` is checked as a single submission's is (the recipe is the tenant's, the
 * version is its own or it has an active one, RECIPES_ENABLED), before anything is created or
 * charged: every refusal is reported at once under `jobs.<index>.extraction…`. Each distinct
 * recipe and version is asked once.
 */
async function validateJobExtractions(deps: Pick<GatewayDeps, 'extractor'>, tenantId: string, jobs: BatchJobCommand[]): Promise<void> {
  const asked = new Map<string, Promise<PublicError | undefined>>();
  const checks = jobs.map((job, i) => {
    const e = extractionOf(job);
    if (!e) return Promise.resolve(undefined);
    const key = `${e.recipe_id}\u0000${e.version_id ?? ''}`;
    let check = asked.get(key);
    if (!check) {
      check = validateExtraction(deps, tenantId, randomUUID(), e).then(
        () => undefined,
        (err: unknown) => {
          if (err instanceof PublicError && err.code === 'VALIDATION_FAILED') return err;
          throw err;
        },
      );
      asked.set(key, check);
    }
    return check.then((err) => ({ i, err }));
  });
  const details: FieldIssue[] = [];
  for (const r of await Promise.all(checks)) {
    if (!r?.err) continue;
    for (const d of r.err.details ?? [{ field: 'extraction', issue: r.err.message }]) {
      details.push({ field: `jobs.${r.i}.${d.field}`, issue: d.issue });
    }
  }
  if (details.length > 0) throw new PublicError('VALIDATION_FAILED', 'The request body is not valid.', { details: details.slice(0, 100) });
}

/**
 * The extraction run of every job that asked for one, as a single submission creates it once the
 * request exists (idempotent by request id, so a replayed batch answers the same runs; a call lost
 * here is made up by the extraction job, which creates its run itself).
 */
async function createJobRuns(
  deps: Pick<GatewayDeps, 'extractor'>,
  tenantId: string,
  jobs: BatchJobCommand[],
  created: CabinetBatchResponse,
): Promise<void> {
  const todo: (() => Promise<unknown>)[] = [];
  jobs.forEach((job, i) => {
    const e = extractionOf(job);
    const id = created.jobs[i]?.id;
    if (e && id) todo.push(() => createExtractionRun(deps, tenantId, id, e, { pageOrigin: new URL(job.url).origin }));
  });
  // A few at a time: a batch of 1,000 extraction jobs must not open 1,000 connections at once.
  for (let k = 0; k < todo.length; k += 20) await Promise.all(todo.slice(k, k + 20).map((run) => run()));
}

export async function getBatch(deps: Pick<GatewayDeps, 'orchestrator'>, tenantId: string, id: string): Promise<Batch> {
  return callInternal(deps.orchestrator, orchestratorApi.readBatch, { params: { id: requireUuid(id) }, query: { tenant_id: tenantId } });
}
