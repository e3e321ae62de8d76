import { z } from 'zod';
import { baseEnv, databaseEnv, internalUrl, kafkaEnv, loadEnv } from '@wdr/kit/config';
import { identityEnv } from '@wdr/kit/service-identity';
import { previousSealingKeysEnv, sealingKeyEnv } from '@wdr/kit/sealing';

export const orchestratorEnv = {
  ...baseEnv,
  ...identityEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  LEDGER_URL: internalUrl('http://127.0.0.1:8082'),
  /**
   * AES-256-GCM key sealing the full target URL (and proxy exit URLs) at rest: `<id>:<base64 of 32
   * bytes>`, or plain base64 (id k1). The result cache's key is derived from it.
   */
  TARGET_URL_KEY: sealingKeyEnv(),
  /** Earlier keys that still open what they sealed (`<id>:<base64>,...`): a rotation keeps the old key here. */
  TARGET_URL_KEY_PREVIOUS: previousSealingKeysEnv(),
  /**
   * Seal tenant header and cookie values and browser actions at rest (domain/requests/sealed-inputs.ts).
   * `false` only for the first rollout from a release that predates sealing (docs/operations.md
   * "Upgrading to sealed request inputs"): rows are then written in clear and nothing is sealed, so
   * pods of the previous release, which read only that form, still send the tenant's headers.
   */
  SEAL_REQUEST_INPUTS: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /**
   * Credit leases (docs/architecture.md, "Credit leases"): admit common requests against blocks of
   * tokens the ledger granted, without a ledger call each. Off: every admission reserves.
   */
  LEASE_ENABLED: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** Tokens asked for per grant or top-up of a lease slot. */
  LEASE_BLOCK_TOKENS: z.coerce.number().int().min(1).max(1_000_000_000).default(1_000),
  /** Lease slots per tenant (rows a hot tenant's admissions spread over). */
  LEASE_SLOTS: z.coerce.number().int().min(1).max(64).default(4),
  /** How long the sealed full URL is kept before it is purged. */
  TARGET_URL_RETENTION_HOURS: z.coerce.number().int().min(1).max(720).default(24),
  RESULT_RETENTION_HOURS: z.coerce.number().int().min(1).max(720).default(24),
  /**
   * Hosts or IPs that targets may resolve to even though they are private or loopback (comma
   * separated). Empty in production; tests and the local demo allow 127.0.0.1.
   */
  TARGET_ALLOWLIST: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  /**
   * DNS servers (`ip` or `ip:port`, comma separated) that resolve target names for the HTTP
   * stage's connect-time check; empty: the system resolver. Tests point it at a server they control.
   */
  TARGET_DNS_SERVERS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  /** HTTP stages run at once by one orchestrator instance (across and within partitions). */
  FETCH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * HTTP stages run where they were admitted, at most this many at once (domain/local-runs.ts): the
   * request skips the fetch.jobs hop while a slot is free; 0 queues every job on Kafka. Twice
   * FETCH_CONCURRENCY's default: admission outruns execution, and with 16 a steady stream of one
   * client's 16 concurrent submissions already sent a third of its pages through Kafka, each paying
   * the hop's CPU and delay (bench/README.md, "local stage slots").
   */
  LOCAL_HTTP_STAGES: z.coerce.number().int().min(0).max(256).default(32),
  /**
   * HTTP requests admitted claimed beyond LOCAL_HTTP_STAGES, waiting in this pod for a stage slot
   * (a row id each, no page), and handed to fetch.jobs after LOCAL_HTTP_BACKLOG_WAIT_MS without one.
   */
  LOCAL_HTTP_BACKLOG: z.coerce.number().int().min(0).max(1024).default(32),
  LOCAL_HTTP_BACKLOG_WAIT_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /** How long a local stage's claim holds unrenewed: after a crash, how soon its request is queued again. */
  LOCAL_HTTP_CLAIM_S: z.coerce.number().int().min(3).max(600).default(15),
  MAX_RESULT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Result cache (domain/result-cache.ts): entries a tenant may have; a fill evicts its oldest beyond this. */
  RESULT_CACHE_MAX_ENTRIES_PER_TENANT: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** Result cache: total size of the results all entries serve; the retention purge evicts the oldest beyond this. */
  RESULT_CACHE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(1024 * 1024 * 1024),
  /**
   * IP echo endpoint fetched through a proxy exit to learn the address it leaves from (plain text,
   * or JSON with `ip`), for geo_country on exits whose country label is not authoritative. Unset:
   * only exits with an authoritative country label can serve geo_country.
   */
  GEO_ECHO_URL: z.string().url().optional(),
  /** A MaxMind-format country database (.mmdb); default: the GeoLite2 country file shipped as an npm package. */
  GEO_DATABASE_PATH: z.string().optional(),
  /** Exits tried for one execution before it fails with PROXY_UNAVAILABLE (refunded). */
  PROXY_MAX_EXIT_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  /** How long a failing exit stays out of rotation before one trial request. */
  PROXY_EXIT_RESET_MS: z.coerce.number().int().min(100).default(30_000),
};

export type OrchestratorEnv = ReturnType<typeof loadOrchestratorEnv>;

export function loadOrchestratorEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(orchestratorEnv, source);
}
