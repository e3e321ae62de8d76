import { randomUUID } from 'node:crypto';
import { orchestratorApi, type ExtractionErrorCode, type ExtractionJobRequested, type RecipeDefinition } from '@wdr/contracts';
import { callInternal, readStreamed, streamInternal } from '@wdr/kit/internal-call';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';
import type { ServiceClient } from '@wdr/kit/http-client';
import { enqueue, makeEnvelope, type HandlerContext } from '@wdr/kit/kafka';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { z } from 'zod';
import { Prisma, type ExtractionRun, type PrismaClient } from '../generated/prisma/client.js';
import { extract, ExtractionBudgetExceeded, type ExtractionBudget } from './dsl/extract.js';
import { validateOutput } from './dsl/schema.js';
import { DRIFT_ERROR_CODES, requestRepairIfDrifting, type RepairPolicy } from './repairs/request-repair.js';
import { createRunOnce, TERMINAL_RUN_STATUSES } from './runs.js';
import type { CpuTurns, TurnTicket } from './cpu-turns.js';

type Tx = Prisma.TransactionClient;

export interface RunDeps {
  db: PrismaClient;
  orchestrator: ServiceClient;
  log: Logger;
  metrics: ServiceMetrics;
  maxPageBytes: number;
  /** Output and time bounds of one run (EXTRACTION_MAX_OUTPUT_CHARS, EXTRACTION_MAX_MS). */
  budget?: ExtractionBudget;
  repair: RepairPolicy;
  /** The run's rules execute on its tenant's turn (cpu-turns.ts): another tenant's runs cannot hold it behind all of theirs. */
  turns: CpuTurns;
}

interface RunEnd {
  status: 'completed' | 'failed';
  error?: { code: ExtractionErrorCode; message: string; details?: FieldIssue[] };
  output?: Record<string, unknown>;
  warnings?: FieldIssue[];
}

/**
 * One `extraction.job_requested`: the page of the request reached a terminal state. A page that did
 * not complete fails the run (the page's own error stays on the request as page_error). Otherwise
 * the run moves to `running`, reads the stored page from the orchestrator by request id
 * (claim-check: pages never travel through Kafka), runs its version's rules and validates the
 * output against the version's field schema, and ends `completed` or `failed` exactly once (the
 * ending and the processed-event record commit together; a redelivered job finds the run terminal).
 * A drift failure (required fields missing, schema violation) of the recipe's active version may
 * request an automatic repair in that same transaction (repairs/request-repair.ts).
 */
export async function runExtraction(
  deps: RunDeps,
  tenantId: string,
  job: z.infer<typeof ExtractionJobRequested>,
  ctx: HandlerContext<Tx>,
): Promise<void> {
  // On its way to a turn at the thread from here (cpu-turns.ts): a tenant's next long run waits for it.
  const ticket = deps.turns.arrive(tenantId);
  try {
    await runArrived(deps, ticket, tenantId, job, ctx);
  } finally {
    ticket.leave();
  }
}

