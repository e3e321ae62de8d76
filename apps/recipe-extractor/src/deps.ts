import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import type { ExtractorEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';
import type { DslLimits } from './domain/dsl/validate.js';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { LlmGenerator } from './domain/generation/llm.js';

export interface ExtractorDeps extends KafkaServiceDeps<ExtractorEnv, PrismaClient> {
  /** fetch-orchestrator: the stored page of a request (claim-check). */
  orchestrator: ServiceClient;
  limits: DslLimits;
  /** Generation's LLM; absent without LLM_API_KEY (heuristic only). */
  llm: LlmGenerator | undefined;
  policy: TargetPolicy;
}

export function createExtractorDeps(env: ExtractorEnv): ExtractorDeps {
  return {
    ...kafkaServiceDeps('recipe-extractor', env, (options) => new PrismaClient(options)),
    // A 10 MB page as base64 JSON takes a moment on a busy node.
    orchestrator: createServiceClient({ name: 'fetch-orchestrator', baseUrl: env.ORCHESTRATOR_URL, timeoutMs: 30_000 }),
    limits: {
      maxSchemaBytes: env.RECIPE_MAX_SCHEMA_BYTES,
      maxRules: env.RECIPE_MAX_RULES,
      maxSelectorsPerRule: env.RECIPE_MAX_SELECTORS_PER_RULE,
      maxNestingDepth: env.RECIPE_MAX_OBJECT_NESTING_DEPTH,
    },
    llm: env.LLM_API_KEY ? new LlmGenerator({ baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY, model: env.LLM_MODEL, timeoutMs: env.LLM_TIMEOUT_MS }) : undefined,
    policy: new TargetPolicy(env.TARGET_ALLOWLIST),
  };
}
