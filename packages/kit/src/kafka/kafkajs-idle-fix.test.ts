import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Kafka, logLevel } from 'kafkajs';
import { eventually, KAFKA_BROKERS } from '@wdr/testkit';
import { applyKafkajsIdleLoopFix, idleLoopFixApplied, setFetchWaits } from './kafkajs-idle-fix.js';

/**
 * The patched request queue must still do what kafkajs's own did: time a request out when the
 * broker never answers, and leave no timer behind when nothing is in flight.
 */
interface QueueView {
  inflight: Map<number, unknown>;
  requestTimeoutIntervalId: NodeJS.Timeout | undefined;
  scheduleRequestTimeoutCheck(): void;
}

/** Every request queue that connected during the test (recorded on the patched prototype). */
const queues = new Set<QueueView>();
let silent: net.Server;
let silentPort = 0;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  applyKafkajsIdleLoopFix();
  const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as { prototype: QueueView };
  // eslint-disable-next-line typescript/unbound-method -- called with the queue as `this` (schedule.call below)
  const schedule = RequestQueue.prototype.scheduleRequestTimeoutCheck;
  RequestQueue.prototype.scheduleRequestTimeoutCheck = function record(this: QueueView) {
    queues.add(this);
    schedule.call(this);
  };
  // Accepts connections and never answers a byte: every request sent to it must time out.
  silent = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentPort = (silent.address() as net.AddressInfo).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
});

