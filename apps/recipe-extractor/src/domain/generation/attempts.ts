import type { GenerationAttemptView, RecipeDefinition } from '@wdr/contracts';
import type { FieldIssue } from '@wdr/kit/errors';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { LlmBill } from './llm-billing.js';
import { LlmAnswerError, type LlmGenerator } from './llm.js';

export type GenerationMethod = 'llm' | 'heuristic';

export type Checked =
  | { ok: true; definition: RecipeDefinition; data: Record<string, unknown>; warnings: FieldIssue[]; issues: FieldIssue[] }
  | { ok: false; issues: FieldIssue[] };

export interface Kept {
  definition: RecipeDefinition;
  method: GenerationMethod;
  data: Record<string, unknown>;
  warnings: FieldIssue[];
}

export interface AttemptDeps {
  /** Absent when no LLM is configured: the plan holds the heuristic only. */
  llm: LlmGenerator | undefined;
  log: Logger;
  metrics: ServiceMetrics;
}

/**
 * The attempts of a generation or a repair, at most `maxAttempts`: with `method` `heuristic` (or
 * no LLM) the heuristic once (it is deterministic); `llm` every attempt on the model; `auto` the
 * model, then the heuristic as the last attempt.
 */
export function attemptPlan(method: 'auto' | GenerationMethod, hasLlm: boolean, maxAttempts: number): GenerationMethod[] {
  if (method === 'heuristic' || !hasLlm) return ['heuristic'];
  if (method === 'llm') return Array.from({ length: maxAttempts }, () => 'llm' as const);
  return [
    ...Array.from({ length: Math.max(maxAttempts - 1, 1) }, () => 'llm' as const),
    ...(maxAttempts > 1 ? ['heuristic' as const] : []),
  ];
}

/**
 * Run the plan until a candidate passes `check`: each LLM attempt gets the previous attempt's
 * definition and issues (the first may be given one: a repair starts from the failing version),
 * and its usage goes on `bill`. Answers every attempt and the kept candidate, if any.
 */
export async function runAttempts(
  deps: AttemptDeps,
  input: {
    plan: GenerationMethod[];
    prompt: string;
    html: string;
    previous?: { definition: unknown; issues: FieldIssue[] } | undefined;
    heuristic: () => unknown;
    check: (candidate: unknown, how: GenerationMethod) => Checked;
    bill?: LlmBill | undefined;
  },
): Promise<{ attempts: GenerationAttemptView[]; kept: Kept | undefined }> {
  const attempts: GenerationAttemptView[] = [];
  let previous = input.previous;
  for (const [i, how] of input.plan.entries()) {
    let candidate: unknown;
    try {
      if (how === 'llm') {
        if (!deps.llm) throw new Error('no LLM is configured');
        const answer = await deps.llm.attempt({ prompt: input.prompt, html: input.html, previous }).catch((err: unknown) => {
          if (err instanceof LlmAnswerError) input.bill?.add(err.usage);
          throw err;
        });
        input.bill?.add(answer.usage);
        candidate = answer.definition;
      } else {
        candidate = input.heuristic();
      }
    } catch (err) {
      deps.log.warn({ err, attempt: i + 1, method: how }, 'recipe generation attempt failed');
      attempts.push({
        attempt: i + 1,
        method: how,
        outcome: 'error',
        issues: [{ field: 'generator', issue: err instanceof Error ? err.message : 'failed' }],
      });
      continue;
    }
    const checked = input.check(candidate, how);
    attempts.push({ attempt: i + 1, method: how, outcome: checked.ok ? 'accepted' : 'rejected', issues: checked.issues });
    deps.metrics
      .counter('recipe_generation_attempts_total', 'Recipe generation attempts, by method and outcome.', ['method', 'outcome'])
      .inc({ method: how, outcome: checked.ok ? 'accepted' : 'rejected' });
    if (checked.ok)
      return { attempts, kept: { definition: checked.definition, method: how, data: checked.data, warnings: checked.warnings } };
    previous = { definition: candidate, issues: checked.issues };
  }
  return { attempts, kept: undefined };
}
