import { GenerateInput, type FieldRule, type GenerationAttemptView, type GenerationView, type RecipeDefinition } from '@wdr/contracts';
import { parseOrThrow, PublicError, type FieldIssue } from '@wdr/kit/errors';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { extract, ExtractionBudgetExceeded } from '../dsl/extract.js';
import { validateOutput } from '../dsl/schema.js';
import { validateDefinition, type DslLimits } from '../dsl/validate.js';
import { idempotentWrite, replayOf, type IdempotencyClaim } from '../idempotency.js';
import { recipeOf, versionView } from '../recipe-views.js';
import { activate, saveVersion } from '../recipe-writes.js';
import { attemptPlan, runAttempts, type Checked, type Kept } from './attempts.js';
import { heuristicDefinition } from './heuristic.js';
import { LlmBill, type LlmBillingDeps } from './llm-billing.js';
import type { LlmGenerator } from './llm.js';
import { samplePage, type SamplePageDeps } from './sample-page.js';

export interface GenerationDeps {
  db: PrismaClient;
  limits: DslLimits;
  maxPromptLength: number;
  maxAttempts: number;
  /** Absent when no LLM is configured (no LLM_API_KEY): the heuristic only. */
  llm: LlmGenerator | undefined;
  page: SamplePageDeps;
  billing: LlmBillingDeps;
  log: Logger;
  metrics: ServiceMetrics;
}

const invalid = (field: string, issue: string) =>
  new PublicError('VALIDATION_FAILED', 'The generation request is not valid.', { details: [{ field, issue }] });

/**
 * Generate a version of a recipe from a prompt and its sample page, synchronously, in at most
 * `maxAttempts` attempts (generation_max_attempts). Each attempt's definition is held to DSL v1
 * and the configured limits, then run on the sample page: it is kept only when every required
 * field is found, the output matches its field schema and at least one field has a value. The LLM
 * gets the previous attempt's issues; the heuristic is deterministic, so it is tried once (in
 * `auto` with an LLM, as the last attempt). The kept definition is saved as a new version
 * (`reason: generated:<method>`), a draft unless `activate`. No attempt kept: 422
 * VALIDATION_FAILED with each attempt's issues (`attempts.N.…`), nothing saved. Under the write's idempotency key a
 * replay answers the stored result without generating again. A plan with model calls is billed
 * at billing-ledger (llm-billing.ts): preflight before the first call, the exact charge after the
 * last; the heuristic alone is free.
 */
export async function generateVersion(
  deps: GenerationDeps,
  tenantId: string,
  recipeId: string,
  claim: IdempotencyClaim,
  input: unknown,
): Promise<GenerationView> {
  const earlier = await replayOf(deps.db, tenantId, claim);
  if (earlier !== undefined) return earlier as GenerationView;
  const body = parseOrThrow(GenerateInput, input);
  if (body.prompt.length > deps.maxPromptLength)
    throw invalid('prompt', `is ${body.prompt.length} characters; max_prompt_length is ${deps.maxPromptLength}`);
  if (body.sample_url && body.sample_request_id) throw invalid('sample_request_id', 'give sample_url or sample_request_id, not both');
  const method = body.method ?? 'auto';
  if (method === 'llm' && !deps.llm) throw invalid('method', 'no LLM is configured for generation; use heuristic or auto');
  const recipe = await recipeOf(deps.db, tenantId, recipeId);
  const plan = attemptPlan(method, deps.llm !== undefined, deps.maxAttempts);
  // A plan with model calls is a paid LLM operation: its preflight refuses (402) before any call.
  // The operation id is the write's idempotency key, so a retried generation holds once.
  const bill = plan.includes('llm')
    ? await LlmBill.open(
        deps.billing,
        tenantId,
        `generation:${claim.key_id}`,
        'recipe_generation',
        `LLM recipe generation, recipe ${recipe.id}`,
      )
    : undefined;
  let found: Kept | undefined;
  let attempts: GenerationAttemptView[] = [];
  try {
    const page = await samplePage(
      deps.page,
      tenantId,
      body.sample_request_id ? { requestId: body.sample_request_id } : { url: body.sample_url ?? recipe.sampleUrl },
    );
    ({ attempts, kept: found } = await runAttempts(deps, {
      plan,
      prompt: body.prompt,
      html: page.html,
      heuristic: () =>
        heuristicDefinition(page.html, {
          prompt: body.prompt,
          maxRules: deps.limits.maxRules,
          maxSelectorsPerRule: deps.limits.maxSelectorsPerRule,
        }),
      check: (candidate, how) => check(deps.limits, candidate, page.html, page.url, how === 'heuristic'),
      bill,
    }));
  } finally {
    await bill?.settle(found ? 'succeeded' : 'failed');
  }
  if (!found) {
    throw new PublicError(
      'VALIDATION_FAILED',
      `No generated recipe worked on the sample page in ${attempts.length} attempt(s); nothing was saved.`,
      {
        details: attempts.flatMap((a) => a.issues.map((x) => ({ field: `attempts.${a.attempt}.${x.field}`, issue: x.issue }))),
      },
    );
  }
  const kept = found;
  return idempotentWrite(deps.db, tenantId, claim, async (tx) => {
    await recipeOf(tx, tenantId, recipe.id);
    const v = await saveVersion(tx, recipe.id, kept.definition, { reason: `generated:${kept.method}`, origin: 'generation' });
    if (body.activate) await activate(tx, recipe.id, v.id);
    return { version: versionView(v), method: kept.method, attempts, sample: { data: kept.data, warnings: kept.warnings } };
  });
}

/**
 * A candidate on the sample page. The heuristic's fields come from the page, so the ones that did
 * not extract are dropped (and said) instead of failing the attempt; the LLM's must all work.
 */
export function check(limits: DslLimits, candidate: unknown, html: string, pageUrl: string | undefined, dropEmpty: boolean): Checked {
  let def: RecipeDefinition;
  try {
    def = validateDefinition(candidate, limits);
  } catch (err) {
    if (err instanceof PublicError)
      return { ok: false, issues: (err.details as FieldIssue[] | undefined) ?? [{ field: 'definition', issue: err.message }] };
    throw err;
  }
  let outcome: ReturnType<typeof extract>;
  try {
    outcome = extract(def, html, pageUrl ? { pageUrl } : {});
  } catch (err) {
    // A candidate that expands past the run budget on the sample page is a failed attempt.
    if (err instanceof ExtractionBudgetExceeded) return { ok: false, issues: [{ field: 'definition', issue: err.message }] };
    throw err;
  }
  const dropped: FieldIssue[] = [];
  if (dropEmpty) {
    const keep = (f: FieldRule) => {
      const v = outcome.data[f.name];
      return v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0);
    };
    const fields = def.fields.filter((f) => {
      if (keep(f)) return true;
      dropped.push({ field: f.name, issue: 'found nothing on the sample page; left out' });
      return false;
    });
    if (fields.length !== def.fields.length && fields.length > 0) {
      def = { ...def, fields };
      outcome = extract(def, html, pageUrl ? { pageUrl } : {});
    }
  }
  const issues = [...outcome.missing];
  if (issues.length === 0) issues.push(...validateOutput(def, outcome.data));
  const anyValue = Object.values(outcome.data).some((v) => v !== null && !(Array.isArray(v) && v.length === 0));
  if (!anyValue) issues.push({ field: 'definition', issue: 'no field found anything on the sample page' });
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, definition: def, data: outcome.data, warnings: [...dropped, ...outcome.warnings], issues: dropped };
}
