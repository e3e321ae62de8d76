import { Kafka, logLevel, Partitioners, type Admin, type IHeaders, type LogEntry, type Producer } from 'kafkajs';
import { dlqName, topicName, TOPICS, type Envelope, type TopicKey } from '@wdr/contracts';
import type { Logger } from '../log.js';
import { applyKafkajsIdleLoopFix } from './kafkajs-idle-fix.js';

applyKafkajsIdleLoopFix();

export interface OutgoingMessage {
  key: string;
  envelope: Envelope;
  headers?: IHeaders;
}

/**
 * The fleet's one Kafka entry point: a client, an idempotent producer and topic names resolved
 * from the catalog with the deployment's prefix.
 */
export class KafkaBus {
  readonly kafka: Kafka;
  readonly prefix: string;
  private readonly producer: Producer;
  private readonly log: Logger;
  private connected = false;

  constructor(opts: { clientId: string; brokers: string[]; prefix: string; log: Logger }) {
    this.prefix = opts.prefix;
    this.log = opts.log;
    this.kafka = new Kafka({
      clientId: opts.clientId,
      brokers: opts.brokers,
      connectionTimeout: 3_000,
      requestTimeout: 30_000,
      retry: { initialRetryTime: 200, retries: 8 },
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => {
        const { message, ...extra } = entry.log;
        const level = entry.level <= logLevel.ERROR ? 'error' : entry.level === logLevel.WARN ? 'warn' : 'debug';
        this.log[level]({ kafka: { namespace: entry.namespace, ...extra } }, `kafkajs: ${message}`);
      },
    });
    this.producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  topic(key: TopicKey): string {
    return topicName(key, this.prefix);
  }

  dlq(key: TopicKey): string {
    return dlqName(key, this.prefix);
  }

  /** Reverse lookup from a deployed topic name to its catalog key. */
  keyOf(topic: string): TopicKey | undefined {
    return (Object.keys(TOPICS) as TopicKey[]).find((k) => this.topic(k) === topic);
  }

  async connect(): Promise<void> {
    if (this.connected) return;
    await this.producer.connect();
    this.connected = true;
  }

  /**
   * Create the topics (and their DLQ twins) if missing; harmless when they exist. A broker that
   * has just started answers some metadata requests with retriable errors for a few seconds, so
   * this retries instead of failing the service's start.
   */
  async ensureTopics(keys: readonly TopicKey[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.createMissingTopics(keys);
      } catch (err) {
        const retriable = (err as { retriable?: boolean }).retriable === true || (err as { name?: string }).name === 'KafkaJSNumberOfRetriesExceeded';
        if (!retriable || attempt >= 10) throw err;
        this.log.warn({ err, attempt }, 'creating topics failed, retrying');
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  private async createMissingTopics(keys: readonly TopicKey[]): Promise<void> {
    if (keys.length === 0) return;
    const admin: Admin = this.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const wanted = keys.flatMap((k) => [
        { topic: this.topic(k), numPartitions: TOPICS[k].partitions },
        { topic: this.dlq(k), numPartitions: 1 },
      ]);
      const missing = wanted.filter((t) => !existing.has(t.topic));
      if (missing.length > 0) {
        await admin.createTopics({ topics: missing.map((t) => ({ ...t, replicationFactor: 1 })), waitForLeaders: true });
      }
    } finally {
      await admin.disconnect();
    }
  }

  async send(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({
        key: m.key,
        value: JSON.stringify(m.envelope),
        headers: { 'event-type': m.envelope.type, ...(m.headers ?? {}) },
      })),
    });
  }

  /** Several topics' messages in one produce request (the outbox relay's batches). */
  async sendBatch(messages: (OutgoingMessage & { topic: string })[]): Promise<void> {
    if (messages.length === 0) return;
    const byTopic = new Map<string, OutgoingMessage[]>();
    for (const m of messages) {
      const list = byTopic.get(m.topic) ?? [];
      list.push(m);
      byTopic.set(m.topic, list);
    }
    await this.producer.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, list]) => ({
        topic,
        messages: list.map((m) => ({
          key: m.key,
          value: JSON.stringify(m.envelope),
          headers: { 'event-type': m.envelope.type, ...(m.headers ?? {}) },
        })),
      })),
    });
  }

  async disconnect(): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    await this.producer.disconnect();
  }
}
