import { randomUUID } from 'node:crypto';
import type { Consumer, KafkaMessage } from 'kafkajs';
import { envelopeSchema, RequestEventAppended } from '@wdr/contracts';
import type { KafkaBus } from '@wdr/kit/kafka';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { StoredRequestEvent } from '../domain/reads/request-events.js';

/** One open event stream's interest in one request. */
export interface LiveSubscriber {
  /** A newly appended event of the request, as published on `request.lifecycle`. */
  onEvent: (event: StoredRequestEvent) => void;
  /**
   * The consumer (re)joined: events published while it was not consuming were not delivered, so
   * the stream must catch up from the stored history.
   */
  onResync: () => void;
  /** The instance is shutting down: end the stream now (the client reconnects elsewhere). */
  onShutdown: () => void;
}

/**
 * Live request events for the gateway's event streams, straight from Kafka: the orchestrator's
 * `request.event_appended` on `request.lifecycle`, fanned out to the streams open on this instance.
 *
 * Every gateway instance must see every event (a stream may be open on any of them), so each
 * process consumes with a consumer group of its own (`<prefix>gateway.sse.<random>`), starting at
 * the latest offset: it needs only what happens while it runs; history comes from the database.
 * Groups of stopped instances hold no members; Kafka drops their offsets after
 * `offsets.retention.minutes`.
 *
 * A plain consumer, not the kit's idempotent one: delivering an event to a stream has no durable
 * effect to record (and the gateway has no processed-messages table). Duplicates and order are
 * handled per stream by event id, and a gap (an event missed while the consumer was away) is filled
 * from the stored history, so at-least-once delivery is enough.
 */
export class LiveRequestEvents {
  readonly groupId: string;
  private readonly subscribers = new Map<string, Set<LiveSubscriber>>();
  private consumer: Consumer | undefined;
  private joined = false;
  private closing = false;
  private crashed = false;
  private lastFetchAt = 0;
  private readonly delivered;
  private readonly open;

  constructor(private readonly opts: { bus: KafkaBus; log: Logger; metrics: ServiceMetrics; instanceId?: string }) {
    this.groupId = `${opts.bus.prefix}gateway.sse.${opts.instanceId ?? randomUUID()}`;
    this.delivered = opts.metrics.counter('sse_live_events_total', 'Lifecycle events consumed for event streams, by outcome.', ['outcome'] as const);
    this.open = opts.metrics.gauge('sse_streams_open', 'Request event streams open on this instance.', [] as const);
  }

  async start(): Promise<void> {
    const { bus, log } = this.opts;
    await bus.ensureTopics(['requestLifecycle']);
    // A short idle fetch wait: a stopping instance waits for the fetch in flight (kafkajs), and
    // events arriving meanwhile are answered at once whatever the wait.
    const consumer = bus.kafka.consumer({
      groupId: this.groupId,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
      maxWaitTimeInMs: 1_000,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      this.joined = true;
      this.resyncAll();
    });
    consumer.on(consumer.events.FETCH_START, () => {
      this.lastFetchAt = Date.now();
    });
    consumer.on(consumer.events.CRASH, (e) => {
      log.error({ err: e.payload.error, restart: e.payload.restart }, 'live events consumer crashed');
      if (!e.payload.restart) this.crashed = true;
    });
    await consumer.connect();
    await consumer.subscribe({ topic: bus.topic('requestLifecycle'), fromBeginning: false });
    await consumer.run({ autoCommit: true, eachMessage: async ({ message }) => this.dispatch(message) });
  }

  /** Joined its group, not crashed, and fetched within the last minute. */
  ready(): boolean {
    return this.joined && !this.crashed && Date.now() - this.lastFetchAt < 60_000;
  }

  /** True once shutdown began: new streams are refused, open ones have been ended. */
  get shuttingDown(): boolean {
    return this.closing;
  }

  /** End every open stream (called before the HTTP server waits for its connections). */
  closeAll(): void {
    this.closing = true;
    for (const set of this.subscribers.values()) for (const s of [...set]) s.onShutdown();
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
    this.consumer = undefined;
  }

  subscribe(requestId: string, subscriber: LiveSubscriber): () => void {
    let set = this.subscribers.get(requestId);
    if (!set) {
      set = new Set();
      this.subscribers.set(requestId, set);
    }
    set.add(subscriber);
    this.open.inc();
    return () => {
      const current = this.subscribers.get(requestId);
      if (!current?.delete(subscriber)) return;
      this.open.dec();
      if (current.size === 0) this.subscribers.delete(requestId);
    };
  }

  private dispatch(message: KafkaMessage): void {
    // Keyed by request id: most events concern no stream here, and are skipped unparsed.
    const subscribers = this.subscribers.get(message.key?.toString() ?? '');
    if (!subscribers || subscribers.size === 0) return;
    const event = decode(message);
    if (!event) {
      this.delivered.inc({ outcome: 'undecodable' });
      return;
    }
    this.delivered.inc({ outcome: 'delivered' });
    for (const s of [...subscribers]) s.onEvent(event);
  }

  private resyncAll(): void {
    for (const set of this.subscribers.values()) for (const s of [...set]) s.onResync();
  }
}

function decode(message: KafkaMessage): StoredRequestEvent | undefined {
  try {
    const env = envelopeSchema.safeParse(JSON.parse(message.value?.toString() ?? ''));
    if (!env.success || env.data.type !== 'request.event_appended') return undefined;
    const data = RequestEventAppended.safeParse(env.data.data);
    if (!data.success) return undefined;
    const { event_id, kind, status, payload, created_at } = data.data;
    return { event_id, kind, status, payload, created_at };
  } catch {
    return undefined;
  }
}
