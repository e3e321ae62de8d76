import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Consumer, ConsumerConfig } from 'kafkajs';
import {
  createTestDatabase,
  eventually,
  identityEnvOf,
  pgRawSql,
  startKafkaProxy,
  uniqueTopicPrefix,
  KAFKA_BROKERS,
  type TcpProxy,
  type TestDatabase,
} from '@wdr/testkit';
import { createLogger } from '../log.js';
import { createMetrics } from '../metrics.js';
import { closeServer, listen, portOf } from '../service.js';
import { KafkaBus } from './bus.js';
import { makeEnvelope } from './envelope.js';
import { createKafkaService, type KafkaServiceEnv } from './kafka-service.js';
import { serviceIdentityFrom } from '../service-identity.js';

/**
 * Liveness of a Kafka service's consumers against the real broker (createKafkaService with one
 * consumer on render.jobs, the consumer watchdog shortened to seconds): /healthz fails for a
 * consumer kafkajs gave up on and for one that stopped making progress while the broker answers,
 * and never while the broker is unreachable (cut by a relay this test owns), however long.
 */
const log = createLogger('kit-liveness-test', 'silent');
let database: TestDatabase;
let producer: KafkaBus;
const prefix = uniqueTopicPrefix();
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  database = await createTestDatabase('browser-renderer');
  producer = new KafkaBus({ clientId: 'kit-liveness-producer', brokers: KAFKA_BROKERS, prefix, log });
  await producer.ensureTopics(['renderJobs']);
  await producer.connect();
}, 60_000);

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

afterAll(async () => {
  await producer?.disconnect();
  await database?.drop();
}, 60_000);

const renderJob = () => makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() });

/**
 * A service with one consumer group on render.jobs. `brokers` lets a test put a relay in between;
 * `failCommit` makes the commit path throw a TypeError (a bug: kafkajs gives up on the consumer);
 * the kafkajs consumers it creates are returned so a test can stop one behind the service's back.
 */
