import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import type { ExtractorEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';
import type { DslLimits } from './domain/dsl/validate.js';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { LlmGenerator } from './domain/generation/llm.js';
import type { GenerationDeps } from './domain/generation/generate.js';
import type { LlmBillingDeps } from './domain/generation/llm-billing.js';
import type { RepairPolicy } from './domain/repairs/request-repair.js';
import { CpuTurns } from './domain/cpu-turns.js';

export interface ExtractorDeps extends KafkaServiceDeps<ExtractorEnv, PrismaClient> {
  /** fetch-orchestrator: the stored page of a request (claim-check). */
  orchestrator: ServiceClient;
  limits: DslLimits;
  /** Generation's LLM; absent without LLM_API_KEY (heuristic only). */
  llm: LlmGenerator | undefined;
  policy: TargetPolicy;
  /** billing-ledger: LLM generation and repair are paid operations there. */
  billing: LlmBillingDeps;
  repair: RepairPolicy;
  /** The thread's turns for extraction runs, round-robin by tenant (one per process). */
  turns: CpuTurns;
}

export function createExtractorDeps(env: ExtractorEnv): ExtractorDeps {
  const base = kafkaServiceDeps('recipe-extractor', env, (options) => new PrismaClient(options));
  return {
    ...base,
    // A 10 MB page as base64 JSON takes a moment on a busy node.
    orchestrator: createServiceClient({
      name: 'fetch-orchestrator',
      baseUrl: env.ORCHESTRATOR_URL,
      timeoutMs: 30_000,
      identity: base.identity.signer,
    }),
    limits: {
      maxSchemaBytes: env.RECIPE_MAX_SCHEMA_BYTES,
      maxRules: env.RECIPE_MAX_RULES,
      maxSelectorsPerRule: env.RECIPE_MAX_SELECTORS_PER_RULE,
      maxNestingDepth: env.RECIPE_MAX_OBJECT_NESTING_DEPTH,
    },
    llm: env.LLM_API_KEY
      ? new LlmGenerator({ baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY, model: env.LLM_MODEL, timeoutMs: env.LLM_TIMEOUT_MS })
      : undefined,
    policy: new TargetPolicy(env.TARGET_ALLOWLIST),
    billing: {
      ledger: createServiceClient({ name: 'billing-ledger', baseUrl: env.LEDGER_URL, timeoutMs: 5_000, identity: base.identity.signer }),
      prices: {
        promptNanoUsdPerToken: env.LLM_PROMPT_NANO_USD_PER_TOKEN,
        completionNanoUsdPerToken: env.LLM_COMPLETION_NANO_USD_PER_TOKEN,
      },
    },
    repair: {
      enabled: env.RECIPES_ENABLED && env.RECIPE_AUTO_REPAIR_ENABLED,
      perWindow: env.RECIPE_AUTO_REPAIRS_PER_WINDOW,
      windowHours: env.RECIPE_REPAIR_WINDOW_HOURS,
      recentRuns: env.RECIPE_REPAIR_RECENT_RUNS,
      minFailures: env.RECIPE_REPAIR_MIN_FAILURES,
      failureRatio: env.RECIPE_REPAIR_FAILURE_RATIO,
    },
    turns: new CpuTurns(),
  };
}

/** What generation and repair need: the generators, the sample page's reader, the bill. */
export function generationDepsOf(deps: ExtractorDeps): GenerationDeps {
  return {
    db: deps.db,
    limits: deps.limits,
    maxPromptLength: deps.env.RECIPE_MAX_PROMPT_LENGTH,
    maxAttempts: deps.env.RECIPE_GENERATION_MAX_ATTEMPTS,
    llm: deps.llm,
    page: {
      orchestrator: deps.orchestrator,
      policy: deps.policy,
      timeoutMs: deps.env.GENERATION_FETCH_TIMEOUT_MS,
      maxBytes: deps.env.GENERATION_MAX_PAGE_BYTES,
    },
    billing: deps.billing,
    log: deps.log,
    metrics: deps.metrics,
  };
}
