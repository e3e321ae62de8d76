import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, eventually, pgRawSql, uniqueTopicPrefix, KAFKA_BROKERS, type TestDatabase } from '@wdr/testkit';
import type { Envelope } from '@wdr/contracts';
import { createLogger } from '../log.js';
import { createMetrics } from '../metrics.js';
import { pgConnectionFor } from '../pg-listen.js';
import { KafkaBus } from './bus.js';
import { PoisonMessageError, SKIPPED, startConsumer, type ConsumerHandle } from './consumer.js';
import { makeEnvelope } from './envelope.js';
import { enqueue, OutboxRelay } from './outbox.js';

/** The kit's Kafka pieces against the real broker and the real Postgres (kit tables cloned from a service template). */
const log = createLogger('kit-test', 'silent');
let database: TestDatabase;
let db: ReturnType<typeof pgRawSql>;
let bus: KafkaBus;
const consumers: ConsumerHandle[] = [];

beforeAll(async () => {
  database = await createTestDatabase('browser-renderer');
  db = pgRawSql(database.url);
  await db.$executeRawUnsafe('CREATE TABLE side_effects (event_id uuid, note text)');
  bus = new KafkaBus({ clientId: 'kit-test', brokers: KAFKA_BROKERS, prefix: uniqueTopicPrefix(), log });
  await bus.ensureTopics(['renderJobs', 'fetchJobs']);
  await bus.connect();
}, 60_000);

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await bus?.disconnect();
  await db?.$disconnect();
  await database?.drop();
}, 60_000);

const renderJob = (id = randomUUID()) =>
  makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() }, { id });

async function readDlq(topic: 'renderJobs' | 'fetchJobs', expected: number) {
  const seen: { reason: string; envelope: Envelope }[] = [];
  const c = bus.kafka.consumer({ groupId: `dlq-reader-${randomUUID()}` });
  await c.connect();
  await c.subscribe({ topic: bus.dlq(topic), fromBeginning: true });
  await c.run({
    eachMessage: async ({ message }) => {
      seen.push({ reason: message.headers?.['dlq-reason']?.toString() ?? '', envelope: JSON.parse(message.value!.toString()) as Envelope });
    },
  });
  await eventually(
    async () => seen.length,
    (n) => n >= expected,
    30_000,
  );
  await c.disconnect();
  return seen;
}

type ConsumerOptions = Parameters<typeof startConsumer>[0];

/** A bus of its own for one test (a fresh topic prefix, these topics created), connected; the test disconnects it. */
async function ownBus(clientId: string, topics: ('renderJobs' | 'fetchJobs')[] = ['renderJobs']): Promise<KafkaBus> {
  const b = new KafkaBus({ clientId, brokers: KAFKA_BROKERS, prefix: uniqueTopicPrefix(), log });
  await b.ensureTopics(topics);
  await b.connect();
  return b;
}

/** A consumer of `group` on this file's database and log, of render jobs unless `topics` says otherwise, with metrics of its own. */
function consume(
  b: KafkaBus,
  group: string,
  opts: Omit<ConsumerOptions, 'bus' | 'db' | 'log' | 'group' | 'metrics' | 'topics'> & Partial<Pick<ConsumerOptions, 'metrics' | 'topics'>>,
): Promise<ConsumerHandle> {
  // A stop waits for the fetch in flight: half a second at most, not kafkajs's five (as the test fleets' KAFKA_FETCH_WAIT_MS).
  return startConsumer({
    bus: b,
    db,
    log,
    metrics: createMetrics(group.replace(/-/g, '_')),
    group,
    topics: ['renderJobs'],
    fetchWaitMs: 500,
    ...opts,
  });
}

/** Send these envelopes to render jobs under one key (one partition), in this order. */
const sendInOrder = (b: KafkaBus, envelopes: Envelope[], key = 'one-partition') =>
  b.send(
    b.topic('renderJobs'),
    envelopes.map((envelope) => ({ key, envelope })),
  );

/** The group's committed offset on a topic (the highest over its partitions; -1 when none). */
async function committedOffset(b: KafkaBus, group: string, topic: 'renderJobs' | 'fetchJobs' = 'renderJobs'): Promise<number> {
  const admin = b.kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchOffsets({ groupId: `${b.prefix}${group}`, topics: [b.topic(topic)] });
    return offsets[0]!.partitions.map((p) => Number(p.offset)).reduce((a, c) => Math.max(a, c), -1);
  } finally {
    await admin.disconnect();
  }
}

/** The group's committed offsets on render jobs, summed over the partitions: how many messages are behind it. */
async function committedTotal(b: KafkaBus, group: string): Promise<number> {
  const admin = b.kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchOffsets({ groupId: `${b.prefix}${group}`, topics: [b.topic('renderJobs')] });
    return offsets[0]!.partitions.map((p) => Math.max(0, Number(p.offset))).reduce((a, c) => a + c, 0);
  } finally {
    await admin.disconnect();
  }
}