async function startService(opts: { stallMs: number; brokers?: string[]; failCommit?: () => boolean }) {
  const group = `liveness-${randomUUID().slice(0, 8)}`;
  const bus = new KafkaBus({ clientId: 'kit-liveness', brokers: opts.brokers ?? KAFKA_BROKERS, prefix, log });
  const kafkajsConsumers: Consumer[] = [];
  const makeConsumer = bus.kafka.consumer.bind(bus.kafka);
  bus.kafka.consumer = (config: ConsumerConfig) => {
    const c = makeConsumer(config);
    kafkajsConsumers.push(c);
    return c;
  };
  const raw = pgRawSql(database.url);
  const db = {
    ...raw,
    $executeRawUnsafe: (sql: string, ...args: unknown[]) => {
      if (opts.failCommit?.() && sql.includes('unnest'))
        return Promise.reject(new TypeError("Cannot read properties of undefined (reading 'id')"));
      return raw.$executeRawUnsafe(sql, ...args);
    },
  };
  const handled: string[] = [];
  const env = {
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    KAFKA_BROKERS: opts.brokers ?? KAFKA_BROKERS,
    KAFKA_TOPIC_PREFIX: prefix,
    OUTBOX_POLL_MS: 1_000,
    KAFKA_SESSION_TIMEOUT_MS: 10_000,
    KAFKA_FETCH_WAIT_MS: 1_000,
    PROCESSED_RETENTION_HOURS: 192,
  } satisfies KafkaServiceEnv;
  const metrics = createMetrics(`kit_liveness_${group.replace(/-/g, '_')}`);
  const service = createKafkaService({
    deps: {
      name: 'browser-renderer',
      env,
      db,
      bus,
      log,
      metrics,
      identity: serviceIdentityFrom('browser-renderer', identityEnvOf('browser-renderer')),
    },
    consumers: [
      {
        group,
        topics: ['renderJobs'],
        // A short idle fetch, so a healthy idle consumer completes one every half second.
        fetch: { minBytes: 1, maxWaitMs: 500 },
        handlers: {
          'render.job_requested': async (envelope) => {
            handled.push(envelope.id);
          },
        },
      },
    ],
    consumerLiveness: { stallMs: opts.stallMs, everyMs: 500 },
  });
  await service.start();
  const server: Server = await listen(service.app, 0, '127.0.0.1');
  const metricsServer: Server = await listen(service.metricsApp, 0, '127.0.0.1');
  cleanups.push(async () => {
    await closeServer(server);
    await closeServer(metricsServer);
    await service.stop();
  });
  const url = `http://127.0.0.1:${portOf(server)}`;
  const healthz = async () => {
    const res = await fetch(`${url}/healthz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks?: { name: string; problem: string }[] } };
  };
  const gauge = async (name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${portOf(metricsServer)}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`wdr_${name}{`) && l.includes(`group="${group}"`));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };
  await service.kafkaConnected();
  return { group, url, healthz, gauge, handled, kafkajsConsumers, service };
}

/** Samples /healthz every 250 ms for `ms`, returning every status seen. */
async function healthzDuring(healthz: () => Promise<{ status: number }>, ms: number): Promise<Set<number>> {
  const seen = new Set<number>();
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) seen.add((await healthz()).status);
  return seen;
}

describe('liveness of Kafka consumers', () => {
  it('fails /healthz, naming the group, once kafkajs gives up on a consumer (a non-retriable crash); readiness is not what restarts it', async () => {
    let failing = false;
    const svc = await startService({ stallMs: 60_000, failCommit: () => failing });
    const first = renderJob();
    await producer.send(producer.topic('renderJobs'), [{ key: 'a', envelope: first }]);
    await eventually(
      async () => svc.handled.includes(first.id),
      (done) => done,
      30_000,
    );
    expect((await svc.healthz()).status).toBe(200);
    // Set by the watchdog's first look (every 500 ms here).
    await eventually(
      () => svc.gauge('kafka_consumer_wedged'),
      (v) => v === 0,
      5_000,
      100,
    );

    failing = true;
    await producer.send(producer.topic('renderJobs'), [{ key: 'a', envelope: renderJob() }]);
    const wedged = await eventually(svc.healthz, (h) => h.status === 503, 30_000, 250);
    expect(wedged.body.status).toBe('wedged');
    expect(wedged.body.checks).toEqual([
      {
        name: 'kafka_consumers',
        problem: `${svc.group}: kafkajs crashed the consumer and does not restart it (KafkaJSNonRetriableError < TypeError: Cannot read properties of undefined (reading 'id'))`,
      },
    ]);
    expect(await svc.gauge('kafka_consumer_wedged')).toBe(1);
    await eventually(
      () => svc.gauge('kafka_consumer_ready'),
      (v) => v === 0,
      10_000,
      250,
    );
    // Readiness is about the HTTP role: the database answers, so the pod stays in its Service.
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
  }, 90_000);

  it('fails /healthz for a consumer that completes no fetch or heartbeat for the stall time while the broker answers, not for an idle one', async () => {
    const svc = await startService({ stallMs: 4_000 });
    // Idle for longer than the stall time: its empty fetches and heartbeats are progress.
    expect(await healthzDuring(svc.healthz, 6_000)).toEqual(new Set([200]));
    expect(svc.kafkajsConsumers).toHaveLength(1);
    // Stopped behind the service's back (no crash, no event the service hears): nothing completes any more.
    await svc.kafkajsConsumers[0]!.stop();
    const started = Date.now();
    const wedged = await eventually(svc.healthz, (h) => h.status === 503, 30_000, 250);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(wedged.body.checks?.[0]?.problem).toMatch(
      new RegExp(`^${svc.group}: no fetch or heartbeat for \\d+ s while the broker answers$`),
    );
    expect(await svc.gauge('kafka_consumer_wedged')).toBe(1);
  }, 90_000);

  it('keeps /healthz at 200 while the broker is unreachable for longer than the stall time, and after it is back the consumer carries on', async () => {
    const [host, port] = KAFKA_BROKERS[0]!.split(':');
    const relay: TcpProxy = await startKafkaProxy({ host: host!, port: Number(port) });
    cleanups.push(() => relay.close());
    const stallMs = 8_000;
    const svc = await startService({ stallMs, brokers: [`127.0.0.1:${relay.port}`] });
    const before = renderJob();
    await producer.send(producer.topic('renderJobs'), [{ key: 'a', envelope: before }]);
    await eventually(
      async () => svc.handled.includes(before.id),
      (done) => done,
      30_000,
    );
    expect(relay.connections()).toBeGreaterThan(0);

    relay.cut();
    // Twice the stall time without a fetch or a heartbeat: the consumer is stuck, but on Kafka.
    expect(await healthzDuring(svc.healthz, 2 * stallMs + 2_000)).toEqual(new Set([200]));
    // The watchdog looked (the gauge is set by each check) and found nothing a restart would fix.
    expect(await svc.gauge('kafka_consumer_wedged')).toBe(0);

    relay.restore();
    const job = renderJob();
    await producer.send(producer.topic('renderJobs'), [{ key: 'a', envelope: job }]);
    // kafkajs reconnects on its own backoff; liveness holds while it does.
    const seen = new Set<number>();
    await eventually(
      async () => {
        seen.add((await svc.healthz()).status);
        return svc.handled.includes(job.id);
      },
      (done) => done,
      60_000,
      250,
    );
    expect(seen).toEqual(new Set([200]));
  }, 150_000);
});
