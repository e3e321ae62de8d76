import { randomUUID } from 'node:crypto';
import { enqueue, makeEnvelope } from '@wdr/kit/kafka';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { ExtractionRun, Prisma } from '../../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

/** Failures that say the page no longer matches the rules (not a page that never came). */
export const DRIFT_ERROR_CODES = ['REQUIRED_FIELDS_MISSING', 'SCHEMA_VIOLATION'] as const;

export interface RepairPolicy {
  enabled: boolean;
  perWindow: number;
  windowHours: number;
  recentRuns: number;
  minFailures: number;
  failureRatio: number;
}

/**
 * Called in the transaction that ends a failed run (after its row is updated): decide whether the
 * recipe's active version is drifting and, if a repair is allowed, record it and ask for it
 * (`extraction.repair_requested` through the outbox), all in that transaction, so the decision is
 * durable and made once per run whatever Kafka redelivers. Conditions, in order: auto-repair on
 * for the deployment and the recipe; the run used the recipe's active version; no repair of that
 * version still queued; of its last `recentRuns` finished runs at least `minFailures` and at least
 * `failureRatio` failed with a drift error; and fewer than `perWindow` repairs of the recipe in the
 * last `windowHours`, or the recipe's continuous repair confirmed. The recipe row is locked first,
 * so concurrent failing runs count the window one after another.
 */
export async function requestRepairIfDrifting(tx: Tx, policy: RepairPolicy, metrics: ServiceMetrics, run: ExtractionRun): Promise<void> {
  if (!policy.enabled) return;
  const decided = (outcome: string) =>
    metrics.counter('recipe_repairs_requested_total', 'Repair decisions after a drift failure, by outcome.', ['outcome']).inc({ outcome });
  await tx.$queryRawUnsafe('SELECT 1 FROM recipes WHERE id = $1::uuid FOR UPDATE', run.recipeId);
  const recipe = await tx.recipe.findUnique({ where: { id: run.recipeId } });
  if (!recipe?.autoRepairEnabled || recipe.activeVersionId !== run.versionId) return;
  if (
    await tx.recipeRepair.findFirst({
      where: { recipeId: recipe.id, fromVersionId: run.versionId, status: 'queued' },
      select: { id: true },
    })
  )
    return decided('already_queued');

  const recent = await tx.extractionRun.findMany({
    where: { versionId: run.versionId, status: { in: ['completed', 'failed'] } },
    orderBy: [{ finishedAt: 'desc' }, { id: 'desc' }],
    take: policy.recentRuns,
    select: { status: true, error: true },
  });
  const drifted = recent.filter(
    (r) => r.status === 'failed' && (DRIFT_ERROR_CODES as readonly string[]).includes((r.error as { code?: string } | null)?.code ?? ''),
  );
  if (drifted.length < policy.minFailures || drifted.length / recent.length < policy.failureRatio) return decided('below_threshold');

  const since = new Date(Date.now() - policy.windowHours * 3_600_000);
  const inWindow = await tx.recipeRepair.count({ where: { recipeId: recipe.id, createdAt: { gte: since } } });
  const continuous = inWindow >= policy.perWindow;
  if (continuous && !recipe.continuousRepairConfirmedAt) return decided('window_exhausted');

  const id = randomUUID();
  await tx.recipeRepair.create({
    data: {
      id,
      recipeId: recipe.id,
      tenantId: recipe.tenantId,
      fromVersionId: run.versionId,
      triggerRunId: run.id,
      triggerRequestId: run.requestId,
      reason: reasonOf(
        drifted.map((r) => r.error as { code: string; details?: { field: string }[] }),
        recent.length,
      ),
      status: 'queued',
      continuous,
    },
  });
  await enqueue(
    tx,
    'extractionJobs',
    run.requestId,
    makeEnvelope('extractionJobs', 'extraction.repair_requested', recipe.tenantId, {
      repair_id: id,
      recipe_id: recipe.id,
      request_id: run.requestId,
    }),
  );
  decided(continuous ? 'requested_continuous' : 'requested');
}

/** `REQUIRED_FIELDS_MISSING in 2 of the last 3 runs (price, title)`. */
function reasonOf(errors: { code: string; details?: { field: string }[] }[], recentCount: number): string {
  const codes = [...new Set(errors.map((e) => e.code))].join(', ');
  const fields = [...new Set(errors.flatMap((e) => (e.details ?? []).map((d) => d.field)))].sort();
  return `${codes} in ${errors.length} of the last ${recentCount} runs${fields.length ? ` (${fields.slice(0, 20).join(', ')})` : ''}`;
}
