import type { Envelope, TopicKey } from '@wdr/contracts';
import type { RawSql, TxCapable } from '../db.js';
import type { Logger } from '../log.js';
import type { KafkaBus } from './bus.js';

/**
 * Transactional outbox. A write that must also publish inserts its message with `enqueue` in the
 * same database transaction; the relay publishes committed rows and marks them. Delivery is
 * at-least-once: a crash between produce and mark republishes, and consumers deduplicate by
 * envelope id. Every service that publishes has the `outbox_messages` table in its own schema.
 */
export async function enqueue(tx: RawSql, topic: TopicKey, key: string, envelope: Envelope): Promise<void> {
  await tx.$executeRawUnsafe(
    'INSERT INTO outbox_messages (topic, message_key, envelope) VALUES ($1, $2, $3::jsonb)',
    topic,
    key,
    JSON.stringify(envelope),
  );
}

/**
 * `enqueue` for many messages (a batch admission writes thousands): one INSERT per 500 rows
 * instead of one per message, in the caller's transaction, in the given order.
 */
export async function enqueueMany(tx: RawSql, messages: readonly { topic: TopicKey; key: string; envelope: Envelope }[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 500) {
    const chunk = messages.slice(i, i + 500);
    await tx.$executeRawUnsafe(
      `INSERT INTO outbox_messages (topic, message_key, envelope)
       SELECT t, k, e::jsonb FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS m(t, k, e, n) ORDER BY n`,
      chunk.map((m) => m.topic),
      chunk.map((m) => m.key),
      chunk.map((m) => JSON.stringify(m.envelope)),
    );
  }
}

interface OutboxRow {
  id: bigint;
  topic: string;
  message_key: string;
  envelope: Envelope;
}

export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private inFlight: Promise<void> | undefined;
  private wakeRequested = false;
  private lastSuccessAt = Date.now();

  constructor(
    private readonly opts: {
      db: TxCapable;
      bus: KafkaBus;
      log: Logger;
      pollMs: number;
      batchSize?: number;
      /** Published rows older than this are deleted. */
      retainMs?: number;
    },
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Publish soon, without waiting for the next poll (called after a local commit). */
  nudge(): void {
    if (!this.running) return;
    if (this.inFlight) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(0);
  }

  /** True while the relay keeps draining; a relay stuck for a minute makes the service unready. */
  healthy(): boolean {
    return this.running && Date.now() - this.lastSuccessAt < 60_000;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.inFlight;
    // One last drain so a graceful stop leaves nothing committed but unpublished.
    await this.drainOnce().catch((err: unknown) => this.opts.log.warn({ err }, 'outbox: final drain failed'));
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.inFlight = this.tick().finally(() => {
        this.inFlight = undefined;
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    let published = 0;
    try {
      published = await this.drainOnce();
      this.lastSuccessAt = Date.now();
      if (Math.random() < 0.01) await this.purge();
    } catch (err) {
      this.opts.log.warn({ err }, 'outbox: publish failed, will retry');
    }
    if (!this.running) return;
    const again = published > 0 || this.wakeRequested;
    this.wakeRequested = false;
    this.schedule(again ? 0 : this.opts.pollMs);
  }

  /** Publish one batch; returns how many rows were published. */
  async drainOnce(): Promise<number> {
    const batch = this.opts.batchSize ?? 200;
    return this.opts.db.$transaction(
      async (tx) => {
        const rows = await tx.$queryRawUnsafe<OutboxRow[]>(
          `SELECT id, topic, message_key, envelope FROM outbox_messages
            WHERE published_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
          batch,
        );
        if (rows.length === 0) return 0;
        const byTopic = new Map<string, OutboxRow[]>();
        for (const row of rows) {
          const list = byTopic.get(row.topic) ?? [];
          list.push(row);
          byTopic.set(row.topic, list);
        }
        for (const [topic, list] of byTopic) {
          await this.opts.bus.send(
            this.opts.bus.topic(topic as TopicKey),
            list.map((r) => ({ key: r.message_key, envelope: r.envelope })),
          );
        }
        await tx.$executeRawUnsafe(
          'UPDATE outbox_messages SET published_at = now() WHERE id = ANY($1::bigint[])',
          rows.map((r) => r.id.toString()),
        );
        return rows.length;
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
  }

  private async purge(): Promise<void> {
    const retainMs = this.opts.retainMs ?? 24 * 3600 * 1000;
    await this.opts.db.$executeRawUnsafe(
      `DELETE FROM outbox_messages WHERE published_at IS NOT NULL AND published_at < now() - ($1::int * interval '1 millisecond')`,
      retainMs,
    );
  }
}
