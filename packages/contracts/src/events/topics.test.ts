import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { TOPICS, type TopicKey } from './catalog.js';
import { DLQ_PARTITIONS, STRIMZI_TOPICS_DEFAULTS, strimziKafkaTopics, topicDeclarations } from './topics.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('topic declarations', () => {
  it('declare every catalog topic with its partitions, and a one-partition .dlq twin', () => {
    const decl = topicDeclarations({ prefix: 'p.' });
    const keys = Object.keys(TOPICS) as TopicKey[];
    expect(decl).toHaveLength(keys.length * 2);
    for (const k of keys) {
      expect(decl).toContainEqual(
        expect.objectContaining({ key: k, name: `p.${TOPICS[k].name}`, dlq: false, partitions: TOPICS[k].partitions }),
      );
      expect(decl).toContainEqual(
        expect.objectContaining({ key: k, name: `p.${TOPICS[k].name}.dlq`, dlq: true, partitions: DLQ_PARTITIONS }),
      );
    }
  });

  it('set min.insync.replicas only when asked', () => {
    expect(topicDeclarations()[0]!.config['min.insync.replicas']).toBeUndefined();
    expect(topicDeclarations({ minInsyncReplicas: 2 })[0]!.config['min.insync.replicas']).toBe('2');
  });

  it('match the committed Strimzi KafkaTopic resources (k8s/kafka-topics/kafka-topics.yaml)', () => {
    const committed = readFileSync(resolve(repo, 'k8s/kafka-topics/kafka-topics.yaml'), 'utf8');
    expect(committed).toBe(strimziKafkaTopics(STRIMZI_TOPICS_DEFAULTS));
    const names = [...committed.matchAll(/^ {2}topicName: (.+)$/gm)].map((m) => m[1]);
    expect(names.sort()).toEqual(
      topicDeclarations()
        .map((t) => t.name)
        .sort(),
    );
  });
});
