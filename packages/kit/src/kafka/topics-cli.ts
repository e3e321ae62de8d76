#!/usr/bin/env node
/**
 * wdr-kafka-topics: declare the fleet's topics on a cluster, from the event catalog (the same
 * declarations as the services' create mode and the generated Strimzi KafkaTopic resources).
 *
 *   node packages/kit/dist/kafka/topics-cli.js create   create what is missing, then check
 *   node packages/kit/dist/kafka/topics-cli.js check    exit 1 when a topic is missing or has fewer partitions
 *
 * Configuration is the services' Kafka env: KAFKA_BROKERS, KAFKA_TOPIC_PREFIX, TLS/SASL,
 * KAFKA_REPLICATION_FACTOR, KAFKA_MIN_INSYNC_REPLICAS. Run as a Job before the first rollout and
 * after a catalog change (k8s/kafka-topics-job/). Prints one JSON line; no stack traces.
 */
import { TOPICS, topicDeclarations, type TopicKey } from '@wdr/contracts';
import { baseEnv, kafkaEnv, loadEnv } from '../config.js';
import { createLogger } from '../log.js';
import { KafkaBus } from './bus.js';
import { kafkaSecurityFrom, topicPolicyFrom } from './kafka-config.js';

const USAGE =
  'usage: wdr-kafka-topics create|check   (env: KAFKA_BROKERS, KAFKA_TOPIC_PREFIX, KAFKA_SSL*, KAFKA_SASL_*, KAFKA_REPLICATION_FACTOR, KAFKA_MIN_INSYNC_REPLICAS)';

async function main(): Promise<number> {
  const command = process.argv[2];
  if (command === '--help' || command === '-h' || command === undefined) {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'create' && command !== 'check') {
    console.error(`unknown command ${command}\n${USAGE}`);
    return 2;
  }
  const env = loadEnv({ ...baseEnv, ...kafkaEnv });
  // Only errors: kafkajs's start-up notices would bury the one JSON line this prints.
  const log = createLogger('kafka-topics', 'error');
  const policy = { ...topicPolicyFrom(env), mode: 'create' as const };
  const bus = new KafkaBus({
    clientId: 'wdr-kafka-topics',
    brokers: env.KAFKA_BROKERS,
    prefix: env.KAFKA_TOPIC_PREFIX,
    log,
    security: kafkaSecurityFrom(env),
    topicPolicy: policy,
  });
  const keys = Object.keys(TOPICS) as TopicKey[];
  if (command === 'create') await bus.ensureTopics(keys);

  const admin = bus.kafka.admin();
  await admin.connect();
  try {
    const declared = topicDeclarations({ prefix: env.KAFKA_TOPIC_PREFIX, keys });
    const existing = new Set(await admin.listTopics());
    const missing = declared.filter((t) => !existing.has(t.name)).map((t) => t.name);
    const present = declared.filter((t) => existing.has(t.name));
    const meta = present.length > 0 ? await admin.fetchTopicMetadata({ topics: present.map((t) => t.name) }) : { topics: [] };
    const problems: string[] = [];
    for (const t of present) {
      const m = meta.topics.find((x) => x.name === t.name);
      const partitions = m?.partitions.length ?? 0;
      if (partitions < t.partitions) problems.push(`${t.name}: ${partitions} partitions, declared ${t.partitions}`);
      const rf = Math.min(...(m?.partitions.map((p) => p.replicas.length) ?? [0]));
      if (rf < policy.replicationFactor) problems.push(`${t.name}: replication factor ${rf}, wanted ${policy.replicationFactor}`);
    }
    const ok = missing.length === 0 && problems.length === 0;
    console.log(JSON.stringify({ ok, command, topics: declared.length, missing, problems }));
    return ok ? 0 : 1;
  } finally {
    await admin.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`wdr-kafka-topics failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
