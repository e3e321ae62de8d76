import type { Envelope, TopicKey } from '@wdr/contracts';
import pg from 'pg';
import type { Gauge } from 'prom-client';
import { preparedQuery, type RawSql } from '../db.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { currentRequestId, REQUEST_ID_HEADER, withRequestId } from '../request-context.js';
import { PgListener, pgConnectionFor } from '../pg-listen.js';
import type { KafkaBus, OutgoingMessage } from './bus.js';

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
    outboxJson(envelope),
  );
}

/**
 * Where an outbox row keeps the request id of the work that wrote it, inside the stored envelope
 * (no column to migrate in every service); the relay takes it out again and sends it as the
 * message's `x-request-id` header, so the envelope on the wire is the catalog's.
 */
const ROW_REQUEST_ID = '$request_id';

/**
 * The `envelope` column's value for a message written now: the envelope, plus the current request
 * id for the relay. For services that insert outbox rows with their own SQL.
 */
export function outboxJson(envelope: Envelope, requestId: string | undefined = currentRequestId()): string {
  return JSON.stringify(requestId === undefined ? envelope : { ...envelope, [ROW_REQUEST_ID]: requestId });
}

/**
 * `enqueue` for many messages (a batch admission writes thousands): one INSERT per 500 rows
 * instead of one per message, in the caller's transaction, in the given order. A message's
 * `requestId`, when the key is present, is the one its row carries instead of the current one (a
 * batch of several requests' work).
 */
export async function enqueueMany(
  tx: RawSql,
  messages: readonly { topic: TopicKey; key: string; envelope: Envelope; requestId?: string | undefined }[],
): Promise<void> {
  for (let i = 0; i < messages.length; i += 500) {
    const chunk = messages.slice(i, i + 500);
    await tx.$executeRawUnsafe(
      `INSERT INTO outbox_messages (topic, message_key, envelope)
       SELECT t, k, e::jsonb FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS m(t, k, e, n) ORDER BY n`,
      chunk.map((m) => m.topic),
      chunk.map((m) => m.key),
      chunk.map((m) => ('requestId' in m ? outboxJson(m.envelope, m.requestId) : outboxJson(m.envelope))),
    );
  }
}

interface OutboxRow {
  id: string;
  topic: string;
  message_key: string;
  envelope: Envelope;
}

/** A stored row as the message to produce: the envelope as the catalog has it, the request id as a header. */
function messageOf(topic: string, row: OutboxRow): OutgoingMessage & { topic: string } {
  const { [ROW_REQUEST_ID]: requestId, ...envelope } = row.envelope as Envelope & { [ROW_REQUEST_ID]?: unknown };
  return {
    topic,
    key: row.message_key,
    envelope,
    // The relay itself runs outside any request: the row's id, or none at all.
    headers: typeof requestId === 'string' ? { [REQUEST_ID_HEADER]: requestId } : {},
  };
}

/** The channel every service's `outbox_messages` trigger notifies, with its schema as the payload. */
export const OUTBOX_CHANNEL = 'wdr_outbox';

/** How often the relay's LISTEN connection is checked (PgListener's heartbeat; the poll is the safety net). */
const OUTBOX_LISTEN_HEARTBEAT_MS = 30_000;

/**
 * The safety poll's pace while the relay listens. A listening relay hears every commit; what it can
 * miss is a notification sent while its connection was dying unnoticed, which the heartbeat finds
 * within OUTBOX_LISTEN_HEARTBEAT_MS (and listening again publishes what waits). A poll more often
 * than that finds nothing a listening relay would not: at `pollMs` (5 s) it was a round trip every
 * 5 s in every idle service. While not listening, the poll keeps `pollMs`.
 */
const LISTENING_POLL_MS = OUTBOX_LISTEN_HEARTBEAT_MS;

/**
 * A relay round's two statements, prepared once per connection (kit/db.ts preparedQuery): a round
 * at a few pages a second is mostly these, and Postgres parsed and planned them again each time as
 * unnamed statements (0.67 of their 0.82 ms of server time per round, over a browser bench run).
 */
const RELAY_READ = `WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(hashtext($2)) AS locked)
         SELECT l.locked, o.id::text AS id, o.topic, o.message_key, o.envelope
           FROM l LEFT JOIN LATERAL (
             SELECT id, topic, message_key, envelope FROM outbox_messages WHERE l.locked AND published_at IS NULL ORDER BY id LIMIT $1
              FOR UPDATE SKIP LOCKED
           ) o ON true`;
