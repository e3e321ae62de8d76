import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  eventually,
  pgRawSql,
  startSecureKafka,
  uniqueTopicPrefix,
  type SecureKafka,
  type TestDatabase,
} from '@wdr/testkit';
import type { Envelope } from '@wdr/contracts';
import { kafkaEnv, loadEnv } from '../config.js';
import { createLogger } from '../log.js';
import { createMetrics } from '../metrics.js';
import { KafkaBus } from './bus.js';
import { startConsumer } from './consumer.js';
import { makeEnvelope } from './envelope.js';
import { enqueue, OutboxRelay } from './outbox.js';

/**
 * The kit's Kafka client settings against a real secured broker (testkit startSecureKafka: SASL_SSL
 * with SCRAM-SHA-512/256 and PLAIN users, and an SSL listener requiring a client certificate),
 * configured only through the services' env variables, as a deployment would.
 */
const log = createLogger('kit-secure-test', 'silent');
const run = promisify(execFile);
const TOPICS_CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'kafka', 'topics-cli.js');
let secure: SecureKafka;
let database: TestDatabase;
let db: ReturnType<typeof pgRawSql>;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  secure = await startSecureKafka();
  database = await createTestDatabase('browser-renderer');
  db = pgRawSql(database.url);
  await db.$executeRawUnsafe('CREATE TABLE side_effects (event_id uuid, note text)');
}, 120_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  await db?.$disconnect();
  await database?.drop();
  await secure?.stop();
}, 60_000);

/** The env a service would be given, parsed by the same schema the services spread into theirs. */
function envOf(vars: Record<string, string>, prefix = uniqueTopicPrefix()) {
  return loadEnv(kafkaEnv, { KAFKA_TOPIC_PREFIX: prefix, ...vars });
}

const scram512 = () => ({
  KAFKA_BROKERS: secure.saslSslBroker,
  KAFKA_SSL_CA_FILE: secure.files.ca,
  KAFKA_SASL_MECHANISM: 'scram-sha-512',
  KAFKA_SASL_USERNAME: secure.users.scram512.username,
  KAFKA_SASL_PASSWORD: secure.users.scram512.password,
});

/** Produce one envelope on renderJobs with a bus built from env, and read it back with a plain consumer of that bus. */
async function roundTrip(vars: Record<string, string>): Promise<Envelope> {
  const bus = KafkaBus.fromEnv('kit-secure-test', envOf(vars), log);
  cleanup.push(() => bus.disconnect());
  await bus.ensureTopics(['renderJobs']);
  await bus.connect();
  const sent = makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() });
  await bus.send(bus.topic('renderJobs'), [{ key: 'k', envelope: sent }]);
  const received: Envelope[] = [];
  const reader = bus.kafka.consumer({ groupId: `${bus.prefix}reader` });
  cleanup.push(() => reader.disconnect());
  await reader.connect();
  await reader.subscribe({ topic: bus.topic('renderJobs'), fromBeginning: true });
  await reader.run({ eachMessage: async ({ message }) => void received.push(JSON.parse(message.value!.toString()) as Envelope) });
  await eventually(
    async () => received.length,
    (n) => n > 0,
    30_000,
  );
  await reader.disconnect();
  await bus.disconnect();
  return received[0]!;
}

