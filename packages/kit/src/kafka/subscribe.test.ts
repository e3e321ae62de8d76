import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, pgRawSql, uniqueTopicPrefix, KAFKA_BROKERS, type TestDatabase } from '@wdr/testkit';
import { createLogger } from '../log.js';
import { createMetrics } from '../metrics.js';
import { KafkaBus } from './bus.js';
import { startConsumer, type ConsumerHandle } from './consumer.js';
import { makeEnvelope } from './envelope.js';
import { subscribeAll } from './transport.js';

/**
 * Subscribing against a broker that does not know a topic yet (it was created a moment ago, or is
 * about to be by the topics Job): kafkajs gives up at the first "unknown topic" answer; the kit's
 * consumers wait a bounded time for it, then fail naming it.
 */
const log = createLogger('kit-test', 'silent');
let database: TestDatabase;
let db: ReturnType<typeof pgRawSql>;
const consumers: ConsumerHandle[] = [];
const buses: KafkaBus[] = [];

beforeAll(async () => {
  database = await createTestDatabase('browser-renderer');
  db = pgRawSql(database.url);
}, 60_000);

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await Promise.all(buses.map((b) => b.disconnect()));
  await db?.$disconnect();
  await database?.drop();
}, 60_000);

const newBus = () => {
  const bus = new KafkaBus({ clientId: 'kit-subscribe-test', brokers: KAFKA_BROKERS, prefix: uniqueTopicPrefix(), log });
  buses.push(bus);
  return bus;
};

describe('subscribing', () => {
  it('a consumer started before its topic exists subscribes once the topic is created, and consumes it', async () => {
    const bus = newBus();
    const handled: string[] = [];
    const starting = startConsumer({
      bus,
      db,
      log,
      metrics: createMetrics('kit_subscribe_early'),
      group: 'kit-subscribe-early',
      topics: ['renderJobs'],
      handlers: {
        'render.job_requested': async (envelope) => {
          handled.push(envelope.id);
        },
      },
    });
    // The topic appears 1.5 s after the consumer asked for it.
    await new Promise((r) => setTimeout(r, 1_500));
    await bus.ensureTopics(['renderJobs']);
    consumers.push(await starting);
    await bus.connect();
    const envelope = makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() });
    await bus.send(bus.topic('renderJobs'), [{ key: 'k', envelope }]);
    await eventually(
      async () => handled,
      (ids) => ids.includes(envelope.id),
      30_000,
    );
  }, 90_000);

  it('a topic that never appears fails the subscribe after the wait, with the broker’s answer, and disconnects the consumer', async () => {
    const bus = newBus();
    const consumer = bus.kafka.consumer({ groupId: `kit-subscribe-missing-${randomUUID()}`, allowAutoTopicCreation: false });
    await consumer.connect();
    let disconnected = false;
    consumer.on(consumer.events.DISCONNECT, () => {
      disconnected = true;
    });
    try {
      const t0 = Date.now();
      await expect(subscribeAll(consumer, [bus.topic('renderJobs')], true, log, 1_500)).rejects.toMatchObject({
        type: 'UNKNOWN_TOPIC_OR_PARTITION',
      });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1_500);
      // Given up on, the consumer is not left connected.
      expect(disconnected).toBe(true);
    } finally {
      await consumer.disconnect();
    }
  }, 60_000);
});
