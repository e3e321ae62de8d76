import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, pgRawSql, uniqueTopicPrefix, KAFKA_BROKERS, type TestDatabase } from '@wdr/testkit';
import { createLogger } from '../log.js';
import { createMetrics, type ServiceMetrics } from '../metrics.js';
import { KafkaBus } from './bus.js';
import { startConsumer, type ConsumerHandle } from './consumer.js';
import { makeEnvelope } from './envelope.js';
import { enqueue, OutboxRelay } from './outbox.js';

/** The Kafka metrics SREs alert on, read from the registry's exposition text as Prometheus would. */
const log = createLogger('kit-test', 'silent');
let database: TestDatabase;
let db: ReturnType<typeof pgRawSql>;
let bus: KafkaBus;
const consumers: ConsumerHandle[] = [];
let release: () => void = () => undefined;

beforeAll(async () => {
  database = await createTestDatabase('browser-renderer');
  db = pgRawSql(database.url);
  bus = new KafkaBus({ clientId: 'kit-metrics-test', brokers: KAFKA_BROKERS, prefix: uniqueTopicPrefix(), log });
  await bus.ensureTopics(['renderJobs']);
  await bus.connect();
}, 60_000);

afterAll(async () => {
  release();
  await Promise.all(consumers.map((c) => c.stop()));
  await bus?.disconnect();
  await db?.$disconnect();
  await database?.drop();
}, 60_000);

const renderJob = () => makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() });

/** The sum of the series of `name` matching `labels` in the exposition text, or undefined when none. */
async function sample(metrics: ServiceMetrics, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

describe('outbox metrics', () => {
  it('reports the backlog and the age of the oldest unpublished row, and both drop to 0 once published', async () => {
    const metrics = createMetrics('kit_test_outbox');
    await db.$transaction(async (tx) => {
      await enqueue(tx, 'renderJobs', 'a', renderJob());
      await enqueue(tx, 'renderJobs', 'b', renderJob());
    });
    await db.$executeRawUnsafe("UPDATE outbox_messages SET created_at = now() - interval '90 seconds' WHERE published_at IS NULL");
    const relay = new OutboxRelay({ databaseUrl: database.url, bus, log, pollMs: 60_000, metrics });
    expect(await sample(metrics, 'wdr_outbox_unpublished_messages', { wdr_service: 'kit_test_outbox' })).toBe(2);
    expect(await sample(metrics, 'wdr_outbox_oldest_unpublished_age_seconds')).toBeGreaterThanOrEqual(90);
    relay.start();
    await eventually(
      () => sample(metrics, 'wdr_outbox_published_total'),
      (n) => n === 2,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 1_100)); // the backlog query is shared for a second
    expect(await sample(metrics, 'wdr_outbox_unpublished_messages')).toBe(0);
    expect(await sample(metrics, 'wdr_outbox_oldest_unpublished_age_seconds')).toBe(0);
    expect(await sample(metrics, 'wdr_outbox_publish_failures_total')).toBe(0);
    await relay.stop();
  }, 60_000);
});

describe('consumer lag', () => {
  it('shows the messages behind the high watermark while a handler is stuck, and 0 once caught up', async () => {
    const metrics = createMetrics('kit_test_lag');
    const gate = new Promise<void>((resolve) => (release = resolve));
    consumers.push(
      await startConsumer({
        bus,
        db,
        log,
        metrics,
        group: 'kit-test-lag',
        topics: ['renderJobs'],
        handlers: {
          'render.job_requested': async (_env, ctx) => {
            await gate;
            await ctx.transaction(async () => undefined);
          },
        },
      }),
    );
    // One key: one partition, so the whole backlog is behind the stuck first message.
    await bus.send(
      bus.topic('renderJobs'),
      Array.from({ length: 5 }, () => ({ key: 'lag', envelope: renderJob() })),
    );
    const series = { group: 'kit-test-lag', topic: 'render.jobs' };
    await eventually(
      () => sample(metrics, 'wdr_kafka_consumer_lag', series),
      (n) => n !== undefined && n >= 5,
      30_000,
    );
    expect(await sample(metrics, 'wdr_kafka_lag_query_success', {})).toBe(1);
    release();
    await eventually(
      () => sample(metrics, 'wdr_kafka_consumer_lag', series),
      (n) => n === 0,
      30_000,
    );
  }, 60_000);
});
