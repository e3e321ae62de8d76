import { Kafka, logLevel, Partitioners, type Admin, type IHeaders, type LogEntry, type Producer } from 'kafkajs';
import { dlqName, topicDeclarations, topicName, TOPICS, type Envelope, type TopicKey } from '@wdr/contracts';
import type { Logger } from '../log.js';
import { currentRequestId, REQUEST_ID_HEADER } from '../request-context.js';
import {
  kafkaSecurityFrom,
  topicPolicyFrom,
  type KafkaSecurity,
  type KafkaSecurityEnv,
  type KafkaTopicsEnv,
  type TopicPolicy,
} from './kafka-config.js';
import { applyKafkajsIdleLoopFix } from './kafkajs-idle-fix.js';

applyKafkajsIdleLoopFix();

export interface OutgoingMessage {
  key: string;
  envelope: Envelope;
  headers?: IHeaders;
}

/**
 * Headers of a produced message: its event type and tenant (a consumer skips what it has no use
 * for without parsing the message: startConsumer's handlers and `skipTenant`), and the request id
 * of the work producing it (unless given).
 */
function headersOf(m: OutgoingMessage): IHeaders {
  const requestId = currentRequestId();
  return {
    'event-type': m.envelope.type,
    'tenant-id': m.envelope.tenant_id,
    ...(requestId !== undefined ? { [REQUEST_ID_HEADER]: requestId } : {}),
    ...(m.headers ?? {}),
  };
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
  readonly topicPolicy: TopicPolicy;

  /** The bus a service's env describes: brokers, prefix, TLS/SASL and the topic policy (config.ts `kafkaEnv`). */
  static fromEnv(
    clientId: string,
    env: KafkaSecurityEnv & KafkaTopicsEnv & { KAFKA_BROKERS: string[]; KAFKA_TOPIC_PREFIX: string },
    log: Logger,
  ): KafkaBus {
    return new KafkaBus({
      clientId,
      brokers: env.KAFKA_BROKERS,
      prefix: env.KAFKA_TOPIC_PREFIX,
      log,
      security: kafkaSecurityFrom(env),
      topicPolicy: topicPolicyFrom(env),
    });
  }

  constructor(opts: {
    clientId: string;
    brokers: string[];
    prefix: string;
    log: Logger;
    security?: KafkaSecurity;
    topicPolicy?: TopicPolicy;
  }) {
    this.prefix = opts.prefix;
    this.log = opts.log;
    this.topicPolicy = opts.topicPolicy ?? { mode: 'create', replicationFactor: 1 };
    this.kafka = new Kafka({
      clientId: opts.clientId,
      brokers: opts.brokers,
      ...(opts.security?.ssl !== undefined ? { ssl: opts.security.ssl } : {}),
      ...(opts.security?.sasl !== undefined ? { sasl: opts.security.sasl } : {}),
      connectionTimeout: 3_000,
      requestTimeout: 30_000,
      retry: { initialRetryTime: 200, retries: 8 },
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => {
        const { message, ...extra } = entry.log;
        // kafkajs's Connection logs every error a broker answers ("Response CreateTopics" with
        // TOPIC_ALREADY_EXISTS when two services of a fleet create the same topic at once) at ERROR,
        // before the caller decides: the admin client treats "already exists" as done, and every other
        // answer reaches the caller as a thrown error that is logged there. So these are warnings.
        const brokerAnswer = entry.namespace === 'Connection' && typeof message === 'string' && message.startsWith('Response ');
        const level = entry.level <= logLevel.ERROR && !brokerAnswer ? 'error' : entry.level <= logLevel.WARN ? 'warn' : 'debug';
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
   * Make sure the topics (and their DLQ twins) exist, as the topic policy says: `create` creates the
   * missing ones (replication factor and min.insync.replicas from the policy), `verify` only checks
   * and throws naming the missing ones (production: topics are declared by the platform). A broker
   * that has just started answers some metadata requests with retriable errors for a few seconds,
   * so this retries those instead of failing.
   */
  async ensureTopics(keys: readonly TopicKey[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.createMissingTopics(keys);
      } catch (err) {
        const retriable =
          (err as { retriable?: boolean }).retriable === true || (err as { name?: string }).name === 'KafkaJSNumberOfRetriesExceeded';
        if (!retriable || attempt >= 10) throw err;
        this.log.warn({ err, attempt }, 'creating topics failed, retrying');
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  /** Declared topics (of `keys`) the cluster does not have. */
  async missingTopics(keys: readonly TopicKey[]): Promise<string[]> {
    const admin: Admin = this.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      return topicDeclarations({ prefix: this.prefix, keys })
        .filter((t) => !existing.has(t.name))
        .map((t) => t.name);
    } finally {
      await admin.disconnect();
    }
  }

  private async createMissingTopics(keys: readonly TopicKey[]): Promise<void> {
    if (keys.length === 0) return;
    const admin: Admin = this.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const missing = topicDeclarations({
        prefix: this.prefix,
        keys,
        ...(this.topicPolicy.minInsyncReplicas !== undefined ? { minInsyncReplicas: this.topicPolicy.minInsyncReplicas } : {}),
      }).filter((t) => !existing.has(t.name));
      if (missing.length === 0) return;
      if (this.topicPolicy.mode === 'verify') {
        throw Object.assign(
          new Error(
            `Kafka topics missing (KAFKA_TOPICS_MODE=verify; declare them with the topics Job or KafkaTopic resources): ${missing.map((t) => t.name).join(', ')}`,
          ),
          {
            retriable: false,
            missingTopics: missing.map((t) => t.name),
          },
        );
      }
      await admin.createTopics({
        topics: missing.map((t) => ({
          topic: t.name,
          numPartitions: t.partitions,
          replicationFactor: this.topicPolicy.replicationFactor,
          configEntries: Object.entries(t.config).map(([name, value]) => ({ name, value })),
        })),
        waitForLeaders: true,
      });
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
        headers: headersOf(m),
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
          headers: headersOf(m),
        })),
      })),
    });
  }

  /** The producer is connected (it reconnects by itself after a broker outage). */
  get isConnected(): boolean {
    return this.connected;
  }

  async disconnect(): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    await this.producer.disconnect();
  }
}
