import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, pgRawSql, uniqueTopicPrefix, KAFKA_BROKERS, type TestDatabase } from '@wdr/testkit';
import type { Envelope } from '@wdr/contracts';
import { createServiceClient } from '../http-client.js';
import { createLogger } from '../log.js';
import { createMetrics } from '../metrics.js';
import { currentRequestId, withRequestId } from '../request-context.js';
import { closeServer, createHttpShell, listen, portOf } from '../service.js';
import { KafkaBus } from './bus.js';
import { startConsumer, type ConsumerHandle } from './consumer.js';
import { makeEnvelope } from './envelope.js';
import { enqueue, OutboxRelay } from './outbox.js';

/**
 * Request ids across the kit's plumbing, against the real broker and Postgres: an HTTP request's id
 * reaches the service it calls (X-Request-Id) and both access logs; a message written to the outbox
 * while handling it carries the id as a header, and the consumer's log lines and handler have it.
 */
type Line = Record<string, unknown>;
function capture(): { stream: Writable; lines: Line[] } {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  return { stream, lines };
}

let database: TestDatabase;
let db: ReturnType<typeof pgRawSql>;
let bus: KafkaBus;
const servers: Server[] = [];
const consumers: ConsumerHandle[] = [];
const relays: OutboxRelay[] = [];
const quiet = createLogger('kit-test', 'silent');

beforeAll(async () => {
  database = await createTestDatabase('browser-renderer');
  db = pgRawSql(database.url);
  bus = new KafkaBus({ clientId: 'kit-request-id', brokers: KAFKA_BROKERS, prefix: uniqueTopicPrefix(), log: quiet });
  await bus.ensureTopics(['renderJobs']);
  await bus.connect();
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await Promise.all(consumers.map((c) => c.stop()));
  await Promise.all(servers.map(closeServer));
  await bus?.disconnect();
  await db?.$disconnect();
  await database?.drop();
}, 60_000);

async function serve(name: string, log: ReturnType<typeof createLogger>, mount: (app: import('express').Express) => void): Promise<string> {
  const shell = createHttpShell({ metrics: createMetrics(name.replace(/-/g, '_')), log, readiness: [] });
  mount(shell.app);
  const server = await listen(shell.seal(), 0, '127.0.0.1');
  servers.push(server);
  return `http://127.0.0.1:${portOf(server)}`;
}