/** How many messages the render jobs' DLQ holds. */
async function deadLettered(b: KafkaBus): Promise<number> {
  const admin = b.kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(b.dlq('renderJobs'))).map((p) => Number(p.high)).reduce((a, c) => a + c, 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * `count` render jobs on a bus of their own, consumed as `group` by the crash-consumer fixture
 * (test/fixtures/crash-consumer.mjs) in a process of its own, which never returns from its handler
 * from the last message on (with `batch`, from its batch handler): once every effect is committed
 * and the offset is still short of the end, it is SIGKILLed. `atKill`: the offset committed then;
 * `appliedOnce`: the check after the next member's redelivery.
 */
async function crashAfterEffects(group: string, count: number, mode?: 'batch') {
  const b = await ownBus(group);
  const jobs = Array.from({ length: count }, () => renderJob());
  await sendInOrder(b, jobs);
  const effects = () =>
    db.$queryRawUnsafe<{ event_id: string; note: string }[]>(
      'SELECT event_id::text, note FROM side_effects WHERE event_id = ANY($1::uuid[])',
      jobs.map((j) => j.id),
    );
  const fixture = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'crash-consumer.mjs');
  const child = spawn(process.execPath, [fixture, database.url, b.prefix, group, String(count), ...(mode ? [mode] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  let atKill = 0;
  try {
    // Every transaction committed; the handler at the end never returned, so no offset was committed past it.
    await eventually(effects, (rows) => rows.length === count, 30_000);
    atKill = Math.max(0, await committedOffset(b, group));
    expect(atKill).toBeLessThan(count);
  } catch (err) {
    throw new Error(`${String(err)}\nconsumer output:\n${output}`);
  } finally {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
  /** Once the group's next member committed past every job: each job's effect is there once, from the first delivery. */
  const appliedOnce = async () => {
    await eventually(
      () => committedOffset(b, group),
      (o) => o === count,
      60_000,
    );
    const rows = await effects();
    expect(rows).toHaveLength(count);
    expect(new Set(rows.map((r) => r.note))).toEqual(new Set(['first delivery']));
  };
  return { b, atKill, appliedOnce };
}

describe('idempotent consumer', () => {
  it('applies a redelivered event once, and dead-letters a poison one after bounded retries without blocking the partition', async () => {
    const calls = new Map<string, number>();
    const metrics = createMetrics('kit_test_a');
    consumers.push(
      await consume(bus, 'kit-test-a', {
        metrics,
        maxAttempts: 3,
        handlers: {
          'render.job_requested': async (env, ctx) => {
            calls.set(env.id, (calls.get(env.id) ?? 0) + 1);
            if ((env.data as { request_id: string }).request_id === POISON) throw new Error('always fails');
            await ctx.transaction(async (tx) => {
              await tx.$executeRawUnsafe('INSERT INTO side_effects (event_id, note) VALUES ($1::uuid, $2)', env.id, 'done');
            });
          },
        },
      }),
    );
    const POISON = randomUUID();
    const once = renderJob();
    const poison = makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: POISON });
    const after = renderJob();
    // Same key so all land on one partition, in this order: the poison one must not block `after`.
    await sendInOrder(bus, [once, once, poison, after], 'k');

    await eventually(
      () => db.$queryRawUnsafe<{ event_id: string }[]>('SELECT event_id FROM side_effects'),
      (rows) => rows.length >= 2,
      30_000,
    );
    const rows = await db.$queryRawUnsafe<{ event_id: string }[]>('SELECT event_id FROM side_effects ORDER BY event_id');
    expect(rows.map((r) => r.event_id).sort()).toEqual([once.id, after.id].sort());
    expect(calls.get(poison.id)).toBe(3);
    const dlq = await readDlq('renderJobs', 1);
    expect(dlq[0]!.envelope.id).toBe(poison.id);
    expect(dlq[0]!.reason).toContain('always fails');
    expect(await metrics.registry.getSingleMetricAsString('wdr_kafka_messages_total')).toContain('outcome="dead_lettered"');
  }, 60_000);

  it('dead-letters an undecodable message at once and a PoisonMessageError without retries', async () => {
    let attempts = 0;
    consumers.push(
      await consume(bus, 'kit-test-b', {
        topics: ['fetchJobs'],
        maxAttempts: 5,
        handlers: {
          'fetch.job_requested': async () => {
            attempts++;
            throw new PoisonMessageError('cannot ever work');
          },
        },
      }),
    );
    const producer = bus.kafka.producer();
    await producer.connect();
    await producer.send({ topic: bus.topic('fetchJobs'), messages: [{ key: 'x', value: 'not json' }] });
    await producer.disconnect();
    const env = makeEnvelope('fetchJobs', 'fetch.job_requested', randomUUID(), { request_id: randomUUID() });
    await bus.send(bus.topic('fetchJobs'), [{ key: 'x', envelope: env }]);
    const dlq = await readDlq('fetchJobs', 2);
    expect(dlq.map((d) => d.reason)).toEqual(['value is not JSON', 'cannot ever work']);
    expect(attempts).toBe(1);
  }, 60_000);
});

describe('outbox relay', () => {
  it('publishes committed rows exactly as enqueued and never rolled-back ones, woken by the commit', async () => {
    const committed = renderJob();
    const rolledBack = renderJob();
    await db.$transaction(async (tx) => enqueue(tx, 'renderJobs', 'k1', committed));
    await expect(
      db.$transaction(async (tx) => {
        await enqueue(tx, 'renderJobs', 'k2', rolledBack);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');

    const received: Envelope[] = [];
    const c = bus.kafka.consumer({ groupId: `outbox-reader-${randomUUID()}` });
    await c.connect();
    await c.subscribe({ topic: bus.topic('renderJobs'), fromBeginning: true });
    await c.run({ eachMessage: async ({ message }) => void received.push(JSON.parse(message.value!.toString()) as Envelope) });

    // A poll far longer than the test: after its first drain, only a commit's NOTIFY wakes the relay.
    const relay = new OutboxRelay({ databaseUrl: database.url, bus, log, pollMs: 60_000 });
    relay.start();
    await eventually(async () => received.some((e) => e.id === committed.id), Boolean, 30_000);
    const later = renderJob();
    await db.$transaction(async (tx) => enqueue(tx, 'renderJobs', 'k3', later));
    await eventually(async () => received.some((e) => e.id === later.id), Boolean, 10_000);
    await relay.stop();
    await c.disconnect();
    expect(received.find((e) => e.id === committed.id)).toEqual(committed);
    expect(received.some((e) => e.id === rolledBack.id)).toBe(false);
    const pending = await db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM outbox_messages WHERE published_at IS NULL');
    expect(pending).toHaveLength(0);
    expect(relay.healthy()).toBe(false); // stopped
  }, 60_000);
});

describe('outbox relay rounds', () => {
  it('takes one round per wake-up when its batch was not full, and goes on at once after a full one', async () => {
    const received: Envelope[] = [];
    const c = bus.kafka.consumer({ groupId: `outbox-rounds-${randomUUID()}` });
    await c.connect();
    await c.subscribe({ topic: bus.topic('renderJobs'), fromBeginning: true });
    await c.run({ eachMessage: async ({ message }) => void received.push(JSON.parse(message.value!.toString()) as Envelope) });
    // A poll far longer than the test: only the start and the commits' NOTIFYs wake it.
    const relay = new OutboxRelay({ databaseUrl: database.url, bus, log, pollMs: 60_000, batchSize: 2 });
    const rounds = jest.spyOn(relay, 'drainOnce');
    relay.start();
    await eventually(
      async () => rounds.mock.calls.length,
      (n) => n >= 1,
      10_000,
    );
    const quiet = async () => {
      const n = rounds.mock.calls.length;
      await new Promise((r) => setTimeout(r, 700));
      return rounds.mock.calls.length === n;
    };
    await eventually(quiet, Boolean, 10_000, 0);
    const before = rounds.mock.calls.length;

    // One row: one round (before, a second one followed every round that published, and found nothing).
    const one = renderJob();
    await db.$transaction(async (tx) => enqueue(tx, 'renderJobs', 'r1', one));
    await eventually(async () => received.some((e) => e.id === one.id), Boolean, 10_000);
    await eventually(quiet, Boolean, 10_000, 0);
    expect(rounds.mock.calls.length - before).toBe(1);

    // Three rows in one transaction, batches of 2: a full round, then the rest at once.
    const three = [renderJob(), renderJob(), renderJob()];
    await db.$transaction(async (tx) => {
      for (const [i, e] of three.entries()) await enqueue(tx, 'renderJobs', `r3-${i}`, e);
    });
    await eventually(async () => three.every((t) => received.some((e) => e.id === t.id)), Boolean, 10_000);
    await eventually(quiet, Boolean, 10_000, 0);
    expect(rounds.mock.calls.length - before).toBe(3);
    await relay.stop();
    await c.disconnect();
  }, 60_000);
});

describe('outbox relay safety poll', () => {
  it('polls at pollMs only while it does not listen: a listening relay hears the commits and leaves the table alone', async () => {
    const relay = new OutboxRelay({ databaseUrl: database.url, bus, log, pollMs: 150 });
    // The safety poll's probe (a relay that is not woken reads nothing else).
    const probes = jest.spyOn(relay as unknown as { drainIfPending: () => Promise<number> }, 'drainIfPending');
    const listeners = async () =>
      await db.$queryRawUnsafe<{ pid: number }[]>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN wdr_outbox' AND pid <> pg_backend_pid()",
      );
    const probesOver = async (ms: number) => {
      const n = probes.mock.calls.length;
      await new Promise((r) => setTimeout(r, ms));
      return probes.mock.calls.length - n;
    };
    relay.start();
    await eventually(listeners, (l) => l.length === 1, 10_000);
    // Listening: the poll is the slow one (30 s), not one every 150 ms.
    expect(await probesOver(1_500)).toBe(0);
    // ... and a consumer's commit (which calls nudgeUnlessListening) costs it no round: the
    // commit's own notification wakes it when it wrote rows. A plain nudge still runs one.
    const rounds = jest.spyOn(relay as unknown as { drainOnce: () => Promise<number> }, 'drainOnce');
    for (let i = 0; i < 5; i++) relay.nudgeUnlessListening();
    await new Promise((r) => setTimeout(r, 300));
    expect(rounds).not.toHaveBeenCalled();
    relay.nudge();
    await eventually(
      async () => rounds.mock.calls.length,
      (n) => n === 1,
      5_000,
    );

    // Its connection lost: it polls at pollMs until it listens again (PgListener retries after 1 s).
    const [listening] = await listeners();
    await db.$queryRawUnsafe('SELECT pg_terminate_backend($1)', listening!.pid);
    const lost = probes.mock.calls.length;
    await eventually(listeners, (l) => l.length === 1 && l[0]!.pid !== listening!.pid, 10_000);
    expect(probes.mock.calls.length - lost).toBeGreaterThanOrEqual(2);
    expect(await probesOver(1_500)).toBe(0);

    // What was committed meanwhile is still published on the commit's notification.
    const received: Envelope[] = [];
    const c = bus.kafka.consumer({ groupId: `outbox-poll-${randomUUID()}` });
    await c.connect();
    await c.subscribe({ topic: bus.topic('renderJobs'), fromBeginning: true });
    await c.run({ eachMessage: async ({ message }) => void received.push(JSON.parse(message.value!.toString()) as Envelope) });
    const later = renderJob();
    await db.$transaction(async (tx) => enqueue(tx, 'renderJobs', 'poll-1', later));
    await eventually(async () => received.some((e) => e.id === later.id), Boolean, 10_000);
    await relay.stop();
    await c.disconnect();
  }, 60_000);
});

describe('outbox relays of one schema', () => {
  it('take turns: two relays publish every committed row exactly once, without a transaction held across the produce', async () => {
    const b = await ownBus('kit-test-relays', ['fetchJobs']);
    // Where each envelope sits in the topic: a row published twice has two offsets. (A reader that
    // rejoins its group may be handed a message again, at the same offset: that is not a publish.)
    const received = new Map<string, Set<string>>();
    const c = b.kafka.consumer({ groupId: `relays-reader-${randomUUID()}` });
    await c.connect();
    await c.subscribe({ topic: b.topic('fetchJobs'), fromBeginning: true });
    await c.run({
      eachMessage: async ({ partition, message }) => {
        const id = (JSON.parse(message.value!.toString()) as Envelope).id;
        received.set(id, (received.get(id) ?? new Set<string>()).add(`${partition}:${message.offset}`));
      },
    });
    const relays = [1, 2].map(() => new OutboxRelay({ databaseUrl: database.url, bus: b, log, pollMs: 60_000, batchSize: 7 }));
    for (const r of relays) r.start();
    const ids: string[] = [];
    // Commits keep arriving while both relays are woken by each of them.
    for (let k = 0; k < 20; k++) {
      const jobs = Array.from({ length: 5 }, () =>
        makeEnvelope('fetchJobs', 'fetch.job_requested', randomUUID(), { request_id: randomUUID() }),
      );
      ids.push(...jobs.map((j) => j.id));
      await db.$transaction(async (tx) => {
        for (const j of jobs) await enqueue(tx, 'fetchJobs', 'k', j);
      });
      for (const r of relays) r.nudge();
    }
    try {
      await eventually(async () => ids.every((id) => received.has(id)), Boolean, 30_000);
      await new Promise((r) => setTimeout(r, 500));
      expect([...received.entries()].filter(([id, at]) => ids.includes(id) && at.size !== 1).map(([id, at]) => [id, [...at]])).toEqual([]);
      const pending = await db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM outbox_messages WHERE published_at IS NULL');
      expect(pending).toHaveLength(0);
      // No relay holds the lock between batches.
      const held = await db.$queryRawUnsafe<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(held[0]!.n).toBe(0);
    } finally {
      for (const r of relays) await r.stop();
      await c.disconnect();
      await b.disconnect();
    }
  }, 60_000);

  it('marks its rows before it lets go of the relay lock: while its marking waits, no other relay can take the lock', async () => {
    const b = await ownBus('kit-test-relay-order', ['fetchJobs']);
    const jobs = Array.from({ length: 3 }, () =>
      makeEnvelope('fetchJobs', 'fetch.job_requested', randomUUID(), { request_id: randomUUID() }),
    );
    await db.$transaction(async (tx) => {
      for (const j of jobs) await enqueue(tx, 'fetchJobs', 'k', j);
    });
    // Between relay A's produce and its marking, another session locks the rows: A's UPDATE waits.
    const blocker = new pg.Client(pgConnectionFor(database.url).config);
    await blocker.connect();
    const blocking = Object.assign(Object.create(b) as KafkaBus, {
      sendBatch: async (messages: Parameters<KafkaBus['sendBatch']>[0]) => {
        await b.sendBatch(messages);
        await blocker.query('BEGIN');
        await blocker.query('SELECT id FROM outbox_messages WHERE published_at IS NULL FOR UPDATE');
      },
    });
    const relayA = new OutboxRelay({ databaseUrl: database.url, bus: blocking, log, pollMs: 60_000 });
    const relayB = new OutboxRelay({ databaseUrl: database.url, bus: b, log, pollMs: 60_000 });
    try {
      const drainA = relayA.drainOnce();
      const waiting = () =>
        db.$queryRawUnsafe<{ pid: number; holds: boolean }[]>(
          `SELECT a.pid, EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted) AS holds
             FROM pg_stat_activity a
            WHERE a.datname = current_database() AND a.wait_event_type = 'Lock' AND a.query LIKE 'WITH m AS (UPDATE outbox_messages%'`,
        );
      const [marking] = await eventually(waiting, (rows) => rows.length === 1, 30_000, 50);
      // The waiting marking statement still holds the relay lock, so relay B finds it taken.
      expect(marking!.holds).toBe(true);
      expect(await relayB.drainOnce()).toBe(0);
      await blocker.query('COMMIT');
      expect(await drainA).toBe(3);
      const pending = await db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM outbox_messages WHERE published_at IS NULL');
      expect(pending).toHaveLength(0);
    } finally {
      await blocker.end();
      await relayB.stop();
      await relayA.stop();
      await b.disconnect();
    }
  }, 60_000);
});

describe('in-flight processing within a partition', () => {
  /**
   * Render-job handlers that hold one message, `slowId`, until `releaseSlow()`; the ids they started
   * and finished, in order.
   */
  function oneSlow(): {
    slowId: ReturnType<typeof randomUUID>;
    releaseSlow: () => void;
    started: string[];
    finished: string[];
    handlers: ConsumerOptions['handlers'];
  } {
    let releaseSlow!: () => void;
    const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
    const slowId = randomUUID();
    const started: string[] = [];
    const finished: string[] = [];
    return {
      slowId,
      releaseSlow,
      started,
      finished,
      handlers: {
        'render.job_requested': async (env, ctx) => {
          started.push(env.id);
          if (env.id === slowId) await slowGate;
          await ctx.transaction(async () => undefined);
          finished.push(env.id);
        },
      },
    };
  }

  it('lets later messages of a partition finish while an earlier one is slow, and commits only the processed prefix', async () => {
    const { slowId, releaseSlow, finished, handlers } = oneSlow();
    const bus2 = await ownBus('kit-test-inflight');
    const c1 = await consume(bus2, 'kit-test-c', { inFlight: 4, handlers });
    const slow = renderJob(slowId);
    const fast = [renderJob(), renderJob(), renderJob()];
    await sendInOrder(bus2, [slow, ...fast]);
    // The three fast ones finish although the slow one, ahead of them, has not.
    await eventually(
      async () => finished.length,
      (n) => n === 3,
      30_000,
    );
    expect(finished).not.toContain(slowId);
    // Nothing is committed past the slow message while it runs...
    const committed = () => committedOffset(bus2, 'kit-test-c');
    expect(await committed()).toBeLessThanOrEqual(0);
    // ...and everything is, once it finishes.
    releaseSlow();
    await eventually(
      async () => finished.length,
      (n) => n === 4,
      30_000,
    );
    await eventually(committed, (o) => o === 4, 30_000);
    await c1.stop();
    await bus2.disconnect();
  }, 90_000);

  it('handles a message fetched after a slow one at once, with slots free: the slow one holds neither them nor the next fetch', async () => {
    const { slowId, releaseSlow, started, finished, handlers } = oneSlow();
    const bus2 = await ownBus('kit-test-inflight-next');
    const c1 = await consume(bus2, 'kit-test-next', { inFlight: 4, handlers });
    try {
      await sendInOrder(bus2, [renderJob(slowId)]);
      await eventually(
        async () => started,
        (s) => s.includes(slowId),
        30_000,
      );
      // Sent once the slow one is under way: another fetch, on the same partition, and under another key.
      const later = [renderJob(), renderJob()];
      await sendInOrder(bus2, [later[0]!]);
      await sendInOrder(bus2, [later[1]!], 'another-key');
      await eventually(
        async () => finished.length,
        (n) => n === 2,
        20_000,
      );
      expect(finished.sort()).toEqual(later.map((e) => e.id).sort());
      expect(finished).not.toContain(slowId);
      releaseSlow();
      await eventually(
        async () => finished.length,
        (n) => n === 3,
        30_000,
      );
      // Every offset is committed once the slow one is done (3 messages over the partitions); nothing was handled twice.
      await eventually(
        () => committedTotal(bus2, 'kit-test-next'),
        (n) => n === 3,
        30_000,
      );
      expect(started).toHaveLength(3);
    } finally {
      releaseSlow();
      await c1.stop();
      await bus2.disconnect();
    }
  }, 90_000);

  it('reads a partition again from a message whose handling failed (its DLQ unreachable), repeating no effect of those after it', async () => {
    const bus2 = await ownBus('kit-test-inflight-fail');
    // The consumer's bus, but its DLQ refuses until the test lets it through.
    let dlqDown = true;
    let dlqRefusals = 0;
    const flaky = Object.assign(Object.create(bus2) as KafkaBus, {
      send: async (topic: string, messages: Parameters<KafkaBus['send']>[1]) => {
        if (dlqDown) {
          dlqRefusals++;
          throw new Error('the DLQ is unreachable (test)');
        }
        return bus2.send(topic, messages);
      },
    });
    const poison = renderJob();
    const others = [renderJob(), renderJob(), renderJob()];
    const handled: string[] = [];
    const c1 = await startConsumer({
      bus: flaky,
      db,
      log,
      metrics: createMetrics('kit_test_inflight_fail'),
      group: 'kit-test-inflight-fail',
      topics: ['renderJobs'],
      inFlight: 4,
      handlers: {
        'render.job_requested': async (env, ctx) => {
          handled.push(env.id);
          if (env.id === poison.id) throw new PoisonMessageError('cannot ever work');
          await ctx.transaction(async (tx) => {
            await tx.$executeRawUnsafe('INSERT INTO side_effects (event_id, note) VALUES ($1::uuid, $2)', env.id, 'inflight-fail');
          });
        },
      },
    });
    try {
      await sendInOrder(bus2, [poison, ...others.slice(0, 2)]);
      await eventually(
        async () => dlqRefusals,
        (n) => n >= 1,
        30_000,
      );
      // One more after the failure: handled once its partition is read again, and still no commit passes the failed one.
      await sendInOrder(bus2, [others[2]!]);
      await eventually(
        async () => ({ refusals: dlqRefusals, handled }),
        ({ refusals, handled: h }) => refusals >= 2 && h.includes(others[2]!.id),
        30_000,
      );
      expect(await committedTotal(bus2, 'kit-test-inflight-fail')).toBe(0);
      dlqDown = false;
      await eventually(
        () => committedTotal(bus2, 'kit-test-inflight-fail'),
        (n) => n === 4,
        30_000,
      );
      expect(await deadLettered(bus2)).toBe(1);
      const effects = await db.$queryRawUnsafe<{ event_id: string }[]>(
        "SELECT event_id::text FROM side_effects WHERE note = 'inflight-fail' ORDER BY event_id",
      );
      expect(effects.map((e) => e.event_id)).toEqual(others.map((e) => e.id).sort());
    } finally {
      dlqDown = false;
      await c1.stop();
      await bus2.disconnect();
    }
  }, 90_000);
});

describe('batches', () => {
  it('skips an event type it has no handler for without a database record, and its offset still advances', async () => {
    const b = await ownBus('kit-test-skip');
    const metrics = createMetrics('kit_test_skip');
    const c = await consume(b, 'kit-test-skip', { metrics, handlers: {} });
    const jobs = [renderJob(), renderJob(), renderJob()];
    await sendInOrder(b, jobs);
    await eventually(
      () => committedOffset(b, 'kit-test-skip'),
      (o) => o === 3,
      30_000,
    );
    const recorded = await db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM processed_messages WHERE consumer = $1', 'kit-test-skip');
    expect(recorded).toHaveLength(0);
    expect(await metrics.registry.getSingleMetricAsString('wdr_kafka_messages_total')).toMatch(/outcome="ignored"[^\n]* 3/);
    await c.stop();
    await b.disconnect();
  }, 60_000);

  it("skips, unread, the messages of the tenants skipTenant names (their tenant header), and handles the others'", async () => {
    const b = await ownBus('kit-test-skip-tenant');
    const metrics = createMetrics('kit_test_skip_tenant');
    const [quiet, busy] = [randomUUID(), randomUUID()];
    const handled: string[] = [];
    const c = await consume(b, 'kit-test-skip-tenant', {
      metrics,
      handlers: {
        'render.job_requested': async (e) => {
          handled.push(e.tenant_id);
        },
      },
      skipTenant: (tenantId) => tenantId === quiet,
    });
    const job = (tenantId: string) => makeEnvelope('renderJobs', 'render.job_requested', tenantId, { request_id: randomUUID() });
    await sendInOrder(b, [job(quiet), job(busy), job(quiet), job(busy)]);
    await eventually(
      () => committedOffset(b, 'kit-test-skip-tenant'),
      (o) => o === 4,
      30_000,
    );
    expect(handled).toEqual([busy, busy]);
    expect(await metrics.registry.getSingleMetricAsString('wdr_kafka_messages_total')).toMatch(/outcome="skipped"[^\n]* 2/);
    await c.stop();
    await b.disconnect();
  }, 60_000);

  it('commits the offset of a batch of skipped events lazily, and at once for a batch with an effect', async () => {
    const b = await ownBus('kit-test-lazy');
    const handled: string[] = [];
    const effect = new Set<string>();
    const metrics = createMetrics('kit_test_lazy');
    const c = await consume(b, 'kit-test-lazy', {
      metrics,
      recordUntransacted: false,
      lazySkipCommitMs: 4_000,
      handlers: {
        'render.job_requested': async (e) => {
          handled.push(e.id);
          return effect.has(e.id) ? undefined : SKIPPED;
        },
      },
    });
    const send = (jobs: ReturnType<typeof renderJob>[]) => sendInOrder(b, jobs);
    const first = renderJob();
    effect.add(first.id);
    await send([first]);
    await eventually(
      () => committedOffset(b, 'kit-test-lazy'),
      (o) => o === 1,
      30_000,
    );
    // Skipped only: handled, and the offset stays until the lazy commit.
    await send([renderJob(), renderJob()]);
    await eventually(
      async () => handled.length,
      (n) => n === 3,
      30_000,
      50,
    );
    const handledAt = Date.now();
    expect(await committedOffset(b, 'kit-test-lazy')).toBe(1);
    await eventually(
      () => committedOffset(b, 'kit-test-lazy'),
      (o) => o === 3,
      30_000,
      100,
    );
    expect(Date.now() - handledAt).toBeGreaterThanOrEqual(3_000);
    expect(await metrics.registry.getSingleMetricAsString('wdr_kafka_messages_total')).toMatch(/outcome="skipped"[^\n]* 2/);
    // A skipped event and one with an effect behind it: committed at once, both covered.
    const effective = renderJob();
    effect.add(effective.id);
    await send([renderJob(), effective]);
    await eventually(
      async () => handled.length,
      (n) => n === 5,
      30_000,
      50,
    );
    const at = Date.now();
    await eventually(
      () => committedOffset(b, 'kit-test-lazy'),
      (o) => o === 5,
      30_000,
      100,
    );
    expect(Date.now() - at).toBeLessThan(3_000);
    // Stopping commits what is still deferred.
    await send([renderJob()]);
    await eventually(
      async () => handled.length,
      (n) => n === 6,
      30_000,
      50,
    );
    await new Promise((r) => setTimeout(r, 300)); // its batch's commit deferred
    await c.stop();
    expect(await committedOffset(b, 'kit-test-lazy')).toBe(6);
    await b.disconnect();
  }, 90_000);

  it("records untransacted handlers' events as processed by default, and not with recordUntransacted: false", async () => {
    const b = await ownBus('kit-test-untransacted');
    const seen: string[] = [];
    const handlers = { 'render.job_requested': async (e: { id: string }) => void seen.push(e.id) };
    const recordedBy = async (group: string) =>
      (await db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM processed_messages WHERE consumer = $1', group)).length;
    const c1 = await consume(b, 'kit-test-recorded', { handlers });
    const c2 = await consume(b, 'kit-test-unrecorded', { handlers, recordUntransacted: false });
    const jobs = [renderJob(), renderJob()];
    await sendInOrder(b, jobs);
    await eventually(
      () => committedOffset(b, 'kit-test-unrecorded'),
      (o) => o === 2,
      30_000,
    );
    await eventually(
      () => committedOffset(b, 'kit-test-recorded'),
      (o) => o === 2,
      30_000,
    );
    expect(seen.sort()).toEqual([...jobs, ...jobs].map((j) => j.id).sort());
    expect(await recordedBy('kit-test-recorded')).toBe(2);
    expect(await recordedBy('kit-test-unrecorded')).toBe(0);
    await c1.stop();
    await c2.stop();
    await b.disconnect();
  }, 60_000);

  it('a crash after a batch committed its transactions but before its offset commit repeats no effect', async () => {
    const { b, appliedOnce } = await crashAfterEffects('kit-test-crash', 5);

    // The group's next member gets the batch again: every handler runs, no effect is applied twice.
    let redelivered = 0;
    const c = await consume(b, 'kit-test-crash', {
      sessionTimeoutMs: 6_000,
      handlers: {
        'render.job_requested': async (env, ctx) => {
          const applied = await ctx.transaction((tx) =>
            tx.$executeRawUnsafe('INSERT INTO side_effects (event_id, note) VALUES ($1::uuid, $2)', env.id, 'again').then(() => undefined),
          );
          if (!applied) redelivered++;
        },
      },
    });
    await appliedOnce();
    expect(redelivered).toBeGreaterThan(0);
    await c.stop();
    await b.disconnect();
  }, 120_000);

  it('a batch handler applies a run in one transaction; a bad message falls back alone, the others applied once', async () => {
    const b = await ownBus('kit-test-batch');
    const good = Array.from({ length: 6 }, () => renderJob());
    const bad = renderJob();
    // One partition, everything there before the consumer starts: the first fetch holds the lot,
    // a redelivered envelope (good[1] twice) among it.
    const first = [good[0]!, good[1]!, good[2]!, bad, good[1]!, good[3]!, good[4]!, good[5]!];
    await sendInOrder(b, first);
    const calls: { size: number; fresh: number; committed: boolean }[] = [];
    const metrics = createMetrics('kit_test_batch');
    const c = await consume(b, 'kit-test-batch', {
      metrics,
      maxAttempts: 2,
      handlers: {
        'render.job_requested': async (env, ctx) => {
          if (env.id === bad.id) throw new PoisonMessageError('a bad job');
          await ctx.transaction((tx) =>
            tx.$executeRawUnsafe('INSERT INTO side_effects (event_id, note) VALUES ($1::uuid, $2)', env.id, 'single').then(() => undefined),
          );
        },
      },
      batchHandlers: {
        'render.job_requested': async (envelopes, ctx) => {
          const call = { size: envelopes.length, fresh: 0, committed: false };
          calls.push(call);
          await ctx.transaction(async (tx, fresh) => {
            call.fresh = fresh.length;
            await tx.$executeRawUnsafe(
              'INSERT INTO side_effects (event_id, note) SELECT unnest($1::uuid[]), $2',
              fresh.map((e) => e.id),
              'batch',
            );
            if (fresh.some((e) => e.id === bad.id)) throw new Error('a bad job in the batch');
          });
          call.committed = true;
        },
      },
    });
    const committed = () => committedOffset(b, 'kit-test-batch');
    const effects = (ids: string[]) =>
      db.$queryRawUnsafe<{ event_id: string; note: string }[]>(
        'SELECT event_id::text, note FROM side_effects WHERE event_id = ANY($1::uuid[]) ORDER BY note',
        ids,
      );
    try {
      await eventually(committed, (o) => o === first.length, 60_000);
      // The batch holding the bad job rolled back whole; its jobs then ran one by one: each good job
      // applied exactly once, the bad one dead-lettered, nothing of it applied.
      const rows = await effects([...good, bad].map((e) => e.id));
      expect(rows.map((r) => r.event_id).sort()).toEqual(good.map((e) => e.id).sort());
      expect(calls.some((x) => !x.committed && x.fresh > 1)).toBe(true);
      expect(await deadLettered(b)).toBe(1);
      const counted = await metrics.registry.getSingleMetricAsString('wdr_kafka_batches_total');
      expect(counted).toMatch(/outcome="fell_back"[^\n]* [1-9]/);

      // Next: four new jobs and two redelivered ones, all good: one transaction per run, the
      // redelivered ones left out of it.
      const next = Array.from({ length: 4 }, () => renderJob());
      const second = [next[0]!, good[0]!, next[1]!, next[2]!, good[5]!, next[3]!];
      const callsBefore = calls.length;
      await sendInOrder(b, second);
      await eventually(committed, (o) => o === first.length + second.length, 60_000);
      const later = calls.slice(callsBefore);
      expect(later.every((x) => x.committed)).toBe(true);
      expect(later.reduce((n, x) => n + x.size, 0)).toBe(second.length);
      expect(later.reduce((n, x) => n + x.fresh, 0)).toBe(next.length);
      const nextRows = await effects(next.map((e) => e.id));
      expect(nextRows).toHaveLength(next.length);
      expect(new Set(nextRows.map((r) => r.note))).toEqual(new Set(['batch']));
      expect((await effects(good.map((e) => e.id))).length).toBe(good.length);
    } finally {
      await c.stop();
      await b.disconnect();
    }
  }, 120_000);

  it('a crash after a batch handler committed its transaction but before the offset commit repeats no effect', async () => {
    const jobs = 8;
    const { b, atKill, appliedOnce } = await crashAfterEffects('kit-test-crash-batch', jobs, 'batch');

    // The next member gets the batch again: the batch handler is called, finds nothing fresh, applies nothing.
    let redelivered = 0;
    const c = await consume(b, 'kit-test-crash-batch', {
      sessionTimeoutMs: 6_000,
      handlers: {
        'render.job_requested': async (env, ctx) => {
          if (
            !(await ctx.transaction((tx) =>
              tx
                .$executeRawUnsafe('INSERT INTO side_effects (event_id, note) VALUES ($1::uuid, $2)', env.id, 'single')
                .then(() => undefined),
            ))
          )
            redelivered++;
        },
      },
      batchHandlers: {
        'render.job_requested': async (envelopes, ctx) => {
          const fresh = await ctx.transaction((tx, todo) =>
            tx
              .$executeRawUnsafe(
                'INSERT INTO side_effects (event_id, note) SELECT unnest($1::uuid[]), $2',
                todo.map((e) => e.id),
                'again',
              )
              .then(() => undefined),
          );
          redelivered += envelopes.length - fresh.length;
        },
      },
    });
    await appliedOnce();
    // Everything past the offset committed before the kill came again, and none of it was applied again.
    expect(redelivered).toBe(jobs - atKill);
    await c.stop();
    await b.disconnect();
  }, 120_000);

  it('retries a dependency failure past maxAttempts without dead-lettering it, unready while it waits', async () => {
    const b = await ownBus('kit-test-dep');
    let failures = 0;
    let readyWhileFailing: boolean | undefined;
    const handle: { c?: ConsumerHandle } = {};
    // What Prisma throws when Postgres cannot be reached (P1001), five times: more than maxAttempts.
    const unreachable = Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), {
      code: 'P1001',
      name: 'PrismaClientKnownRequestError',
    });
    const job = renderJob();
    handle.c = await consume(b, 'kit-test-dep', {
      maxAttempts: 2,
      handlers: {
        'render.job_requested': async (env, ctx) => {
          if (failures < 5) {
            if (failures === 2) readyWhileFailing = handle.c?.ready();
            failures++;
            throw unreachable;
          }
          await ctx.transaction((tx) =>
            tx
              .$executeRawUnsafe('INSERT INTO side_effects (event_id, note) VALUES ($1::uuid, $2)', env.id, 'after outage')
              .then(() => undefined),
          );
        },
      },
    });
    await sendInOrder(b, [job], 'k');
    await eventually(
      () => db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM side_effects WHERE event_id = $1::uuid', job.id),
      (rows) => rows.length === 1,
      60_000,
    );
    expect(failures).toBe(5);
    expect(readyWhileFailing).toBe(false);
    await eventually(async () => handle.c!.ready(), Boolean, 10_000);
    expect(await deadLettered(b)).toBe(0);
    await handle.c.stop();
    await b.disconnect();
  }, 90_000);
});

describe('topic creation', () => {
  it('several services creating the same topics at once all succeed, and none logs an error for it', async () => {
    const lines: string[] = [];
    const captured = createLogger('kit-test-topics', 'debug', { write: (line: string) => void lines.push(line) });
    const prefix = uniqueTopicPrefix();
    const buses = Array.from(
      { length: 4 },
      (_, i) => new KafkaBus({ clientId: `kit-test-topics-${i}`, brokers: KAFKA_BROKERS, prefix, log: captured }),
    );
    await Promise.all(buses.map((b) => b.ensureTopics(['renderJobs', 'fetchJobs', 'requestLifecycle'])));
    expect(await buses[0]!.missingTopics(['renderJobs', 'fetchJobs', 'requestLifecycle'])).toEqual([]);
    const errors = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level >= 50);
    expect(errors).toEqual([]);
    await Promise.all(buses.map((b) => b.disconnect()));
  }, 60_000);
});

describe('stopping', () => {
  it('waits for the fetch in flight at most fetchWaitMs (KAFKA_FETCH_WAIT_MS): a quiet consumer stops within it, batched or not', async () => {
    const b = await ownBus('kit-test-stop');
    const stopAfterAWhile = async (group: string, fetchWaitMs: number, batched = false) => {
      const handle = await consume(b, group, {
        handlers: {},
        fetchWaitMs,
        ...(batched ? { fetch: { minBytes: 64 * 1024, maxWaitMs: 50 } } : {}),
      });
      // Joined, and a fetch of the quiet topic out at the broker.
      await eventually(async () => handle.ready(), Boolean, 30_000);
      await new Promise((r) => setTimeout(r, 1_000));
      const t0 = Date.now();
      await handle.stop();
      return Date.now() - t0;
    };
    const short = await stopAfterAWhile('kit-test-stop-short', 500);
    // A batched consumer's fetch after an empty one waits fetchWaitMs too (the idle fix), not the default 5 s.
    const batched = await stopAfterAWhile('kit-test-stop-batched', 500, true);
    // Control: the same consumer with an 8-s wait is still waiting on its fetch when told to stop.
    const long = await stopAfterAWhile('kit-test-stop-long', 8_000);
    expect(long).toBeGreaterThan(3_000);
    expect(short).toBeLessThan(3_000);
    expect(batched).toBeLessThan(3_000);
    await b.disconnect();
  }, 90_000);
});

describe('batched fetches', () => {
  it("flowingWaitMs reaches the fetches: after one that filled, a flow's last message waits that, not maxWaitMs", async () => {
    const b = await ownBus('kit-test-flowing');
    const arrivals = { flowing: new Map<string, number>(), plain: new Map<string, number>() };
    const start = (name: keyof typeof arrivals, flowingWaitMs?: number) =>
      consume(b, `kit-test-flowing-${name}`, {
        handlers: {
          'render.job_requested': async (env) => {
            arrivals[name].set(env.id, Date.now());
          },
        },
        fetchWaitMs: 500,
        fetch: { minBytes: 1024, maxWaitMs: 3_000, ...(flowingWaitMs !== undefined ? { flowingWaitMs } : {}) },
      });
    const handles = [await start('flowing', 200), await start('plain')];
    const got = (n: number) =>
      eventually(
        async () => Math.min(arrivals.flowing.size, arrivals.plain.size),
        (k) => k >= n,
        30_000,
        5,
      );
    try {
      await eventually(async () => handles.every((h) => h.ready()), Boolean, 30_000);
      // Each consumer's first fetch waits out its 3 s on the quiet topic; then it asks for any byte.
      await new Promise((r) => setTimeout(r, 4_000));
      // A first burst answers those fetches at once; a second fills the next ones (1 KB asked).
      await sendInOrder(
        b,
        Array.from({ length: 20 }, () => renderJob()),
      );
      await got(20);
      await sendInOrder(
        b,
        Array.from({ length: 20 }, () => renderJob()),
      );
      await got(40);
      const plainFetchFrom = Math.max(...arrivals.plain.values());
      // The flow's last message, too small to fill a fetch.
      const last = renderJob();
      const sentAt = Date.now();
      await sendInOrder(b, [last]);
      await got(41);
      expect(arrivals.flowing.get(last.id)! - sentAt).toBeLessThan(1_000);
      // Without flowingWaitMs the fetch asked for after the second burst holds it for its 3 s.
      expect(arrivals.plain.get(last.id)! - plainFetchFrom).toBeGreaterThan(2_500);
    } finally {
      await Promise.all(handles.map((h) => h.stop()));
      await b.disconnect();
    }
  }, 90_000);
});