async function runArrived(
  deps: RunDeps,
  ticket: TurnTicket,
  tenantId: string,
  job: z.infer<typeof ExtractionJobRequested>,
  ctx: HandlerContext<Tx>,
): Promise<void> {
  // A redelivery after the run ended: its end (and the announcement written with it) committed already.
  if (await ctx.alreadyProcessed()) return;
  const run = await runFor(deps, tenantId, job);
  if (!run || (TERMINAL_RUN_STATUSES as readonly string[]).includes(run.status)) {
    await ctx.transaction(async () => {});
    return;
  }
  const pageStatus = job.page_status ?? 'completed';
  const end = pageStatus === 'completed' ? await extractPage(deps, ticket, run) : pageNotCompleted(pageStatus);
  // Deliveries of one job may run at once (the consumer takes several messages of a partition in
  // flight): each may extract, but only the one whose update finds the run not yet terminal ends it,
  // and only that one counts it and may request a repair.
  let endedHere = false as boolean;
  await ctx.transaction(async (tx) => {
    const ended = await tx.extractionRun.updateMany({
      where: { id: run.id, status: { notIn: [...TERMINAL_RUN_STATUSES] } },
      data: {
        status: end.status,
        pageStatus,
        error: end.error ? (end.error as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
        output: end.output ? (end.output as Prisma.InputJsonValue) : Prisma.DbNull,
        warnings: (end.warnings ?? []) as unknown as Prisma.InputJsonValue,
        finishedAt: new Date(),
      },
    });
    endedHere = ended.count === 1;
    // The announcement commits with the end, or neither does: the relay publishes it however this
    // process fares after the commit, and the orchestrator appends the request's extraction end once.
    if (endedHere) await announceEnd(tx, tenantId, job.request_id, end);
    if (endedHere && end.status === 'failed' && (DRIFT_ERROR_CODES as readonly string[]).includes(end.error?.code ?? '')) {
      await requestRepairIfDrifting(tx, deps.repair, deps.metrics, run);
    }
  });
  if (!endedHere) return;
  deps.metrics
    .counter('extraction_runs_total', 'Extraction runs ended, by outcome.', ['outcome'])
    .inc({ outcome: end.status === 'completed' ? 'completed' : (end.error?.code ?? 'failed').toLowerCase() });
}

/**
 * Announce the run's end to the orchestrator (`extraction.run_ended` on extraction.events), in the
 * transaction that ends the run: written to this service's outbox, published by its relay after
 * the commit (again after a crash between publish and mark; the orchestrator appends once). Only
 * the delivery whose update ended the run writes it, so each run is announced by one row.
 */
async function announceEnd(tx: Tx, tenantId: string, requestId: string, end: RunEnd): Promise<void> {
  await enqueue(
    tx,
    'extractionEvents',
    requestId,
    makeEnvelope('extractionEvents', 'extraction.run_ended', tenantId, {
      request_id: requestId,
      status: end.status,
      error: end.error ? { code: end.error.code.slice(0, 100), message: end.error.message.slice(0, 2000) } : null,
    }),
  );
}

/**
 * The run reserved at admission. A job may find none: the gateway creates the run only after the
 * orchestrator answered its create, and the page can be done first (a result-cache hit, a fast
 * page, a gateway slowed down between the two calls), or that second call was lost. The
 * run is then created from the job and from the request as the orchestrator stores it, with what
 * admission would have given it: the page origin (relative URLs resolve against it) and, for a
 * retry, the run of the retried request (`retried_from_run_id`). Both writers upsert by request
 * id with the same values, so whichever comes second answers the first one's run.
 */
async function runFor(
  deps: Pick<RunDeps, 'db' | 'orchestrator'>,
  tenantId: string,
  job: z.infer<typeof ExtractionJobRequested>,
): Promise<ExtractionRun | null> {
  const db = deps.db;
  const run = await db.extractionRun.findUnique({ where: { requestId: job.request_id } });
  if (run || !job.recipe_id) return run;
  const recipe = await db.recipe.findUnique({ where: { id: job.recipe_id } });
  const versionId = job.version_id ?? recipe?.activeVersionId ?? null;
  if (!recipe || recipe.tenantId !== tenantId || versionId === null) return null;
  // A request the orchestrator no longer has still gets its run (it fails reading the page, PAGE_UNAVAILABLE).
  const request = await callInternal(deps.orchestrator, orchestratorApi.readRequest, {
    params: { id: job.request_id },
    query: { tenant_id: tenantId },
  }).catch((err: unknown) => {
    if (err instanceof PublicError && err.code === 'NOT_FOUND') return undefined;
    throw err;
  });
  const source = request?.retried_from_id ? await db.extractionRun.findUnique({ where: { requestId: request.retried_from_id } }) : null;
  return createRunOnce(db, {
    id: randomUUID(),
    requestId: job.request_id,
    tenantId,
    recipeId: recipe.id,
    versionId,
    pageOrigin: originOf(request?.url),
    retriedFromRunId: source && source.tenantId === tenantId ? source.id : null,
    status: 'queued',
  });
}

function originOf(url: string | undefined): string | null {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
}

function pageNotCompleted(pageStatus: string): RunEnd {
  return {
    status: 'failed',
    error: {
      code: 'PAGE_NOT_COMPLETED',
      message: `The page fetch ended ${pageStatus}; there is no page to extract from (see page_error).`,
    },
  };
}

async function extractPage(deps: RunDeps, ticket: TurnTicket, run: ExtractionRun): Promise<RunEnd> {
  await deps.db.extractionRun.updateMany({
    where: { id: run.id, status: { notIn: [...TERMINAL_RUN_STATUSES] } },
    data: { status: 'running', startedAt: new Date() },
  });
  const version = await deps.db.recipeVersion.findUnique({ where: { id: run.versionId } });
  if (!version)
    return {
      status: 'failed',
      error: { code: 'RECIPE_VERSION_GONE', message: 'The recipe (or this version of it) was deleted before the page arrived.' },
    };

  let html: string;
  try {
    const page = await streamInternal(deps.orchestrator, orchestratorApi.requestResult, {
      params: { id: run.requestId },
      query: { tenant_id: run.tenantId, format: 'html' },
    });
    const tooLarge = (bytes: number): RunEnd => ({
      status: 'failed',
      error: { code: 'PAGE_TOO_LARGE', message: `The page is ${bytes} bytes; extraction takes at most ${deps.maxPageBytes}.` },
    });
    // Its length is known before a byte is read: a page too large is refused unread.
    if (page.contentLength !== undefined && page.contentLength > deps.maxPageBytes) {
      page.body.destroy();
      return tooLarge(page.contentLength);
    }
    const body = (await readStreamed(page)).body;
    if (body.length > deps.maxPageBytes) return tooLarge(body.length);
    html = body.toString('utf8');
  } catch (err) {
    // The page expired or is gone: nothing will bring it back. Anything else (the orchestrator is
    // down) is a dependency failure the consumer retries.
    if (err instanceof PublicError && (err.code === 'RESULT_EXPIRED' || err.code === 'NOT_FOUND' || err.code === 'RESULT_NOT_READY')) {
      return { status: 'failed', error: { code: 'PAGE_UNAVAILABLE', message: 'The fetched page is no longer stored; retry the request.' } };
    }
    throw err;
  }

  const definition = version.definition as unknown as RecipeDefinition;
  let started = process.hrtime.bigint();
  let outcome: ReturnType<typeof extract>;
  try {
    outcome = await ticket.run(() => {
      // The run's own time, not its wait for a turn.
      started = process.hrtime.bigint();
      return extract(definition, html, {
        ...(run.pageOrigin ? { pageUrl: run.pageOrigin } : {}),
        ...(deps.budget ? { budget: deps.budget } : {}),
      });
    });
  } catch (err) {
    // A recipe that expands past its budget on this page (nested `multiple` scopes): the run fails
    // for good, it is not retried (the same page and recipe would do the same again).
    if (err instanceof ExtractionBudgetExceeded) {
      deps.log.warn({ kind: err.kind, limit: err.limit }, 'extraction budget exceeded');
      return {
        status: 'failed',
        error: { code: 'EXTRACTION_BUDGET_EXCEEDED', message: `The recipe cannot be run on this page: ${err.message}.` },
      };
    }
    throw err;
  }
  deps.metrics
    .histogram(
      'extraction_duration_seconds',
      'Time to run a recipe over one page (parse, select, coerce).',
      [],
      [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    )
    .observe(Number(process.hrtime.bigint() - started) / 1e9);
  if (outcome.missing.length > 0) {
    return {
      status: 'failed',
      error: {
        code: 'REQUIRED_FIELDS_MISSING',
        message: `Required fields were not found on the page: ${outcome.missing.map((m) => m.field).join(', ')}.`,
        details: outcome.missing,
      },
      warnings: outcome.warnings,
    };
  }
  const violations = validateOutput(definition, outcome.data);
  if (violations.length > 0) {
    return {
      status: 'failed',
      error: { code: 'SCHEMA_VIOLATION', message: 'The extracted data does not match the recipe’s field schema.', details: violations },
    };
  }
  return { status: 'completed', output: outcome.data, warnings: outcome.warnings };
}
