import type { FieldRule, GenerationAttemptView, RecipeDefinition, RepairErrorCode } from '@wdr/contracts';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';
import type { HandlerContext } from '@wdr/kit/kafka';
import { Prisma, type PrismaClient, type RecipeRepair, type RecipeVersion } from '../../generated/prisma/client.js';
import { extract, ExtractionBudgetExceeded } from '../dsl/extract.js';
import { validateOutput } from '../dsl/schema.js';
import type { DslLimits } from '../dsl/validate.js';
import { attemptPlan, runAttempts, type AttemptDeps, type GenerationMethod, type Kept } from '../generation/attempts.js';
import { check } from '../generation/generate.js';
import { heuristicDefinition } from '../generation/heuristic.js';
import { LlmBill, type LlmBillingDeps } from '../generation/llm-billing.js';
import { samplePage, type SamplePageDeps } from '../generation/sample-page.js';
import { activate, saveVersion } from '../recipe-writes.js';

type Tx = Prisma.TransactionClient;

export interface RepairDeps extends AttemptDeps {
  db: PrismaClient;
  limits: DslLimits;
  maxAttempts: number;
  page: SamplePageDeps;
  billing: LlmBillingDeps;
}

interface RepairEnd {
  kept?: Kept;
  error?: { code: RepairErrorCode; message: string; details?: FieldIssue[] };
  attempts: GenerationAttemptView[];
  chargedTokens: number;
}

/**
 * One `extraction.repair_requested`: regenerate the failing version's rules on the page of the run
 * that triggered the repair (its stored page, read back from the orchestrator) with the same
 * generators as generation (the LLM when configured and the balance passes its preflight, the
 * heuristic as the last attempt), keeping the version's field schema: every field keeps its name,
 * type, required and multiple; only the rules of the fields that failed are replaced. A candidate
 * is kept when it extracts every required field of that page. The new version (origin `repair`,
 * with the reason and the version it repairs) is activated when that version is still the active
 * one, else saved as a draft. The repair row ends `succeeded` or `failed` exactly once, in the
 * transaction that records the message as processed; a redelivery finds it ended (the LLM bill is
 * idempotent by the repair id).
 */