describe('Kafka over TLS with SASL (a secured broker)', () => {
  it('SCRAM-SHA-512 over TLS: an outbox row reaches the idempotent consumer, which applies it once in Postgres', async () => {
    const bus = KafkaBus.fromEnv('kit-secure-test', envOf(scram512()), log);
    cleanup.push(() => bus.disconnect());
    await bus.ensureTopics(['renderJobs']);
    await bus.connect();
    const applied: string[] = [];
    const consumer = await startConsumer({
      bus,
      db,
      log,
      metrics: createMetrics('kit_secure_a'),
      group: 'kit-secure-a',
      topics: ['renderJobs'],
      handlers: {
        'render.job_requested': async (env, ctx) => {
          applied.push(env.id);
          await ctx.transaction(async (tx) => {
            await tx.$executeRawUnsafe('INSERT INTO side_effects (event_id, note) VALUES ($1::uuid, $2)', env.id, 'over sasl_ssl');
          });
        },
      },
    });
    cleanup.push(() => consumer.stop());
    const relay = new OutboxRelay({ databaseUrl: database.url, bus, log, pollMs: 100 });
    relay.start();
    cleanup.push(() => relay.stop());

    const event = makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() });
    await db.$transaction(async (tx) => enqueue(tx, 'renderJobs', 'k1', event));
    const rows = await eventually(
      async () => db.$queryRawUnsafe<{ note: string }[]>('SELECT note FROM side_effects WHERE event_id = $1::uuid', event.id),
      (r) => r.length > 0,
      30_000,
    );
    expect(rows).toEqual([{ note: 'over sasl_ssl' }]);
    expect(applied).toEqual([event.id]);
  });

  it.each([
    ['SCRAM-SHA-256', 'scram-sha-256', 'scram256'],
    ['PLAIN', 'plain', 'plain'],
  ] as const)('%s over TLS: produce and consume', async (_name, mechanism, user) => {
    const sent = await roundTrip({
      KAFKA_BROKERS: secure.saslSslBroker,
      KAFKA_SSL_CA_FILE: secure.files.ca,
      KAFKA_SASL_MECHANISM: mechanism,
      KAFKA_SASL_USERNAME: secure.users[user].username,
      KAFKA_SASL_PASSWORD: secure.users[user].password,
    });
    expect(sent.type).toBe('render.job_requested');
  });

  it('mutual TLS: the client certificate from KAFKA_SSL_CERT_FILE/KAFKA_SSL_KEY_FILE is accepted by a listener that requires one', async () => {
    const sent = await roundTrip({
      KAFKA_BROKERS: secure.mtlsBroker,
      KAFKA_SSL_CA_FILE: secure.files.ca,
      KAFKA_SSL_CERT_FILE: secure.files.clientCert,
      KAFKA_SSL_KEY_FILE: secure.files.clientKey,
    });
    expect(sent.type).toBe('render.job_requested');
  });

  /** Connecting an admin client with this env: the error it fails with (undefined when it connects). */
  async function connectError(vars: Record<string, string>): Promise<Error | undefined> {
    const bus = KafkaBus.fromEnv('kit-secure-test', envOf(vars), log);
    const admin = bus.kafka.admin({ retry: { retries: 0 } });
    try {
      await admin.connect();
      await admin.listTopics();
      return undefined;
    } catch (err) {
      return err as Error;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  it('refuses what a secured cluster must refuse: a wrong password, an untrusted broker certificate, a missing client certificate, plaintext', async () => {
    expect(await connectError(scram512())).toBeUndefined();
    const wrongPassword = await connectError({ ...scram512(), KAFKA_SASL_PASSWORD: 'not-the-password' });
    expect(wrongPassword?.name).toBe('KafkaJSSASLAuthenticationError');
    // Trusting another CA (or only the public ones): the broker's certificate does not verify.
    const otherCa = await connectError({ ...scram512(), KAFKA_SSL_CA_FILE: secure.files.otherCa });
    expect(`${otherCa?.message} ${(otherCa as { cause?: Error } | undefined)?.cause?.message ?? ''}`).toMatch(/certificate/i);
    const publicCas = await connectError({
      KAFKA_BROKERS: secure.saslSslBroker,
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: secure.users.scram512.username,
      KAFKA_SASL_PASSWORD: secure.users.scram512.password,
    });
    expect(`${publicCas?.message} ${(publicCas as { cause?: Error } | undefined)?.cause?.message ?? ''}`).toMatch(/certificate/i);
    // The mTLS listener without a client certificate: the handshake is refused.
    expect(await connectError({ KAFKA_BROKERS: secure.mtlsBroker, KAFKA_SSL_CA_FILE: secure.files.ca })).toBeDefined();
    // No TLS, no SASL against the SASL_SSL listener (the local stack's defaults): no connection.
    expect(await connectError({ KAFKA_BROKERS: secure.saslSslBroker })).toBeDefined();
    // Six connections, each a TLS or SASL handshake against a JVM broker: 30 s was not enough at load 20-28.
  }, 90_000);

  it('the topics Job (wdr-kafka-topics) declares the catalog over SASL_SSL, and a bus in verify mode then finds every topic', async () => {
    const prefix = uniqueTopicPrefix();
    const jobEnv = { ...process.env, ...scram512(), KAFKA_TOPIC_PREFIX: prefix, LOG_LEVEL: 'error' };
    const before = await run(process.execPath, [TOPICS_CLI, 'check'], { env: jobEnv }).catch(
      (err: { code: number; stdout: string }) => err,
    );
    expect((before as { code?: number }).code).toBe(1);
    expect(JSON.parse(before.stdout.trim()).missing.length).toBeGreaterThan(0);
    const created = await run(process.execPath, [TOPICS_CLI, 'create'], { env: jobEnv });
    const report = JSON.parse(created.stdout.trim()) as { ok: boolean; topics: number; missing: string[] };
    expect(report).toMatchObject({ ok: true, missing: [] });
    expect(report.topics).toBeGreaterThan(5);
    const verifying = KafkaBus.fromEnv('kit-secure-test', envOf({ ...scram512(), KAFKA_TOPICS_MODE: 'verify' }, prefix), log);
    await expect(verifying.missingTopics(['renderJobs', 'fetchJobs', 'requestLifecycle'])).resolves.toEqual([]);
    await expect(verifying.ensureTopics(['renderJobs', 'fetchJobs'])).resolves.toBeUndefined();
  });
});
