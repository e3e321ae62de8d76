import { z } from 'zod';
import { baseEnv, databaseEnv, envFlag, internalUrl, kafkaEnv, loadEnv } from '@wdr/kit/config';
import { identityEnv } from '@wdr/kit/service-identity';

const limit = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const envExtractor = {
  ...baseEnv,
  ...identityEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8084),
  /** Where an extraction run reads its page (the orchestrator's result store, by request id). */
  ORCHESTRATOR_URL: internalUrl('http://127.0.0.1:8081'),
  /** false: capabilities say `enabled: false` and submissions naming a recipe are refused. */
  RECIPES_ENABLED: envFlag.default(true),
  /** The limits GET /client/recipes/capabilities reports, and the ones definitions are held to. */
  RECIPE_MAX_SCHEMA_BYTES: limit(65_536, 1_048_576),
  RECIPE_MAX_RULES: limit(100, 10_000),
  RECIPE_MAX_SELECTORS_PER_RULE: limit(5, 100),
  RECIPE_MAX_OBJECT_NESTING_DEPTH: limit(2, 10),
  /** Generation: the longest prompt, and the attempts one generation makes at most. */
  RECIPE_MAX_PROMPT_LENGTH: limit(4_000, 100_000),
  RECIPE_GENERATION_MAX_ATTEMPTS: limit(3, 20),
  /**
   * Auto-repair (recipes with auto_repair_enabled): an active version whose recent runs fail on live
   * pages (REQUIRED_FIELDS_MISSING / SCHEMA_VIOLATION) is regenerated and verified on the failing
   * page. Triggered when, of its last RECIPE_REPAIR_RECENT_RUNS finished runs, at least
   * RECIPE_REPAIR_MIN_FAILURES and at least RECIPE_REPAIR_FAILURE_RATIO failed so; at most
   * RECIPE_AUTO_REPAIRS_PER_WINDOW repairs per recipe per RECIPE_REPAIR_WINDOW_HOURS, more only
   * with the recipe's continuous-repair confirmation.
   */
  RECIPE_AUTO_REPAIR_ENABLED: envFlag.default(true),
  RECIPE_AUTO_REPAIRS_PER_WINDOW: limit(3, 1_000),
  RECIPE_REPAIR_WINDOW_HOURS: limit(24, 24 * 365),
  RECIPE_REPAIR_RECENT_RUNS: limit(10, 1_000),
  RECIPE_REPAIR_MIN_FAILURES: limit(3, 1_000),
  RECIPE_REPAIR_FAILURE_RATIO: z.coerce.number().gt(0).max(1).default(0.5),
  /** A page larger than this is not extracted (the run fails with PAGE_TOO_LARGE). */
  EXTRACTION_MAX_PAGE_BYTES: limit(10 * 1024 * 1024, 100 * 1024 * 1024),
  /** What one extraction run may produce (characters of values plus 8 per field and object); past it the run fails EXTRACTION_BUDGET_EXCEEDED. */
  EXTRACTION_MAX_OUTPUT_CHARS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(100 * 1024 * 1024)
    .default(2 * 1024 * 1024),
  /** Wall time of one extraction run (parse and select); past it the run fails EXTRACTION_BUDGET_EXCEEDED. */
  EXTRACTION_MAX_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  /**
   * Generation through any server speaking the OpenAI chat-completions protocol. Without a key only
   * the offline heuristic generates. Without a base URL the `openai` client's default is used.
   */
  LLM_BASE_URL: z.url().optional(),
  LLM_API_KEY: z.string().min(1).optional(),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** One chat completion; a generation makes at most RECIPE_GENERATION_MAX_ATTEMPTS of them. */
  LLM_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  /**
   * The provider's price of LLM_MODEL per token, in nano-USD (defaults: $0.15 / $0.60 per million
   * prompt / completion tokens). The ledger turns the cost into tokens with the plan's markup.
   */
  LLM_PROMPT_NANO_USD_PER_TOKEN: z.coerce.number().int().min(0).max(1_000_000).default(150),
  LLM_COMPLETION_NANO_USD_PER_TOKEN: z.coerce.number().int().min(0).max(1_000_000).default(600),
  /** billing-ledger: LLM generation and repair are charged there (preflight hold, exact charge). */
  LEDGER_URL: internalUrl('http://127.0.0.1:8082'),
  /** A generation's sample page fetched directly (sample_url): time and size bounds. */
  GENERATION_FETCH_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(15_000),
  GENERATION_MAX_PAGE_BYTES: limit(5 * 1024 * 1024, 100 * 1024 * 1024),
  /** Hosts or IPs a sample URL may resolve to although private (comma separated), as the orchestrator's. Empty in production. */
  TARGET_ALLOWLIST: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  /** Idempotency records of recipe writes are kept this long. */
  IDEMPOTENCY_RETENTION_HOURS: limit(24, 24 * 365),
};

export type ExtractorEnv = ReturnType<typeof loadExtractorEnv>;

export function loadExtractorEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(envExtractor, source);
}
