import { dlqName, topicName, TOPICS, type TopicKey } from './catalog.js';

/**
 * Topic declarations derived from the catalog: what a cluster must hold for the fleet to run.
 * One source for the services' create mode (local stack, tests), the topics Job
 * (`wdr-kafka-topics`, packages/kit) and the Strimzi KafkaTopic resources committed under
 * k8s/kafka-topics/ (scripts/topics.mjs writes them; `check:generated` fails when they drift).
 */

/**
 * How long a topic keeps its messages. Consumers' processed-event records must outlive it
 * (PROCESSED_RETENTION_HOURS, 192 h by default, above these 7 days).
 */
export const TOPIC_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** A dead letter stays until someone handles it: a month, long enough for an incident and its follow-up. */
export const DLQ_RETENTION_MS = 30 * 24 * 3600 * 1000;
export const DLQ_PARTITIONS = 1;

export interface TopicDeclaration {
  key: TopicKey;
  /** Deployed name (with the prefix). */
  name: string;
  dlq: boolean;
  partitions: number;
  /** Topic-level configuration (Kafka config names, string values). */
  config: Record<string, string>;
}

export function topicDeclarations(
  opts: { prefix?: string; keys?: readonly TopicKey[]; minInsyncReplicas?: number } = {},
): TopicDeclaration[] {
  const keys = opts.keys ?? (Object.keys(TOPICS) as TopicKey[]);
  const isr: Record<string, string> = opts.minInsyncReplicas === undefined ? {} : { 'min.insync.replicas': String(opts.minInsyncReplicas) };
  return keys.flatMap((key): TopicDeclaration[] => [
    {
      key,
      name: topicName(key, opts.prefix),
      dlq: false,
      partitions: TOPICS[key].partitions,
      config: { 'cleanup.policy': 'delete', 'retention.ms': String(TOPIC_RETENTION_MS), ...isr },
    },
    {
      key,
      name: dlqName(key, opts.prefix),
      dlq: true,
      partitions: DLQ_PARTITIONS,
      config: { 'cleanup.policy': 'delete', 'retention.ms': String(DLQ_RETENTION_MS), ...isr },
    },
  ]);
}

/** Kubernetes names: lowercase alphanumerics, `-` and `.`; catalog names already are. */
const k8sName = (topic: string) => topic.toLowerCase().replace(/[^a-z0-9.-]/g, '-');

/**
 * Strimzi `KafkaTopic` resources (kafka.strimzi.io/v1beta2) for every declared topic, as one YAML
 * document stream. The cluster label and namespace are the overlay's to patch.
 */
export function strimziKafkaTopics(opts: { cluster: string; replicas: number; minInsyncReplicas: number; prefix?: string }): string {
  const header = [
    '# GENERATED from packages/contracts/src/events/catalog.ts by packages/contracts/scripts/topics.mjs. Do not edit:',
    '# change the catalog, build, run `npm run generate:topics -w @wdr/contracts`, commit. `npx turbo run check:generated` fails on drift.',
    `# Replicas ${opts.replicas}, min.insync.replicas ${opts.minInsyncReplicas}: producers use acks=all, so one broker`,
    '# can be down (rolling restart) without refusing writes. Apply where the Strimzi topic operator watches.',
  ].join('\n');
  const docs = topicDeclarations({
    ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
    minInsyncReplicas: opts.minInsyncReplicas,
  }).map((t) =>
    [
      'apiVersion: kafka.strimzi.io/v1beta2',
      'kind: KafkaTopic',
      'metadata:',
      `  name: ${k8sName(t.name)}`,
      '  labels:',
      `    strimzi.io/cluster: ${opts.cluster}`,
      '    app.kubernetes.io/part-of: wdr',
      `    wdr.io/topic-role: ${t.dlq ? 'dead-letter' : 'events'}`,
      'spec:',
      `  topicName: ${t.name}`,
      `  partitions: ${t.partitions}`,
      `  replicas: ${opts.replicas}`,
      '  config:',
      ...Object.entries(t.config)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `    ${k}: "${v}"`),
    ].join('\n'),
  );
  return `${header}\n---\n${docs.join('\n---\n')}\n`;
}

/** What the committed k8s/kafka-topics/kafka-topics.yaml is generated with (a three-broker cluster). */
export const STRIMZI_TOPICS_DEFAULTS = { cluster: 'wdr-kafka', replicas: 3, minInsyncReplicas: 2 } as const;