describe('kafkajs request queue fix', () => {
  it('is applied to the pinned kafkajs version', () => {
    expect(idleLoopFixApplied()).toBe(true);
  });

  it('still times out a request the broker never answers, at its deadline', async () => {
    const kafka = new Kafka({
      clientId: 'idle-fix-test',
      brokers: [`127.0.0.1:${silentPort}`],
      requestTimeout: 1_500,
      connectionTimeout: 1_000,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    const started = Date.now();
    const err = (await admin.connect().then(
      () => undefined,
      (e: unknown) => e,
    )) as Error | undefined;
    const took = Date.now() - started;
    await admin.disconnect().catch(() => undefined);
    // kafkajs wraps the request's timeout; the original sits somewhere in the cause chain.
    const chain: string[] = [];
    for (
      let e: unknown = err;
      e;
      e = (e as { cause?: unknown; originalError?: unknown }).originalError ?? (e as { cause?: unknown }).cause
    ) {
      chain.push(`${(e as Error).name}: ${(e as Error).message}`);
    }
    expect(chain.join(' <- ')).toMatch(/KafkaJSRequestTimeoutError|Request .* timed out/);
    expect(took).toBeGreaterThanOrEqual(1_400);
    expect(took).toBeLessThan(10_000);
  }, 20_000);

  it('holds no timeout timer on a connection with nothing in flight, and one while a request is out', async () => {
    const kafka = new Kafka({ clientId: 'idle-fix-test', brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.listTopics();
      expect(queues.size).toBeGreaterThan(0);
      for (const q of queues) {
        expect(q.inflight.size).toBe(0);
        expect(q.requestTimeoutIntervalId).toBeUndefined();
      }
      // A request in flight arms the timer; its answer lets it lapse without re-arming.
      let answered = false;
      const pending = admin.fetchTopicMetadata({ topics: [] }).finally(() => {
        answered = true;
      });
      let armedWhileOut = false;
      while (!answered && !armedWhileOut) {
        armedWhileOut = [...queues].some((q) => q.inflight.size > 0 && q.requestTimeoutIntervalId !== undefined);
        await new Promise((r) => setImmediate(r));
      }
      await pending;
      expect(armedWhileOut).toBe(true);
      for (const q of queues) expect(q.requestTimeoutIntervalId).toBeUndefined();
    } finally {
      await admin.disconnect();
    }
  }, 20_000);

  it('a batched consumer stops asking a quiet topic 20 times a second, and a message after the quiet spell still arrives at once', async () => {
    const kafka = new Kafka({ clientId: 'idle-fix-fetch', brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });
    const topic = `idle-fix-fetch-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    // webhook-dispatcher's setting: 64 KB or 50 ms.
    const consumer = kafka.consumer({ groupId: `idle-fix-fetch-${randomUUID()}`, minBytes: 64 * 1024, maxWaitTimeInMs: 50 });
    const producer = kafka.producer();
    let fetches = 0;
    consumer.on(consumer.events.FETCH, () => {
      fetches++;
    });
    const arrived: number[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: async () => {
          arrived.push(Date.now());
        },
      });
      await producer.connect();
      // A first message once the consumer fetches: then the quiet spell.
      await eventually(
        async () => fetches,
        (n) => n > 0,
        30_000,
        50,
      );
      await producer.send({ topic, messages: [{ value: 'first' }] });
      await eventually(
        async () => arrived.length,
        (n) => n === 1,
        30_000,
        20,
      );
      await new Promise((r) => setTimeout(r, 500));
      const quietFrom = fetches;
      await new Promise((r) => setTimeout(r, 3_000));
      // Unpatched: about 60 fetches in these 3 s (one per 50 ms); now one long-waiting fetch at a time.
      expect(fetches - quietFrom).toBeLessThanOrEqual(3);
      const sentAt = Date.now();
      await producer.send({ topic, messages: [{ value: 'after the quiet spell' }] });
      await eventually(
        async () => arrived.length,
        (n) => n === 2,
        30_000,
        10,
      );
      // The broker answers the waiting fetch with its first byte: far sooner than its 5 s wait.
      expect(arrived[1]! - sentAt).toBeLessThan(2_000);
    } finally {
      await producer.disconnect();
      await consumer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  }, 60_000);

  it('after a fetch that filled, the last messages of a flow wait the flowing wait, not the batching window', async () => {
    const kafka = new Kafka({ clientId: 'idle-fix-flow', brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });
    const topic = `idle-fix-flow-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    const producer = kafka.producer();
    await producer.connect();
    // Two groups on the topic, batched alike (1 KB or 3 s); only the first has a flowing wait.
    const groups = { flowing: `idle-fix-flow-${randomUUID()}`, plain: `idle-fix-plain-${randomUUID()}` };
    setFetchWaits(groups.flowing, { flowingMs: 200 });
    const arrivals: Record<keyof typeof groups, { value: string; at: number }[]> = { flowing: [], plain: [] };
    const fetches: Record<keyof typeof groups, number> = { flowing: 0, plain: 0 };
    const consumers = await Promise.all(
      (Object.keys(groups) as (keyof typeof groups)[]).map(async (name) => {
        const consumer = kafka.consumer({ groupId: groups[name], minBytes: 1024, maxWaitTimeInMs: 3_000 });
        consumer.on(consumer.events.FETCH, () => {
          fetches[name]++;
        });
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          eachMessage: async ({ message }) => {
            arrivals[name].push({ value: message.value!.toString(), at: Date.now() });
          },
        });
        return consumer;
      }),
    );
    const burst = (tag: string) =>
      producer.send({ topic, messages: Array.from({ length: 20 }, (_, i) => ({ value: `${tag}-${i}-${'x'.repeat(200)}` })) });
    const got = (name: keyof typeof groups, n: number) =>
      eventually(
        async () => arrivals[name].length,
        (k) => k >= n,
        30_000,
        5,
      );
    try {
      // Each consumer's first fetch waits out its 3 s empty; the next asks for any byte (idle).
      await eventually(
        async () => Math.min(fetches.flowing, fetches.plain),
        (n) => n >= 1,
        30_000,
        20,
      );
      // A first burst answers those idle fetches at once; the fetches after it ask for 1 KB again.
      await burst('a');
      await Promise.all([got('flowing', 20), got('plain', 20)]);
      // A second burst fills them (4 KB of 1 KB asked): messages are flowing.
      await burst('b');
      await Promise.all([got('flowing', 40), got('plain', 40)]);
      // A last message, too small to fill a fetch, while their next fetches wait.
      const sentAt = Date.now();
      await producer.send({ topic, messages: [{ value: 'last' }] });
      await Promise.all([got('flowing', 41), got('plain', 41)]);
      const lastAt = (name: keyof typeof groups) => arrivals[name].find((a) => a.value === 'last')!.at;
      // Flowing: its fetch after the filled one waits at most 200 ms. Plain: that fetch, asked for
      // as the second burst was handled, holds the last message for its whole 3 s window.
      expect(lastAt('flowing') - sentAt).toBeLessThan(1_000);
      expect(lastAt('plain') - arrivals.plain[39]!.at).toBeGreaterThan(2_500);
    } finally {
      setFetchWaits(groups.flowing, undefined);
      await Promise.all(consumers.map((c) => c.disconnect()));
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  }, 60_000);
});
