import { z } from 'zod';

/**
 * One way to read configuration: a zod shape parsed once at boot. A bad value stops the process
 * with every problem listed, instead of failing later on first use.
 */
export function loadEnv<S extends z.ZodRawShape>(
  shape: S,
  source: Record<string, string | undefined> = process.env,
): z.infer<z.ZodObject<S>> {
  const parsed = z.object(shape).safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`invalid configuration:\n${problems}`);
  }
  return parsed.data;
}

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Pieces every service spreads into its own env schema (`...baseEnv, ...kafkaEnv`). */
export const baseEnv = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HOST: z.string().default('127.0.0.1'),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).default(15_000),
  /** Where `/metrics` is served, a port of its own (the API port does not serve it); unset: PORT + 1000. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
};

export const databaseEnv = {
  DATABASE_URL: z.string().url(),
};

export const kafkaEnv = {
  KAFKA_BROKERS: z
    .string()
    .default('127.0.0.1:9092')
    .transform((v) =>
      v
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean),
    ),
  /** Prepended to every topic name; tests use it to give each suite its own topics. */
  KAFKA_TOPIC_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9._-]*$/)
    .default(''),
  /** Unset: each topic's `retry.maxAttempts` from the catalog applies. Set: overrides it for every topic. */
  KAFKA_CONSUMER_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).optional(),
  /**
   * The outbox relay's safety-net poll. It wakes on commit (NOTIFY wdr_outbox from each outbox
   * table's trigger, and in-process nudges), so this only bounds the delay after a lost notification.
   */
  OUTBOX_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(5_000),
  /**
   * How long the group waits for a silent member before handing its partitions to others: the
   * delay before a crashed consumer's work resumes elsewhere. Tests use the broker's minimum (6 s).
   */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6_000).max(300_000).default(30_000),
  /**
   * How long a consumer's fetch waits at the broker while its topics are quiet (a message arriving
   * is answered at once whatever the wait). At rest each consumer asks this often; a stopping
   * service waits for its consumers' fetches in flight (kafkajs), so a SIGTERM takes up to this
   * long. Tests use 1 s.
   */
  KAFKA_FETCH_WAIT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  /**
   * Processed-event records are kept this long, then purged hourly. Keep it above the retention
   * (`retention.ms`, 7 days by default) of every topic the service consumes: a record purged while
   * its message can still be redelivered would let that message's effects happen twice.
   */
  PROCESSED_RETENTION_HOURS: z.coerce.number().int().min(1).max(100_000).default(192),
  // Reaching a real cluster (docs/operations.md, "Kafka"). TLS is on with KAFKA_SSL=true (Node's
  // public CAs) or as soon as a CA or client certificate is given; each PEM comes inline or from a
  // file (`_FILE`, a mounted Secret). Cross-field rules: kafkaSecurityFrom (kafka/kafka-config.ts).
  /** Refuse to start unless TLS to Kafka is configured (the production overlay sets it). */
  KAFKA_REQUIRE_TLS: bool.optional(),
  KAFKA_SSL: bool.optional(),
  KAFKA_SSL_CA: z.string().optional(),
  KAFKA_SSL_CA_FILE: z.string().optional(),
  KAFKA_SSL_CERT: z.string().optional(),
  KAFKA_SSL_CERT_FILE: z.string().optional(),
  KAFKA_SSL_KEY: z.string().optional(),
  KAFKA_SSL_KEY_FILE: z.string().optional(),
  KAFKA_SSL_KEY_PASSWORD: z.string().optional(),
  KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  KAFKA_SASL_USERNAME: z.string().optional(),
  KAFKA_SASL_PASSWORD: z.string().optional(),
  /**
   * `create`: the service creates missing topics at start (local stack and tests; the default
   * unless NODE_ENV=production). `verify`: topics are declared by the platform (the topics Job or
   * Strimzi KafkaTopic resources, both generated from the catalog) and the service only waits for them.
   */
  KAFKA_TOPICS_MODE: z.enum(['create', 'verify']).optional(),
  /** Replication factor of topics this process creates (create mode, the topics Job). */
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(16).optional(),
  /** `min.insync.replicas` set on topics this process creates; unset: the broker's default. */
  KAFKA_MIN_INSYNC_REPLICAS: z.coerce.number().int().min(1).max(16).optional(),
};

export const envFlag = bool;

export const internalUrl = (fallback: string) => z.string().url().default(fallback);
