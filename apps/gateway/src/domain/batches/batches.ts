import { randomUUID } from 'node:crypto';
import {
  batchStatusOf,
  extractorApi,
  orchestratorApi,
  TERMINAL_REQUEST_STATUSES,
  type CreateBatchBody,
  type ExtractionRunView,
} from '@wdr/contracts';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { DataJobStatus } from '../../models/index.js';
import type { Batch, BatchJob, CabinetBatchJob, CabinetBatchResponse } from '../../models/reads.js';
import { takeSubmissionRate } from '../limits/admission.js';
import { inputHashOf, requestIdFor, resolveRouteMode, validateIdempotencyKey, type SubmissionContext } from '../requests/data-requests.js';
import { normalizeSubmission } from '../validation/submission-body.js';
import { createExtractionRun, validateExtraction, visibleRunStatus, type ExtractionOptions } from '../extraction/extraction-runs.js';
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
  const runs = await createJobRuns(deps, tenantId, jobs, created);
  const shown = created.jobs.map((j) => showJob(j, runs.get(j.id)));
  return { ...created, status: batchStatusOf(shown.map(aggregateStatusOf)), jobs: shown.map(({ job }) => job) };
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
): Promise<Map<string, ExtractionRunView>> {
  const runs = new Map<string, ExtractionRunView>();
  const todo: (() => Promise<unknown>)[] = [];
  jobs.forEach((job, i) => {
    const e = extractionOf(job);
    const id = created.jobs[i]?.id;
    if (e && id)
      todo.push(async () => {
        const run = await createExtractionRun(deps, tenantId, id, e, { pageOrigin: new URL(job.url).origin });
        if (run) runs.set(id, run);
      });
  });
  // A few at a time: a batch of 1,000 extraction jobs must not open 1,000 connections at once.
  for (let k = 0; k < todo.length; k += 20) await Promise.all(todo.slice(k, k + 20).map((run) => run()));
  return runs;
}

/**
 * GET /api/v1/data/batches/{id}: the orchestrator's view (the pages), with every extraction job
 * shown as its request detail shows it (its readiness on top, the page's status and error beside),
 * and the batch's status, counts and end aggregated from what the jobs show: a batch is not
 * `completed` while an extraction of it still runs.
 */
export async function getBatch(deps: Pick<GatewayDeps, 'extractor' | 'orchestrator'>, tenantId: string, id: string): Promise<Batch> {
  const batch = await callInternal(deps.orchestrator, orchestratorApi.readBatch, {
    params: { id: requireUuid(id) },
    query: { tenant_id: tenantId },
  });
  const ids = batch.jobs.filter((j) => j.result_kind === 'extraction').map((j) => j.id);
  if (ids.length === 0) return batch;
  const runs = new Map<string, ExtractionRunView>();
  // The lookup takes a page's worth of ids at a time.
  for (let k = 0; k < ids.length; k += 100) {
    const { items } = await callInternal(deps.extractor, extractorApi.lookupRuns, {
      body: { tenant_id: tenantId, request_ids: ids.slice(k, k + 100) },
    });
    for (const r of items) runs.set(r.request_id, r);
  }
  const shown = batch.jobs.map((j) => showJob(j, runs.get(j.id)));
  const jobs = shown.map(({ job }) => job);
  const statuses = jobs.map((j) => j.status);
  const allEnded = statuses.every((s) => ENDED.has(s));
  const lastEnd = shown.reduce<string | null>((max, { endedAt }) => (endedAt && (!max || endedAt > max) ? endedAt : max), null);
  return {
    ...batch,
    status: batchStatusOf(shown.map(aggregateStatusOf)),
    completed_jobs: statuses.filter((s) => s === 'completed').length,
    failed_jobs: statuses.filter((s) => s === 'failed').length,
    finished_at: allEnded ? lastEnd : null,
    jobs,
  };
}

const ENDED: ReadonlySet<string> = new Set(TERMINAL_REQUEST_STATUSES);

interface ShownJob<J> {
  job: J;
  /** Not started: a page still pending (an extraction job waiting for it included). */
  notStarted: boolean;
  endedAt: string | null;
}

/** The status a job counts with in its batch's status: `pending` until its page started, then what it shows. */
const aggregateStatusOf = ({ job, notStarted }: ShownJob<{ status: string }>): string => (notStarted ? 'pending' : job.status);

/**
 * One batch job as its detail shows it: an extraction job's top-level status is its run's
 * readiness (visibleRunStatus, as for single requests), `page_status` the page's; in a batch read
 * its `error` is the extraction's and `page_error` the page's.
 */
function showJob<J extends CabinetBatchJob | BatchJob>(job: J, run: ExtractionRunView | undefined): ShownJob<J> {
  const pageEnded = (job as { finished_at?: string | null }).finished_at ?? null;
  if (job.result_kind !== 'extraction') return { job, notStarted: job.status === 'pending', endedAt: pageEnded };
  const pageStatus = job.status as DataJobStatus;
  const status = visibleRunStatus(run, pageStatus);
  const shown = { ...job, status, page_status: pageStatus };
  if ('error' in job) {
    const runError =
      status === 'failed' ? (run?.error ?? { code: 'PAGE_NOT_COMPLETED', message: 'The page fetch did not complete.' }) : null;
    Object.assign(shown, { error: runError ? { code: runError.code, message: runError.message } : null, page_error: job.error });
  }
  return { job: shown, notStarted: pageStatus === 'pending', endedAt: ENDED.has(status) ? (run?.finished_at ?? pageEnded) : null };
}
