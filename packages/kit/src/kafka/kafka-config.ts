import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';

/**
 * What the kit's Kafka env (`kafkaEnv` in config.ts) says about reaching the cluster and about its
 * topics, turned into kafkajs options. Cross-field rules (a certificate without its key, SASL
 * without a password) are checked here, at boot, with every problem listed.
 */
export interface KafkaSecurityEnv {
  KAFKA_REQUIRE_TLS?: boolean | undefined;
  KAFKA_SSL?: boolean | undefined;
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SSL_CA?: string | undefined;
  KAFKA_SSL_CERT_FILE?: string | undefined;
  KAFKA_SSL_CERT?: string | undefined;
  KAFKA_SSL_KEY_FILE?: string | undefined;
  KAFKA_SSL_KEY?: string | undefined;
  KAFKA_SSL_KEY_PASSWORD?: string | undefined;
  KAFKA_SASL_MECHANISM?: 'plain' | 'scram-sha-256' | 'scram-sha-512' | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}

export interface KafkaTopicsEnv {
  NODE_ENV?: string | undefined;
  KAFKA_TOPICS_MODE?: 'create' | 'verify' | undefined;
  KAFKA_REPLICATION_FACTOR?: number | undefined;
  KAFKA_MIN_INSYNC_REPLICAS?: number | undefined;
}

export interface KafkaSecurity {
  ssl?: ConnectionOptions | boolean;
  sasl?: SASLOptions;
}

export interface TopicPolicy {
  /** `create`: missing topics are created at start (the local stack, tests). `verify`: they must exist (declared by the platform). */
  mode: 'create' | 'verify';
  replicationFactor: number;
  minInsyncReplicas?: number;
}

/** PEM text from `<NAME>` or the file named by `<NAME>_FILE` (a mounted Secret), not both. */
function pem(
  env: KafkaSecurityEnv,
  name: 'KAFKA_SSL_CA' | 'KAFKA_SSL_CERT' | 'KAFKA_SSL_KEY',
  problems: string[],
  read: (path: string) => string,
): string | undefined {
  const inline = env[name];
  const file = env[`${name}_FILE`];
  if (inline && file) {
    problems.push(`${name} and ${name}_FILE: set one, not both`);
    return undefined;
  }
  if (file) {
    try {
      return read(file);
    } catch (err) {
      problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      return undefined;
    }
  }
  return inline || undefined;
}

export function kafkaSecurityFrom(env: KafkaSecurityEnv, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): KafkaSecurity {
  const problems: string[] = [];
  const ca = pem(env, 'KAFKA_SSL_CA', problems, read);
  const cert = pem(env, 'KAFKA_SSL_CERT', problems, read);
  const key = pem(env, 'KAFKA_SSL_KEY', problems, read);
  if ((cert === undefined) !== (key === undefined) && problems.length === 0)
    problems.push('KAFKA_SSL_CERT and KAFKA_SSL_KEY: give both (client certificate authentication) or neither');
  if (env.KAFKA_SSL_KEY_PASSWORD && key === undefined) problems.push('KAFKA_SSL_KEY_PASSWORD: set without a key');
  if (env.KAFKA_SSL === false && (ca || cert || key)) problems.push('KAFKA_SSL is false but TLS material is set; remove one');
  const mechanism = env.KAFKA_SASL_MECHANISM;
  if (mechanism && (!env.KAFKA_SASL_USERNAME || !env.KAFKA_SASL_PASSWORD))
    problems.push(`KAFKA_SASL_MECHANISM ${mechanism} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`);
  if (!mechanism && (env.KAFKA_SASL_USERNAME || env.KAFKA_SASL_PASSWORD))
    problems.push('KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD set without KAFKA_SASL_MECHANISM (plain, scram-sha-256 or scram-sha-512)');
  // Set where plaintext must never happen (the production overlay): a missing or incomplete wdr-kafka
  // Secret stops the start instead of silently connecting without TLS.
  if (env.KAFKA_REQUIRE_TLS === true && env.KAFKA_SSL !== true && ca === undefined && cert === undefined && problems.length === 0)
    problems.push(
      'KAFKA_REQUIRE_TLS is true but no TLS is configured (KAFKA_SSL=true, KAFKA_SSL_CA or a client certificate): is the wdr-kafka Secret missing?',
    );
  if (problems.length > 0) throw new Error(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);

  const out: KafkaSecurity = {};
  const tlsWanted = env.KAFKA_SSL === true || ca !== undefined || cert !== undefined;
  if (tlsWanted) {
    // No `ca`: Node's bundled public CAs verify the broker (managed clusters with public certificates).
    const tls: ConnectionOptions = { rejectUnauthorized: true };
    if (ca) tls.ca = [ca];
    if (cert && key) {
      tls.cert = cert;
      tls.key = key;
      if (env.KAFKA_SSL_KEY_PASSWORD) tls.passphrase = env.KAFKA_SSL_KEY_PASSWORD;
    }
    out.ssl = tls;
  }
  if (mechanism) out.sasl = { mechanism, username: env.KAFKA_SASL_USERNAME!, password: env.KAFKA_SASL_PASSWORD! } as SASLOptions;
  return out;
}

/** Default: create topics outside production (local stack, tests); in production they are declared by the platform and only verified. */
export function topicPolicyFrom(env: KafkaTopicsEnv): TopicPolicy {
  const policy: TopicPolicy = {
    mode: env.KAFKA_TOPICS_MODE ?? (env.NODE_ENV === 'production' ? 'verify' : 'create'),
    replicationFactor: env.KAFKA_REPLICATION_FACTOR ?? 1,
  };
  if (env.KAFKA_MIN_INSYNC_REPLICAS !== undefined) {
    if (env.KAFKA_MIN_INSYNC_REPLICAS > policy.replicationFactor) {
      throw new Error(
        `invalid configuration:\n  KAFKA_MIN_INSYNC_REPLICAS (${env.KAFKA_MIN_INSYNC_REPLICAS}) is above KAFKA_REPLICATION_FACTOR (${policy.replicationFactor}): every acks=all produce would fail`,
      );
    }
    policy.minInsyncReplicas = env.KAFKA_MIN_INSYNC_REPLICAS;
  }
  return policy;
}