describe('request ids', () => {
  it('follow an HTTP request into the service it calls and into both access logs; an invalid one is replaced', async () => {
    const calleeOut = capture();
    const callerOut = capture();
    const calleeLog = createLogger('callee', 'info', calleeOut.stream);
    const seen: (string | undefined)[] = [];
    const calleeUrl = await serve('callee', calleeLog, (app) =>
      app.get('/inner', (req, res) => {
        seen.push(req.header('x-request-id'));
        calleeLog.info('inner work');
        res.json({ context: currentRequestId() });
      }),
    );
    const client = createServiceClient({ name: 'callee', baseUrl: calleeUrl });
    const callerUrl = await serve('caller', createLogger('caller', 'info', callerOut.stream), (app) =>
      app.post('/outer', async (_req, res) => {
        res.json(await client.get('/inner'));
      }),
    );

    const id = `req-${randomUUID()}`;
    const res = await fetch(`${callerUrl}/outer?secret=1`, {
      method: 'POST',
      headers: { 'X-Request-Id': id, 'Content-Type': 'application/json' },
      body: '{"a":1}',
    });
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(await res.json()).toEqual({ context: id });
    expect(seen).toEqual([id]);
    await eventually(
      async () => calleeOut.lines.length + callerOut.lines.length,
      (n) => n >= 3,
      5_000,
    );
    expect(calleeOut.lines.find((l) => l['msg'] === 'inner work')).toMatchObject({ request_id: id });
    expect(calleeOut.lines.find((l) => l['msg'] === 'request answered')).toMatchObject({
      request_id: id,
      req: { method: 'GET', path: '/inner' },
      res: { status_code: 200 },
    });
    const access = callerOut.lines.find((l) => l['msg'] === 'request answered');
    expect(access).toMatchObject({ request_id: id, req: { method: 'POST', path: '/outer' }, res: { status_code: 200 } });
    // The query string (it may carry anything) and headers stay out of the access log.
    expect(JSON.stringify(access)).not.toContain('secret');
    expect(typeof access?.['responseTime']).toBe('number');

    for (const bad of ['short', 'has spaces in it', 'x'.repeat(129), 'semi;colon-1234']) {
      const r = await fetch(`${callerUrl}/outer`, { method: 'POST', headers: { 'X-Request-Id': bad } });
      const given = r.headers.get('x-request-id');
      expect(given).not.toBe(bad);
      expect(given).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen.at(-1)).toBe(given);
    }
    // Probes are answered without an access-log line.
    const before = callerOut.lines.length;
    expect((await fetch(`${callerUrl}/healthz`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(callerOut.lines.slice(before).filter((l) => l['msg'] === 'request answered')).toEqual([]);
  });

  it('log a request whose client went away before the answer ended as aborted, with its id', async () => {
    const out = capture();
    const url = await serve('streamer', createLogger('streamer', 'info', out.stream), (app) =>
      app.get('/stream', (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write(': hello\n\n');
      }),
    );
    const ac = new AbortController();
    const res = await fetch(`${url}/stream`, { headers: { 'X-Request-Id': 'stream-reader-1' }, signal: ac.signal });
    expect(res.status).toBe(200);
    ac.abort();
    const line = await eventually(async () => out.lines.find((l) => l['request_id'] === 'stream-reader-1'), Boolean, 5_000);
    expect(line).toMatchObject({ msg: 'request aborted', req: { method: 'GET', path: '/stream' }, res: { status_code: 200 } });
  });

  it("ride a Kafka message written through the outbox, into the consumer's log context", async () => {
    const out = capture();
    const log = createLogger('consumer', 'debug', out.stream);
    const handled: { envelope: Envelope; requestId: string | undefined }[] = [];
    consumers.push(
      await startConsumer({
        bus,
        db,
        log,
        metrics: createMetrics('kit_request_id'),
        group: 'kit-request-id',
        topics: ['renderJobs'],
        handlers: {
          'render.job_requested': async (envelope) => {
            handled.push({ envelope, requestId: currentRequestId() });
            log.info({ event_id: envelope.id }, 'handler ran');
          },
        },
      }),
    );
    const relay = new OutboxRelay({ databaseUrl: database.url, bus, log: quiet, pollMs: 200 });
    relays.push(relay);
    const id = `req-${randomUUID()}`;
    const traced = makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() });
    const untraced = makeEnvelope('renderJobs', 'render.job_requested', randomUUID(), { request_id: randomUUID() });
    // Written inside a request (its id kept in the row), and outside any; the relay is nudged from inside one.
    await withRequestId(id, () => db.$transaction(async (tx) => enqueue(tx, 'renderJobs', 'k1', traced)));
    await db.$transaction(async (tx) => enqueue(tx, 'renderJobs', 'k2', untraced));
    withRequestId('some-other-request', () => relay.start());

    await eventually(
      async () => handled.length,
      (n) => n >= 2,
      30_000,
    );
    const byId = new Map(handled.map((h) => [h.envelope.id, h]));
    // The envelope on the wire is the catalog's: the row's request id is not part of it.
    expect(byId.get(traced.id)).toEqual({ envelope: traced, requestId: id });
    expect(byId.get(untraced.id)).toEqual({ envelope: untraced, requestId: undefined });
    await eventually(
      async () => out.lines.filter((l) => l['msg'] === 'message handled').length,
      (n) => n >= 2,
      5_000,
    );
    expect(out.lines.find((l) => l['msg'] === 'handler ran' && l['event_id'] === traced.id)).toMatchObject({ request_id: id });
    expect(out.lines.find((l) => l['msg'] === 'message handled' && l['event_id'] === traced.id)).toMatchObject({
      request_id: id,
      type: 'render.job_requested',
    });
    expect(out.lines.find((l) => l['msg'] === 'handler ran' && l['event_id'] === untraced.id)).not.toHaveProperty('request_id');
  }, 60_000);
});
