import { z } from 'zod';
import { baseEnv, databaseEnv, internalUrl, kafkaEnv, loadEnv } from '@wdr/kit/config';
import { identityEnv } from '@wdr/kit/service-identity';

const positiveInt = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const gatewayEnv = {
  ...baseEnv,
  ...identityEnv,
  ...databaseEnv,
  // The gateway consumes request.lifecycle for its event streams (src/sse).
  ...kafkaEnv,
  /** Comment line sent on an idle event stream, so proxies and clients keep it open. */
  SSE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /** An event stream ends after this long; the client reconnects with Last-Event-ID. */
  SSE_MAX_DURATION_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(300_000),
  /** Reconnection delay suggested to clients (the SSE `retry:` field). */
  SSE_RETRY_MS: z.coerce.number().int().min(0).max(60_000).default(3_000),
  /** While the live feed's Kafka consumer is not connected, open streams read new stored events this often. */
  SSE_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** Event streams one tenant may hold open on one gateway replica; the next is 429 CONCURRENCY_LIMITED. */
  SSE_MAX_STREAMS_PER_TENANT: positiveInt(20, 100_000),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  ORCHESTRATOR_URL: internalUrl('http://127.0.0.1:8081'),
  LEDGER_URL: internalUrl('http://127.0.0.1:8082'),
  RENDERER_URL: internalUrl('http://127.0.0.1:8083'),
  /** recipe-extractor: recipes, capabilities and extraction runs. */
  EXTRACTOR_URL: internalUrl('http://127.0.0.1:8084'),
  /** webhook-dispatcher: the webhook endpoints and delivery attempts of projects and environments. */
  WEBHOOKS_URL: internalUrl('http://127.0.0.1:8085'),
  /** Secret mixed into API key and cabinet token hashes, so a leaked table alone cannot be brute-forced offline. */
  API_KEY_PEPPER: z.string().min(16),
  /** Redis holds the rate-limit and admission counters; nothing durable. */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Prepended to every Redis key (tests give each fleet its own prefix on the shared Redis). */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:._-]*$/)
    .default('wdr:gateway:'),
  /** Default submission rate per tenant: RATE_LIMIT_SUBMISSIONS per RATE_LIMIT_WINDOW_SECONDS (GCRA, burst = the whole quota). A tenant_limits row overrides either. */
  RATE_LIMIT_SUBMISSIONS: positiveInt(600, 10_000_000),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60, 86_400),
  /** Default ceiling on a tenant's non-terminal requests; a tenant_limits row overrides it. */
  CONCURRENCY_LIMIT: positiveInt(100, 10_000_000),
  /**
   * Default read rate per tenant: READ_RATE_LIMIT reads (every GET of the data API, event streams
   * included) per READ_RATE_WINDOW_SECONDS (GCRA, burst = the whole quota); a tenant_limits row overrides the count.
   */
  READ_RATE_LIMIT: positiveInt(6_000, 10_000_000),
  READ_RATE_WINDOW_SECONDS: positiveInt(60, 86_400),
  /** Default reads of one tenant in progress at once on one gateway replica (a result holds its place while it streams); a tenant_limits row overrides it. */
  READ_CONCURRENCY_LIMIT: positiveInt(16, 100_000),
  /**
   * How long a verified API key or cabinet token is answered from memory. Changes still take effect
   * at once (the database notifies every replica, see domain/auth/credential-cache.ts); 0 turns the
   * cache off.
   */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  AUTH_CACHE_MAX_ENTRIES: positiveInt(10_000, 1_000_000),
  /**
   * How often the connection that hears credential changes must answer a heartbeat (within half this
   * period, at most 2 s): a connection that died silently is noticed within this bound plus that,
   * the cache is dropped and answers come from the database until a new connection listens.
   */
  /**
   * Failed authentications per client address (see TRUSTED_PROXY_HOPS) per AUTH_FAILURE_WINDOW_SECONDS
   * before the address is answered 429 until its budget refills.
   */
  AUTH_FAILURE_LIMIT: positiveInt(60, 1_000_000),
  AUTH_FAILURE_WINDOW_SECONDS: positiveInt(60, 86_400),
  /**
   * How many proxies in front of the gateway append to X-Forwarded-For (the ingress: 1). 0: the
   * connection's peer is the client address (what the failed-authentication throttle counts).
   */
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  AUTH_LISTEN_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** Cabinet tokens expire after this many days unless the admin command says otherwise. */
  CABINET_TOKEN_TTL_DAYS: positiveInt(90, 3650),
  /**
   * How long an Idempotency-Key of a cabinet browser-workflow write (projects, members, workflows,
   * keys, webhooks) replays its stored answer; older claims are purged hourly and the key is new again.
   */
  IDEMPOTENCY_RETENTION_HOURS: positiveInt(24, 24 * 365),
};

export type GatewayEnv = ReturnType<typeof loadGatewayEnv>;

export function loadGatewayEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(gatewayEnv, source);
}
