import { z } from 'zod';
import { baseEnv, databaseEnv, kafkaEnv, loadEnv } from '@wdr/kit/config';
import { identityEnv } from '@wdr/kit/service-identity';
import { previousSealingKeysEnv, sealingKeyEnv } from '@wdr/kit/sealing';

export const envDispatcher = {
  ...baseEnv,
  ...identityEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8085),
  /**
   * fetch-orchestrator's internal API, where the dispatcher registers the tenants with webhook
   * endpoints as listeners of their request lifecycle (only those tenants' events are mirrored on
   * request.lifecycle). Unset: nothing is registered and the orchestrator mirrors every tenant's
   * events (the dispatcher's own tests); every deployment sets it.
   */
  ORCHESTRATOR_URL: z.string().url().optional(),
  /**
   * AES-256-GCM key sealing endpoint URLs and `whsec_` signing secrets at rest: `<id>:<base64 of 32
   * bytes>`, or plain base64 (id k1). New values are sealed under it.
   */
  WEBHOOK_SECRET_KEY: sealingKeyEnv(),
  /** Earlier keys that still open what they sealed (`<id>:<base64>,...`): a rotation keeps the old key here. */
  WEBHOOK_SECRET_KEY_PREVIOUS: previousSealingKeysEnv(),
  /**
   * Hosts or IPs endpoint URLs may resolve to even though they are private or loopback (comma
   * separated), as the orchestrator's TARGET_ALLOWLIST. Empty in production; tests allow 127.0.0.1.
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
  /** Whole-attempt timeout of one delivery (connect, send, first bytes of the answer). */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(500).max(60_000).default(10_000),
  /** Deliveries in flight at once in one dispatcher process, across endpoints. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_024).default(64),
  /** Deliveries in flight at once to one endpoint (per process): a slow receiver holds only its own slots. */
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Direct delivery: a new message is posted from the consumer's hand and written once, with its
   * attempt, when answered (domain/direct.ts). A message that waits this long for a slot, or whose
   * POST is not answered this long after it started, is written to the durable queue (due, or held
   * by this sender) and its event's offset may move on. 0: every message goes through the queue.
   */
  WEBHOOK_DIRECT_WAIT_MS: z.coerce.number().int().min(0).max(10_000).default(1_000),
  /**
   * How long finished messages (delivered or failed) and their attempts are kept, in hours (default
   * 30 days). Must outlast the redelivery window of request.lifecycle (topic retention + lag).
   */
  WEBHOOK_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(24)
    .max(24 * 365)
    .default(720),
  /**
   * How long an applied endpoint write is remembered by its `operation_id` (a repeat answers the
   * first answer), in hours; purged hourly. Keep it equal to the gateway's IDEMPOTENCY_RETENTION_HOURS,
   * which derives the operation ids from Idempotency-Keys kept that long.
   */
  IDEMPOTENCY_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(24),
  /**
   * Endpoints one project environment may have (enabled or disabled): one event is signed and sent
   * once per endpoint, so this bounds what a single request can fan out to. The next create is 409.
   */
  WEBHOOK_ENDPOINTS_PER_ENVIRONMENT: z.coerce.number().int().min(1).max(100_000).default(100),
  /**
   * Safety-net poll of the schedule (lost notifications, another replica's retries); senders also
   * wake on NOTIFY wdr_webhooks, when a slot frees, and when the earliest retry they know of is due.
   */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(10_000),
};

export type DispatcherEnv = ReturnType<typeof loadDispatcherEnv>;

export function loadDispatcherEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(envDispatcher, source);
}