const RELAY_MARK = `WITH m AS (UPDATE outbox_messages SET published_at = now() WHERE id = ANY($1::bigint[]) RETURNING 1),
              n AS (SELECT count(*)::int AS n FROM m)
         SELECT n.n, pg_advisory_unlock(hashtext($2)) FROM n`;

/**
 * Publishes committed outbox rows. It wakes when a transaction that inserted rows commits: each
 * service's `outbox_messages` has a statement trigger that sends `NOTIFY wdr_outbox, '<schema>'`,
 * which Postgres delivers at commit to every replica listening (and drops on rollback), and
 * `nudge()` is the same signal within the process. `pollMs` is only the safety net (a notification
 * lost while the listening connection was down). While rows keep coming it drains batch after
 * batch; with nothing to publish it costs nothing but the slow poll.
 *
 * It reads and marks rows with node-postgres on a pool of its own (two connections: one drains, one
 * listens) rather than through Prisma: the relay's statements are the fleet's most frequent, and the
 * listening connection needs a plain driver anyway. A batch is two statements and no transaction
 * (drainOnce): replicas of a service take turns through an advisory lock instead of holding rows
 * locked in a transaction open across the produce.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private inFlight: Promise<void> | undefined;
  private wakeRequested = false;
  private lastSuccessAt = Date.now();
  private readonly pool: pg.Pool;
  private readonly listener: PgListener;
  /** The advisory lock one relay of the schema holds while it drains (hashed in SQL). */
  private readonly lockKey: string;
  /** The last drain found another replica's relay draining. */
  private busy = false;
  /** Rows a drain publishes at most (`batchSize`, 500). */
  private readonly batch: number;
  /** The LISTEN connection is up: commits wake the relay, and the safety poll slows (LISTENING_POLL_MS). */
  private listening = false;
  /** The armed timer is a safety poll (not a drain asked for). */
  private probeArmed = false;

  constructor(
    private readonly opts: {
      /** The service's database URL (with `?schema=`, as Prisma takes it). */
      databaseUrl: string;
      bus: KafkaBus;
      log: Logger;
      /**
       * Safety-net poll when no notification arrives, while the relay does not listen; while it
       * listens, every LISTENING_POLL_MS (or `pollMs` if longer).
       */
      pollMs: number;
      batchSize?: number;
      /** Published rows older than this are deleted. */
      retainMs?: number;
      /**
       * Exports `<prefix>_outbox_unpublished_messages` and `_outbox_oldest_unpublished_age_seconds`,
       * read from the table at scrape time (every replica reports the same table: take max), and
       * `_outbox_published_total` / `_outbox_publish_failures_total`.
       */
      metrics?: ServiceMetrics;
    },
  ) {
    const { schema, config } = pgConnectionFor(opts.databaseUrl);
    this.lockKey = `wdr_outbox_relay:${schema}`;
    this.batch = opts.batchSize ?? 500;
    this.pool = new pg.Pool({ ...config, max: 1 });
    this.listener = new PgListener({
      connection: config,
      channel: OUTBOX_CHANNEL,
      log: opts.log,
      onNotify: (payload) => {
        if (payload === schema) this.nudge();
      },
      // Rows committed while nobody listened are published now rather than at the next poll.
      onListening: () => {
        this.listening = true;
        this.nudge();
      },
      // Back to the safety poll's own pace until it listens again (a slow poll armed while it
      // listened is brought forward).
      onLost: () => {
        this.listening = false;
        if (this.running && this.probeArmed) this.schedule(this.opts.pollMs, true);
      },
      // The poll publishes whatever a lost notification left, so a listening connection that died
      // quietly costs latency, not rows: it is checked twice a minute, not every 5 s.
      heartbeatMs: OUTBOX_LISTEN_HEARTBEAT_MS,
    });
    // A pooled connection that breaks while idle is discarded by the pool; the error must not crash.
    this.pool.on('error', (err) => opts.log.warn({ err }, 'outbox: idle database connection failed'));
    if (opts.metrics) this.exportMetrics(opts.metrics);
  }

  private published: { inc: (n: number) => void } | undefined;
  private publishFailures: { inc: () => void } | undefined;

  private exportMetrics(metrics: ServiceMetrics): void {
    const published = metrics.shared.counter('outbox_published_total', 'Outbox rows published to Kafka.', [] as const);
    const failures = metrics.shared.counter(
      'outbox_publish_failures_total',
      'Outbox relay rounds that failed (Kafka or the database unreachable); retried.',
      [] as const,
    );
    published.inc(0);
    failures.inc(0);
    this.published = { inc: (n) => published.inc(n) };
    this.publishFailures = { inc: () => failures.inc() };
    // One query per scrape serves both gauges; a scrape must not fail or hang because the database
    // does: after 2 s (or an error) the gauges keep their previous value.
    let pending: Promise<{ n: number; age: number } | undefined> | undefined;
    const stats = () =>
      (pending ??= Promise.race([
        this.pool
          .query<{ n: number; age: number }>(
            `SELECT count(*)::int AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age
               FROM (SELECT created_at FROM outbox_messages WHERE published_at IS NULL ORDER BY id LIMIT 100000) u`,
          )
          .then((r) => r.rows[0]),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref()),
      ])
        .catch((err: unknown) => {
          this.opts.log.debug({ err }, 'outbox: backlog query for metrics failed');
          return undefined;
        })
        .finally(() => setTimeout(() => (pending = undefined), 1_000).unref()));
    // Read at scrape time, both from the one query; the newest relay of a registry reports (tests
    // build several against one registry).
    const scraped = (pick: (r: { n: number; age: number }) => number) =>
      async function (this: Gauge) {
        const r = await stats();
        if (r) this.set(pick(r));
      };
    metrics.shared.gauge(
      'outbox_unpublished_messages',
      'Outbox rows committed but not yet published (counted up to 100000).',
      [] as const,
      scraped((r) => r.n),
    );
    metrics.shared.gauge(
      'outbox_oldest_unpublished_age_seconds',
      'Age of the oldest unpublished outbox row; 0 when none.',
      [] as const,
      scraped((r) => r.age),
    );
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.listener.start();
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

  /**
   * After a local commit that may have written outbox rows (a consumer's batch, a route's write):
   * while the relay listens, that commit's own notification wakes it (the outbox's insert trigger,
   * which notifies only for a statement that inserted rows), so this does nothing; a relay that
   * does not listen now publishes soon instead of at its next poll. Every consumed batch and every
   * committing internal route calls it: nudging unconditionally cost a relay round (two
   * statements) per call, with or without rows.
   */
  nudgeUnlessListening(): void {
    if (!this.listening) this.nudge();
  }

  /** True while the relay keeps draining; a relay stuck for a minute makes the service unready. */
  healthy(): boolean {
    return this.running && Date.now() - this.lastSuccessAt < Math.max(60_000, this.opts.pollMs * 3);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.listener.stop();
    await this.inFlight;
    // One last drain so a graceful stop leaves nothing committed but unpublished.
    await this.drainOnce().catch((err: unknown) => this.opts.log.warn({ err }, 'outbox: final drain failed'));
    await this.pool.end().catch(() => undefined);
  }

  /** `probe`: a safety-poll wake-up, which usually finds nothing (a nudge usually has rows). */
  private schedule(ms: number, probe = false): void {
    if (this.timer) clearTimeout(this.timer);
    this.probeArmed = probe;
    // A nudge comes from a request's commit: the relay's work is no request's (rows carry their own).
    this.timer = setTimeout(
      () =>
        withRequestId(undefined, () => {
          this.probeArmed = false;
          this.inFlight = this.tick(probe).finally(() => {
            this.inFlight = undefined;
            // A nudge between the round's decision and here found it still in flight: run now.
            if (this.wakeRequested && this.running) this.nudge();
          });
        }),
      ms,
    );
  }

  private async tick(probe: boolean): Promise<void> {
    let published = 0;
    let failed = false;
    try {
      published = probe ? await this.drainIfPending() : await this.drainOnce();
      this.lastSuccessAt = Date.now();
      if (published > 0) this.published?.inc(published);
      if (Math.random() < 0.01) await this.purge();
    } catch (err) {
      failed = true;
      this.publishFailures?.inc();
      this.opts.log.warn({ err }, 'outbox: publish failed, will retry');
    }
    if (!this.running) return;
    // Another round at once only for a full batch (more may wait) or a wake-up that came during this
    // one. A batch that was not full took every row committed before its read; a row committed
    // since sent its own wake-up (NOTIFY, or this process's nudge after its commit), which either
    // came during the round (wakeRequested) or comes after it. Before, every round that published
    // anything was followed by one that, at a few pages a second, almost always found nothing: two
    // of the relay's statements per page for nothing.
    const again = published >= this.batch || this.wakeRequested;
    this.wakeRequested = false;
    // After a failure, retry within a second rather than at the slow poll.
    const busy = this.busy;
    this.busy = false;
    if (busy && !failed) this.schedule(50);
    else if (again && !failed) this.schedule(0);
    else if (failed) this.schedule(Math.min(1_000, this.opts.pollMs));
    else this.schedule(this.listening ? Math.max(this.opts.pollMs, LISTENING_POLL_MS) : this.opts.pollMs, true);
  }

  /**
   * The safety poll usually finds nothing to publish: one indexed probe outside a transaction
   * answers that in one round trip instead of three.
   */
  private async drainIfPending(): Promise<number> {
    const { rows } = await this.pool.query('SELECT 1 FROM outbox_messages WHERE published_at IS NULL LIMIT 1');
    return rows.length === 0 ? 0 : this.drainOnce();
  }

  /**
   * Publish one batch; returns how many rows were published (0 also when another replica's relay
   * is draining this schema right now: it picks up what is there, see below).
   *
   * Two statements, no transaction: the first takes the schema's relay lock (a session-level
   * advisory lock, so one relay of a service drains at a time) and reads the oldest unpublished
   * rows; after the produce, the second marks them published and releases the lock. A crash
   * between the two republishes the rows (at-least-once, as before; consumers deduplicate), and
   * the lock goes with the dead connection.
   *
   * The lock is released inside the marking statement, after its UPDATE and before it commits, and the next holder's
   * read takes its snapshot before it gets the lock: so the read locks its rows (`FOR UPDATE SKIP
   * LOCKED`, released at the statement's end), which skips rows whose marking is still uncommitted
   * and re-checks the others against their latest committed version, so a row just marked is
   * never read again (two relays on one schema publish every row once: kafka.test.ts).
   */
  async drainOnce(): Promise<number> {
    const client = await this.pool.connect();
    let broken = false;
    // A checked-out client has no pool listener: a socket that breaks between queries (say while the
    // batch is being produced) would emit an unhandled 'error' and end the process. Record it; the next
    // query fails and the connection is discarded on release (which also drops the lock).
    const onError = (err: Error) => {
      broken = true;
      this.opts.log.warn({ err }, 'outbox: database connection lost mid-batch');
    };
    client.on('error', onError);
    let locked = false;
    try {
      const { rows } = await client.query<OutboxRow & { locked: boolean }>(preparedQuery(RELAY_READ, [this.batch, this.lockKey]));
      locked = rows[0]?.locked === true;
      if (!locked) {
        // Another replica drains: it keeps going while it finds rows; look again shortly in case
        // its last round had already read before this nudge's rows committed.
        this.wakeRequested = true;
        this.busy = true;
        return 0;
      }
      const messages = rows.filter((r) => r.id !== null);
      if (messages.length > 0) {
        // One produce request for the whole batch, whatever its topics, in table order per topic.
        await this.opts.bus.sendBatch(messages.map((r) => messageOf(this.opts.bus.topic(r.topic as TopicKey), r)));
      }
      // The unlock is evaluated on the one row of `n`, which exists only once the UPDATE has marked
      // (and so locked) every row. Written as `SELECT pg_advisory_unlock(..), (SELECT count(*) FROM m)`,
      // Postgres released the lock before running the UPDATE: a relay that took it in between read the
      // same rows and published them a second time (kafka.test.ts, "marks its rows before it lets go").
      await client.query(preparedQuery(RELAY_MARK, [messages.map((r) => r.id), this.lockKey]));
      locked = false;
      return messages.length;
    } finally {
      if (locked) {
        // The produce failed: give the lock back now (or with the connection, if that fails too).
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [this.lockKey]).catch(() => {
          broken = true;
        });
      }
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  private async purge(): Promise<void> {
    const retainMs = this.opts.retainMs ?? 24 * 3600 * 1000;
    await this.pool.query(
      `DELETE FROM outbox_messages WHERE published_at IS NOT NULL AND published_at < now() - ($1::int * interval '1 millisecond')`,
      [retainMs],
    );
  }
}
