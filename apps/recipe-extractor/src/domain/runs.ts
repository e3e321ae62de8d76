import { randomUUID } from 'node:crypto';
import type { CreateRunBody, ExtractionRunStatus, ExtractionRunView } from '@wdr/contracts';
import { isUniqueViolation } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import type { ExtractionRun, Prisma, PrismaClient } from '../generated/prisma/client.js';

export const TERMINAL_RUN_STATUSES = ['completed', 'failed'] as const;

export function runView(r: ExtractionRun): ExtractionRunView {
  return {
    run_id: r.id,
    request_id: r.requestId,
    recipe_id: r.recipeId,
    version_id: r.versionId,
    status: r.status as ExtractionRunStatus,
    page_status: r.pageStatus,
    error: (r.error as ExtractionRunView['error']) ?? null,
    data: r.status === 'completed' ? ((r.output as Record<string, unknown> | null) ?? null) : null,
    warnings: (r.warnings as ExtractionRunView['warnings'] | null) ?? [],
    retried_from_run_id: r.retriedFromRunId,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

const refuse = (field: string, issue: string) =>
  new PublicError('VALIDATION_FAILED', 'The extraction settings are not valid.', { details: [{ field, issue }] });

/**
 * The run of a request, created at admission: the recipe must be the tenant's, and the version
 * either the one named or the recipe's active one; the run then waits for its page. With
 * `validate_only` (before the request is created, so a bad recipe is refused before anything is
 * charged) nothing is written and the answer is null. Idempotent by request id: a replayed
 * submission answers the run it created first.
 */
export async function createRun(db: PrismaClient, enabled: boolean, cmd: CreateRunBody): Promise<ExtractionRunView | null> {
  const existing = await db.extractionRun.findUnique({ where: { requestId: cmd.request_id } });
  if (existing) {
    if (existing.tenantId !== cmd.tenant_id) throw new PublicError('NOT_FOUND', 'No such request.');
    return runView(existing);
  }
  if (!enabled) throw refuse('extraction', 'structured extraction is not enabled');
  const recipe = await db.recipe.findUnique({ where: { id: cmd.recipe_id } });
  if (!recipe || recipe.tenantId !== cmd.tenant_id) throw refuse('extraction.recipe_id', 'no such recipe');
  let versionId = recipe.activeVersionId;
  if (cmd.version_id !== undefined) {
    const v = await db.recipeVersion.findUnique({ where: { id: cmd.version_id } });
    if (!v || v.recipeId !== recipe.id) throw refuse('extraction.version_id', 'no such version of this recipe');
    versionId = v.id;
  }
  if (versionId === null)
    throw refuse('extraction.recipe_id', 'the recipe has no active version; activate one or name extraction.version_id');
  if (cmd.validate_only) return null;
  const row = await createRunOnce(db, {
    id: randomUUID(),
    requestId: cmd.request_id,
    tenantId: cmd.tenant_id,
    recipeId: recipe.id,
    versionId,
    pageOrigin: cmd.page_origin ?? null,
    status: 'waiting_for_page',
    retriedFromRunId: cmd.retried_from_run_id ?? null,
  });
  if (row.tenantId !== cmd.tenant_id) throw new PublicError('NOT_FOUND', 'No such request.');
  return runView(row);
}

/**
 * A request's run, created once: the gateway creates it once the request exists, and the
 * extraction job creates it when that call was lost, so both may try at the same moment (a page
 * fetched within milliseconds). Prisma's upsert reads, then inserts: the one that loses the race
 * on the request id gets the winner's row rather than a unique violation.
 */
export async function createRunOnce(db: PrismaClient, run: Prisma.ExtractionRunUncheckedCreateInput): Promise<ExtractionRun> {
  try {
    return await db.extractionRun.upsert({ where: { requestId: run.requestId }, update: {}, create: run });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return db.extractionRun.findUniqueOrThrow({ where: { requestId: run.requestId } });
  }
}

export async function readRun(db: PrismaClient, tenantId: string, requestId: string): Promise<ExtractionRunView> {
  const r = await db.extractionRun.findUnique({ where: { requestId } });
  if (!r || r.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No extraction run for this request.');
  return runView(r);
}

/** The tenant's runs of these requests (a page of the request list), in no particular order. */
export async function lookupRuns(db: PrismaClient, tenantId: string, requestIds: string[]): Promise<{ items: ExtractionRunView[] }> {
  if (requestIds.length === 0) return { items: [] };
  const rows = await db.extractionRun.findMany({ where: { requestId: { in: requestIds }, tenantId } });
  return { items: rows.map(runView) };
}