export async function runRepair(deps: RepairDeps, tenantId: string, job: { repair_id: string }, ctx: HandlerContext<Tx>): Promise<void> {
  if (await ctx.alreadyProcessed()) return;
  const repair = await deps.db.recipeRepair.findUnique({ where: { id: job.repair_id } });
  if (!repair || repair.status !== 'queued' || repair.tenantId !== tenantId) {
    await ctx.transaction(async () => {});
    return;
  }
  const from = await deps.db.recipeVersion.findUnique({ where: { id: repair.fromVersionId } });
  const end: RepairEnd = from
    ? await regenerate(deps, repair, from)
    : { error: { code: 'RECIPE_VERSION_GONE', message: 'The version to repair was deleted.' }, attempts: [], chargedTokens: 0 };
  await ctx.transaction(async (tx) => {
    await tx.$queryRawUnsafe('SELECT 1 FROM recipes WHERE id = $1::uuid FOR UPDATE', repair.recipeId);
    const recipe = await tx.recipe.findUnique({ where: { id: repair.recipeId } });
    const current = await tx.recipeRepair.findUnique({ where: { id: repair.id } });
    if (!recipe || current?.status !== 'queued') return;
    let versionId: string | null = null;
    if (end.kept) {
      const v = await saveVersion(tx, recipe.id, end.kept.definition, {
        reason: `repaired:${end.kept.method}`,
        origin: 'repair',
        repairReason: repair.reason,
        repairedFromVersionId: repair.fromVersionId,
      });
      versionId = v.id;
      if (recipe.activeVersionId === repair.fromVersionId) await activate(tx, recipe.id, v.id);
    }
    await tx.recipeRepair.update({
      where: { id: repair.id },
      data: {
        status: end.kept ? 'succeeded' : 'failed',
        versionId,
        method: end.kept?.method ?? null,
        error: end.error ? (end.error as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
        attempts: end.attempts as unknown as Prisma.InputJsonValue,
        chargedTokens: end.chargedTokens,
        finishedAt: new Date(),
      },
    });
  });
  deps.metrics
    .counter('recipe_repairs_total', 'Automatic recipe repairs carried out, by outcome.', ['outcome'])
    .inc({ outcome: end.kept ? 'succeeded' : (end.error?.code ?? 'failed').toLowerCase() });
}

async function regenerate(deps: RepairDeps, repair: RecipeRepair, from: RecipeVersion): Promise<RepairEnd> {
  const old = from.definition as unknown as RecipeDefinition;
  let page: { html: string; url: string | undefined };
  try {
    page = await samplePage(deps.page, repair.tenantId, { requestId: repair.triggerRequestId });
  } catch (err) {
    if (err instanceof PublicError && err.code === 'VALIDATION_FAILED') {
      return {
        error: { code: 'PAGE_UNAVAILABLE', message: 'The failing page is no longer stored; a repair cannot be verified without it.' },
        attempts: [],
        chargedTokens: 0,
      };
    }
    throw err;
  }
  let now: ReturnType<typeof extract>;
  try {
    now = extract(old, page.html, page.url ? { pageUrl: page.url } : {});
  } catch (err) {
    // The version expands past the run budget on the failing page: that is what needs repairing.
    if (!(err instanceof ExtractionBudgetExceeded)) throw err;
    now = { data: {}, missing: [{ field: 'definition', issue: err.message }], warnings: [] };
  }
  const violations = now.missing.length ? [] : validateOutput(old, now.data);
  if (now.missing.length === 0 && violations.length === 0) {
    return {
      error: { code: 'NOTHING_TO_REPAIR', message: 'The version extracts the failing page without issues now.' },
      attempts: [],
      chargedTokens: 0,
    };
  }
  // Optional fields that came out empty are repaired too when a candidate finds them.
  const issues = [...now.missing, ...violations, ...now.warnings];
  const broken = new Set(issues.map((i) => i.field.split(/[.[]/)[0]!));

  let plan: GenerationMethod[] = attemptPlan('auto', deps.llm !== undefined, deps.maxAttempts);
  let bill: LlmBill | undefined;
  if (plan.includes('llm')) {
    try {
      bill = await LlmBill.open(
        deps.billing,
        repair.tenantId,
        `repair:${repair.id}`,
        'recipe_repair',
        `LLM recipe repair, recipe ${repair.recipeId}`,
      );
    } catch (err) {
      // Without the balance for the model, the repair is still tried with the (free) heuristic.
      if (!(err instanceof PublicError && err.code === 'INSUFFICIENT_CREDITS')) throw err;
      plan = ['heuristic'];
    }
  }
  let result: { attempts: GenerationAttemptView[]; kept: Kept | undefined } = { attempts: [], kept: undefined };
  let charged = 0;
  try {
    result = await runAttempts(deps, {
      plan,
      prompt: repairPrompt(old, broken),
      html: page.html,
      previous: { definition: old, issues },
      heuristic: () =>
        heuristicDefinition(page.html, {
          prompt: old.fields.map((f) => f.name.replace(/_/g, ' ')).join(', '),
          maxRules: deps.limits.maxRules,
          maxSelectorsPerRule: deps.limits.maxSelectorsPerRule,
        }),
      check: (candidate) => check(deps.limits, keepingSchema(old, candidate, broken), page.html, page.url, false),
      bill,
    });
  } finally {
    if (bill) charged = await bill.settle(result.kept ? 'succeeded' : 'failed');
  }
  if (!result.kept) {
    return {
      error: {
        code: 'REPAIR_FAILED',
        message: `No regenerated rules extracted the failing page in ${result.attempts.length} attempt(s); the version stays as it is.`,
        details: result.attempts.flatMap((a) => a.issues.map((x) => ({ field: `attempts.${a.attempt}.${x.field}`, issue: x.issue }))),
      },
      attempts: result.attempts,
      chargedTokens: charged,
    };
  }
  return { kept: result.kept, attempts: result.attempts, chargedTokens: charged };
}

function repairPrompt(old: RecipeDefinition, broken: Set<string>): string {
  const schema = old.fields
    .map((f) => `${f.name} (${f.type}${f.required ? ', required' : ''}${f.multiple ? ', multiple' : ''})`)
    .join('; ');
  return `Repair this recipe: the page changed and these fields stopped extracting: ${[...broken].join(', ')}. Keep exactly these fields with the same names and types: ${schema}.`;
}

const isRule = (r: unknown): r is FieldRule => r !== null && typeof r === 'object' && typeof (r as { name?: unknown }).name === 'string';

/**
 * The failing definition with the rules of its broken fields taken from a candidate (a field of the
 * same name, else one whose name contains it or is contained in it), the field's schema (name,
 * type, required, multiple, description) kept as it was. What the candidate does not cover stays.
 */
export function keepingSchema(old: RecipeDefinition, candidate: unknown, broken: Set<string>): unknown {
  const rules = (
    Array.isArray((candidate as { fields?: unknown } | null)?.fields) ? (candidate as { fields: unknown[] }).fields : []
  ).filter(isRule);
  const similar = (name: string) => rules.find((r) => r.name === name) ?? rules.find((r) => r.name.includes(name) || name.includes(r.name));
  return {
    dsl_version: old.dsl_version,
    fields: old.fields.map((f) => {
      const c = broken.has(f.name) ? similar(f.name) : undefined;
      if (!c) return f;
      const { name: _name, type: _type, required: _required, multiple: _multiple, description: _description, ...how } = c;
      return Object.fromEntries(
        Object.entries({
          name: f.name,
          type: f.type,
          required: f.required,
          multiple: f.multiple,
          description: f.description,
          ...how,
        }).filter(([, v]) => v !== undefined),
      );
    }),
  };
}
