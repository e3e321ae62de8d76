import { randomUUID } from 'node:crypto';
import type { CatalogEnvelope } from '@wdr/contracts';
import type { ConsumerHandle, KafkaBus } from '@wdr/kit/kafka';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import type { StoredRequestEvent } from '../domain/reads/request-events.js';

/** How long the live consumer stays joined after the last stream on this instance closed. */
const LIVE_LINGER_MS = 60_000;

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
 * Live request events for the gateway's event streams, straight from Kafka (while the consumer is
 * not connected, the streams poll the stored events instead; see event-stream.ts): the orchestrator's
 * `request.event_appended` on `request.lifecycle`, fanned out to the streams open on this instance.
 *
 * Every gateway instance must see every event (a stream may be open on any of them), so each
 * process consumes with a consumer group of its own (`<prefix>gateway.sse.<random>`), starting at
 * the latest offset: it needs only what happens while it runs; history comes from the database.
 * Nothing is committed, so groups of stopped instances leave nothing behind but an empty group.
 *
 * The kit's broadcast consumer, not its idempotent one: delivering an event to a stream has no
 * durable effect to record (and the gateway has no processed-messages table). Duplicates and order are
 * handled per stream by event id, and a gap (an event missed while the consumer was away) is filled
 * from the stored history, so at-least-once delivery is enough.
 */
export class LiveRequestEvents {
  readonly groupId: string;
  private readonly subscribers = new Map<string, Set<LiveSubscriber>>();
  private consumer: ConsumerHandle | undefined;
  private connecting: Promise<void> | undefined;
  /** start() was called: the consumer may run (while a stream is open, and a linger after). */
  private started = false;
  private stopped = false;
  /** Streams subscribed on this instance, over every request. */
  private streams = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private readonly delivered;
  private readonly open;

  /**
   * `bus`: the Kafka client, made on the first stream's connect (the gateway loads kafkajs only
   * then: an instance nobody streams from holds no Kafka client at all).
   */
  constructor(
    private readonly opts: {
      bus: () => Promise<KafkaBus>;
      log: Logger;
      metrics: ServiceMetrics;
      instanceId?: string;
      /** How long the consumer stays joined after the last stream closed (LIVE_LINGER_MS). */
      lingerMs?: number;
    },
  ) {
    this.groupId = `gateway.sse.${opts.instanceId ?? randomUUID()}`;
    this.delivered = opts.metrics.counter('sse_live_events_total', 'Lifecycle events consumed for event streams, by outcome.', [
      'outcome',
    ] as const);
    this.open = opts.metrics.gauge('sse_streams_open', 'Request event streams open on this instance.', [] as const);
  }

  /**
   * Allow the consumer. It runs only while a stream is open on this instance (and LIVE_LINGER_MS
   * after the last one closed): an instance nobody streams from fetches nothing (at rest the
   * consumer costs a fetch a second). It connects in the background: until it has joined (or
   * while Kafka is unreachable) a stream polls the stored events, and every join resyncs the open
   * streams from the stored history, which holds every event before it is published.
   */
  start(): void {
    this.started = true;
    if (this.streams > 0) this.wake();
  }

  private wake(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (!this.started || this.stopped || this.consumer) return;
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
  }

  /** No stream for LIVE_LINGER_MS: the consumer leaves its group until the next stream opens. */
  private async sleepIfIdle(): Promise<void> {
    this.idleTimer = undefined;
    if (this.streams > 0 || !this.consumer) return;
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer.stop().catch((err: unknown) => this.opts.log.warn({ err }, 'live events: stopping the idle consumer failed'));
    // A stream opened while it stopped: join again.
    if (this.streams > 0) this.wake();
  }

  private async connect(): Promise<void> {
    const { log, metrics } = this.opts;
    for (let failures = 0; !this.stopped && this.streams > 0; failures++) {
      try {
        const [bus, { startBroadcastConsumer }] = await Promise.all([this.opts.bus(), import('@wdr/kit/kafka')]);
        await bus.ensureTopics(['requestLifecycle']);
        const consumer = await startBroadcastConsumer({
          bus,
          log,
          metrics,
          group: this.groupId,
          topics: ['requestLifecycle'],
          // Keyed by request id: most events concern no stream here, and are skipped unparsed.
          wants: (key) => (this.subscribers.get(key)?.size ?? 0) > 0,
          onEvent: (envelope) => this.dispatch(envelope),
          onJoin: () => this.resyncAll(),
          // A short idle fetch wait: a stopping instance waits for the fetch in flight (kafkajs), so a
          // deploy's SIGTERM ends within a second; events arriving meanwhile are answered at once
          // whatever the wait. At rest this is one small fetch a second.
          fetchWaitMs: 1_000,
        });
        if (this.stopped || this.streams === 0) await consumer.stop();
        else this.consumer = consumer;
        return;
      } catch (err) {
        log.warn({ err, failures: failures + 1 }, 'live events: Kafka unavailable; streams poll stored events meanwhile');
        await new Promise((r) => setTimeout(r, Math.min(1_000 * 2 ** Math.min(failures, 5), 30_000)).unref());
      }
    }
  }

  /**
   * Live delivery works: no stream is open here (nothing to deliver, and no consumer by design), or
   * the consumer has joined its group, not crashed, and fetched within the last minute.
   */
  ready(): boolean {
    return this.streams === 0 || (this.consumer?.ready() ?? false);
  }

  /** A consumer is joined (or joining) on this instance right now. */
  get consuming(): boolean {
    return this.consumer !== undefined || this.connecting !== undefined;
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
    this.stopped = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    // A connection attempt still in progress (a group join takes seconds; a broker that is down,
    // forever) is not waited for: it stops its consumer itself once it sees `stopped`, and the
    // instance's group is its own, so nobody waits for it to leave.
    await this.consumer?.stop();
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
    this.streams++;
    this.wake();
    return () => {
      const current = this.subscribers.get(requestId);
      if (!current?.delete(subscriber)) return;
      this.open.dec();
      this.streams--;
      if (current.size === 0) this.subscribers.delete(requestId);
      if (this.streams === 0 && !this.idleTimer && !this.stopped) {
        this.idleTimer = setTimeout(() => void this.sleepIfIdle(), this.opts.lingerMs ?? LIVE_LINGER_MS);
        this.idleTimer.unref();
      }
    };
  }

  private dispatch(envelope: CatalogEnvelope): void {
    if (envelope.type !== 'request.event_appended') return;
    // Parsed against the catalog's schema by the consumer: the type narrows the data.
    const { request_id, event_id, kind, status, payload, created_at } = envelope.data;
    const subscribers = this.subscribers.get(request_id);
    if (!subscribers || subscribers.size === 0) return;
    this.delivered.inc({ outcome: 'delivered' });
    for (const s of [...subscribers]) s.onEvent({ event_id, kind, status, payload, created_at });
  }

  private resyncAll(): void {
    for (const set of this.subscribers.values()) for (const s of [...set]) s.onResync();
  }
}
