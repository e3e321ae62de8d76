import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  eventually,
  KAFKA_BROKERS,
  startFixtureSite,
  sharedFleet,
  startServiceProcess,
  withDatabase,
  type Fleet,
  type FixtureSite,
  type ServiceProcess,
} from '@wdr/testkit';
import { KafkaBus, makeEnvelope } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import { openEventStream, type SseStream } from '../sse-client.js';
import { settledBalance } from '../balances.js';

/**
 * The read side of requests (detail, list, events, result), cancel, retry and the event stream,
 * through the real fleet. A second gateway instance (B) shares the fleet: streams opened there see
 * requests submitted through the first (A), which only works if every instance consumes every
 * lifecycle event. B also runs with a short stream duration.
 */
let fleet: Fleet;
let site: FixtureSite;
let gatewayB: ServiceProcess;
let bus: KafkaBus;
let apiKey: string;
let tenantId: string;
let otherKey: string;

const A = () => fleet.url('gateway');
const api = (base = A()) => request(base);
const get = (path: string, key = apiKey, base = A()) => api(base).get(path).set('X-API-Key', key);
const post = (path: string, key = apiKey) => api().post(path).set('X-API-Key', key);
const STREAM_MAX_MS_B = 2_500;

async function submit(path: string, extra: Record<string, unknown> = {}, key = apiKey): Promise<string> {
  const res = await post('/api/v1/data/requests', key).send({ url: `${site.url}${path}`, mode: 'http', ...extra });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
}

async function detail(id: string, key = apiKey): Promise<Record<string, unknown>> {
  const res = await get(`/api/v1/data/requests/${id}`, key);
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

const until = (id: string, pred: (d: Record<string, unknown>) => boolean, ms = 30_000) => eventually(() => detail(id), pred, ms, 150);
const settled = (d: Record<string, unknown>) => ['settled', 'refunded'].includes(d['token_state'] as string);

const balance = (): Promise<number> => settledBalance(fleet, tenantId);

const orchestratorSql = <T>(sql: string, params: unknown[]) =>
  withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => (await c.query(sql, params)).rows as T[]);

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = sharedFleet();
  gatewayB = await startServiceProcess('gateway', { ...fleet.envOf('gateway'), PORT: '', SSE_MAX_DURATION_MS: String(STREAM_MAX_MS_B) });
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'reads', '--credits', '1000']);
  apiKey = tenant['api_key'] as string;
  tenantId = tenant['tenant_id'] as string;
  otherKey = (await adminCommand(fleet, ['create-tenant', '--name', 'other', '--credits', '10']))['api_key'] as string;
  bus = new KafkaBus({ clientId: 'reads-test', brokers: KAFKA_BROKERS, prefix: fleet.topicPrefix, log: createLogger('test', 'silent') });
  await bus.connect();
}, 180_000);

afterAll(async () => {
  await bus?.disconnect();
  await gatewayB?.kill();
  await site?.close();
}, 60_000);

describe('GET /api/v1/data/requests/{id}', () => {
  it('has every field of the spec with its type and nullability, and nothing else', async () => {
    const id = await submit('/page?q=secret');
    const d = await until(id, settled);
    expect(Object.keys(d).sort()).toEqual(
      [
        'id',
        'batch_id',
        'url',
        'status',
        'cached',
        'protected',
        'pricing_version',
        'base_tokens',
        'protected_tokens',
        'captcha_tokens',
        'captcha_type',
        'token_state',
        'request',
        'debug_artifacts',
        'error',
        'user_error',
        'result_meta',
        'proxy_used',
        'created_at',
        'started_at',
        'finished_at',
        'result_expires_at',
      ].sort(),
    );
    expect(d).toEqual({
      id,
      batch_id: null,
      url: site.url,
      status: 'completed',
      cached: false,
      protected: false,
      pricing_version: 2,
      base_tokens: 1,
      protected_tokens: 0,
      captcha_tokens: 0,
      captcha_type: null,
      token_state: 'settled',
      request: expect.objectContaining({ url: site.url, route_mode: 'http' }),
      debug_artifacts: {},
      error: null,
      user_error: null,
      result_meta: expect.objectContaining({ status_code: 200 }),
      proxy_used: 'platform',
      created_at: expect.any(String),
      started_at: expect.any(String),
      finished_at: expect.any(String),
      result_expires_at: expect.any(String),
    });
    for (const k of ['created_at', 'started_at', 'finished_at', 'result_expires_at'])
      expect(new Date(d[k] as string).toISOString()).toBe(d[k]);
    expect(JSON.stringify(d)).not.toContain('secret');
  });

  it("answers 422 for an id that is not a uuid and 404 for another tenant's request", async () => {
    const id = await submit('/page');
    const bad = await get('/api/v1/data/requests/not-a-uuid');
    expect([bad.status, bad.body.code, bad.body.details?.[0]?.field]).toEqual([422, 'VALIDATION_FAILED', 'id']);
    const foreign = await get(`/api/v1/data/requests/${id}`, otherKey);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('GET /api/v1/data/requests (cursor pages)', () => {
  it("pages through the tenant's requests newest first, each once, with an opaque cursor sent back unchanged", async () => {
    const key = (await adminCommand(fleet, ['create-tenant', '--name', 'pager', '--credits', '100']))['api_key'] as string;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await submit(`/page?n=${i}`, {}, key));
    const failedId = await submit('/status/503', {}, key);
    ids.push(failedId);

    const first = await get('/api/v1/data/requests', key);
    expect(first.status).toBe(200);
    expect(first.body.meta).toEqual({ next_cursor: null, has_more: false, limit: 50 });
    expect(first.body.data.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    expect(Object.keys(first.body.data[0]).sort()).toEqual(Object.keys(await detail(failedId, key)).sort());

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/api/v1/data/requests?limit=2${cursor ? `&cursor=${cursor}` : ''}`, key);
      expect(res.status).toBe(200);
      expect(res.body.meta.limit).toBe(2);
      seen.push(...res.body.data.map((r: { id: string }) => r.id));
      cursor = res.body.meta.next_cursor;
      if (cursor) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      // A request created between pages is newer than the cursor: it shifts nothing.
      if (pages === 0) await submit('/page?late=1', {}, key);
      pages++;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    await eventually(
      () => detail(failedId, key),
      (d) => d['status'] === 'failed',
      30_000,
      150,
    );
    const failed = await get('/api/v1/data/requests?status=failed', key);
    expect(failed.body.data.map((r: { id: string }) => r.id)).toEqual([failedId]);
    // Another tenant lists none of them.
    const other = await get('/api/v1/data/requests?limit=100', otherKey);
    expect(other.body.data.filter((r: { id: string }) => ids.includes(r.id))).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['status=waiting_for_page', 'status'],
    ['status=bogus', 'status'],
    ['cursor=not!a!cursor', 'cursor'],
    [`cursor=${Buffer.from('{"v":1}').toString('base64url')}`, 'cursor'],
  ])('answers 422 for %s', async (query, field) => {
    const res = await get(`/api/v1/data/requests?${query}`);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('accepts limit 1 and 100', async () => {
    for (const limit of [1, 100]) {
      const res = await get(`/api/v1/data/requests?limit=${limit}`);
      expect([res.status, res.body.meta.limit]).toEqual([200, limit]);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
    }
  });
});

describe('GET /api/v1/data/requests/{id}/events', () => {
  it('is the append-only history, ascending, provider-neutral', async () => {
    const id = await submit('/page?token=hidden');
    await until(id, settled);
    const res = await get(`/api/v1/data/requests/${id}/events`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    const events = res.body.data as { id: number; type: string; status: string; created_at: string; data: Record<string, unknown> }[];
    expect(events.map((e) => [e.id, e.type, e.status])).toEqual([
      [1, 'request.accepted', 'pending'],
      [2, 'request.running', 'running'],
      [3, 'request.completed', 'completed'],
      [4, 'tokens.settled', 'completed'],
    ]);
    for (const e of events) expect(Object.keys(e).sort()).toEqual(['created_at', 'data', 'id', 'status', 'type']);
    expect(events.map((e) => e.created_at)).toEqual([...events.map((e) => e.created_at)].sort());
    expect(events[3]!.data).toEqual({ charged_tokens: 1 });
    const text = JSON.stringify(events);
    expect(text).not.toContain('hidden');
    expect(text).not.toContain('127.0.0.1:' + new URL(fleet.url('fetch-orchestrator')).port);
  });

  it("hides another tenant's request (404) and refuses a bad id (422)", async () => {
    const id = await submit('/page');
    expect((await get(`/api/v1/data/requests/${id}/events`, otherKey)).status).toBe(404);
    expect((await get('/api/v1/data/requests/123/events')).status).toBe(422);
  });
});

describe('GET /api/v1/data/requests/{id}/result', () => {
  it('answers the page as fetched, or its text, with the content type', async () => {
    const id = await submit('/page');
    await until(id, (d) => d['status'] === 'completed');
    const html = await get(`/api/v1/data/requests/${id}/result`);
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.headers['content-security-policy']).toContain('sandbox');
    expect(html.text).toContain('<h1>Hello from the fixture site</h1>');
    const text = await get(`/api/v1/data/requests/${id}/result?format=text`);
    expect([text.status, text.headers['content-type'], text.text]).toEqual([
      200,
      'text/plain; charset=utf-8',
      'Hello from the fixture site\n42.00',
    ]);
    expect((await get(`/api/v1/data/requests/${id}/result?format=pdf`)).status).toBe(422);
    expect((await get(`/api/v1/data/requests/${id}/result`, otherKey)).status).toBe(404);
  });

  it('answers 409 before completion and for a failed request, and 410 RESULT_EXPIRED after result_expires_at', async () => {
    const slow = await submit('/slow?ms=2500');
    const early = await get(`/api/v1/data/requests/${slow}/result`);
    expect([early.status, early.body.code]).toEqual([409, 'RESULT_NOT_READY']);
    const failed = await submit('/status/500');
    await until(failed, (d) => d['status'] === 'failed');
    expect((await get(`/api/v1/data/requests/${failed}/result`)).body).toMatchObject({ code: 'CONFLICT' });
    expect((await get(`/api/v1/data/requests/${failed}/result`)).status).toBe(409);

    await until(slow, (d) => d['status'] === 'completed');
    expect((await get(`/api/v1/data/requests/${slow}/result`)).status).toBe(200);
    await orchestratorSql("UPDATE request_results SET expires_at = now() - interval '1 second' WHERE request_id = $1", [slow]);
    const gone = await get(`/api/v1/data/requests/${slow}/result`);
    expect([gone.status, gone.body.code]).toEqual([410, 'RESULT_EXPIRED']);
  });
});

describe('POST /api/v1/data/requests/{id}/cancel', () => {
  it('cancels a running request: refunded, and the worker that finishes the fetch later changes nothing', async () => {
    const before = await balance();
    const hits = site.hits.get('/slow') ?? 0;
    const id = await submit('/slow?ms=2500&cancel=1');
    await eventually(
      async () => site.hits.get('/slow') ?? 0,
      (n) => n > hits,
      20_000,
      50,
    );
    const res = await post(`/api/v1/data/requests/${id}/cancel`).send();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: 'cancelled', user_error: { code: 'CANCELLED' } });
    const d = await until(id, (x) => x['token_state'] === 'refunded');
    expect(d['status']).toBe('cancelled');
    // Let the fetch finish and its worker try to complete the request.
    await new Promise((r) => setTimeout(r, 3_500));
    const after = await detail(id);
    expect([after['status'], after['token_state'], after['result_meta']]).toEqual(['cancelled', 'refunded', null]);
    const kinds = (await get(`/api/v1/data/requests/${id}/events`)).body.data.map((e: { type: string }) => e.type);
    expect(kinds).toEqual(['request.accepted', 'request.running', 'request.cancelled', 'tokens.refunded']);
    expect(await orchestratorSql('SELECT 1 FROM request_results WHERE request_id = $1', [id])).toHaveLength(0);
    expect(await balance()).toBe(before);
    // Cancelling again answers the same; a completed request cannot be cancelled.
    const again = await post(`/api/v1/data/requests/${id}/cancel`).send();
    expect([again.status, again.body.status]).toEqual([200, 'cancelled']);
  }, 60_000);

  it("refuses a finished request (409), another tenant's (404) and a bad id (422)", async () => {
    const id = await submit('/page');
    await until(id, (d) => d['status'] === 'completed');
    const done = await post(`/api/v1/data/requests/${id}/cancel`).send();
    expect([done.status, done.body.code]).toEqual([409, 'CONFLICT']);
    const slow = await submit('/slow?ms=1500');
    const foreign = await post(`/api/v1/data/requests/${slow}/cancel`, otherKey).send();
    expect(foreign.status).toBe(404);
    expect((await detail(slow))['status']).not.toBe('cancelled');
    expect((await post('/api/v1/data/requests/x/cancel').send()).status).toBe(422);
  });
});

describe('POST /api/v1/data/requests/{id}/retry', () => {
  it('creates a new request with the persisted inputs, browser actions included, and keeps the source unchanged', async () => {
    const actions = [
      { type: 'click', selector: '#more' },
      { type: 'wait', ms: 100 },
    ];
    const source = await submit('/page', {
      headers: { 'X-Trace': 'abc' },
      user_agent: 'retry-test/1',
      timeout_ms: 7000,
      browser_actions: actions,
    });
    const failed = await until(source, settled);
    // The actions promote the request to the browser, where /page has no #more to click.
    expect([failed['status'], (failed['user_error'] as { code: string }).code]).toEqual(['failed', 'BROWSER_ACTION_FAILED']);
    const res = await post(`/api/v1/data/requests/${source}/retry`).send();
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      retried_from_id: source,
      status: expect.any(String),
      idempotent_replay: false,
      route_mode: 'browser',
    });
    expect([res.body.base_tokens, res.body.charged_tokens]).toEqual([failed['base_tokens'], failed['base_tokens']]);
    expect(res.body.id).not.toBe(source);
    const retried = await detail(res.body.id);
    expect(retried['request']).toEqual(failed['request']);
    expect(retried['request']).toMatchObject({
      browser_actions: actions,
      user_agent: 'retry-test/1',
      timeout_ms: 7000,
      header_names: ['X-Trace'],
    });
    expect(await detail(source)).toEqual(failed);
  });

  it('retries a failed HTTP request: the new one runs the same target again', async () => {
    const hits = site.hits.get('/status/502') ?? 0;
    const source = await submit('/status/502');
    await until(source, (d) => d['status'] === 'failed');
    const res = await post(`/api/v1/data/requests/${source}/retry`).send();
    expect(res.status).toBe(202);
    const d = await until(res.body.id, settled);
    expect([d['status'], d['token_state']]).toEqual(['failed', 'refunded']);
    expect(site.hits.get('/status/502')).toBe(hits + 2);
  });

  it('supports Idempotency-Key like create: a free replay, and 409 for any other use of the key', async () => {
    const source = await submit('/status/503');
    await until(source, (d) => d['status'] === 'failed');
    const key = `retry-${randomUUID()}`;
    const first = await post(`/api/v1/data/requests/${source}/retry`).set('Idempotency-Key', key).send();
    const again = await post(`/api/v1/data/requests/${source}/retry`).set('Idempotency-Key', key).send();
    expect(first.status).toBe(202);
    expect(again.body).toMatchObject({ id: first.body.id, retried_from_id: source, idempotent_replay: true, charged_tokens: 0 });
    expect(first.body).toMatchObject({ idempotent_replay: false, charged_tokens: 1 });

    const otherSource = await submit('/status/504');
    await until(otherSource, (d) => d['status'] === 'failed');
    const conflict = await post(`/api/v1/data/requests/${otherSource}/retry`).set('Idempotency-Key', key).send();
    expect([conflict.status, conflict.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
    const createKey = `create-${randomUUID()}`;
    await post('/api/v1/data/requests')
      .set('Idempotency-Key', createKey)
      .send({ url: `${site.url}/page`, mode: 'http' })
      .expect(202);
    const reused = await post(`/api/v1/data/requests/${source}/retry`).set('Idempotency-Key', createKey).send();
    expect([reused.status, reused.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
    expect((await post(`/api/v1/data/requests/${source}/retry`).set('Idempotency-Key', 'short').send()).status).toBe(422);
  });

  it('retries only failed requests of the caller', async () => {
    const done = await submit('/page');
    await until(done, (d) => d['status'] === 'completed');
    const notFailed = await post(`/api/v1/data/requests/${done}/retry`).send();
    expect([notFailed.status, notFailed.body.code]).toEqual([409, 'CONFLICT']);
    const failed = await submit('/status/500');
    await until(failed, (d) => d['status'] === 'failed');
    expect((await post(`/api/v1/data/requests/${failed}/retry`, otherKey).send()).status).toBe(404);
    expect((await post('/api/v1/data/requests/zzz/retry').send()).status).toBe(422);
  });
});

describe('GET /api/v1/data/requests/{id}/events/stream (Server-Sent Events)', () => {
  const streamPath = (id: string) => `/api/v1/data/requests/${id}/events/stream`;
  const open = (id: string, base = A(), extra: Record<string, string> = {}) =>
    openEventStream(base, streamPath(id), { 'X-API-Key': apiKey, ...extra });
  const parsed = (s: SseStream) =>
    s.messages.map((m) => ({ id: m.id, event: JSON.parse(m.data) as { id: number; type: string; status: string } }));

  it('streams live events of a request submitted through another gateway instance, in order, then closes after the terminal one', async () => {
    // Submitted through B, streamed from A (B's streams end after 2.5 s). The page is slow enough
    // that the stream is open (listener registered, history read) before it ends, even on a loaded
    // machine: a stream opened after it would replay the settlement too.
    const submitted = await api(gatewayB.url)
      .post('/api/v1/data/requests')
      .set('X-API-Key', apiKey)
      .send({ url: `${site.url}/slow?ms=3000`, mode: 'http' });
    expect(submitted.status).toBe(202);
    const id = (submitted.body as { id: string }).id;
    const s = await open(id);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await s.ended;
    const got = parsed(s);
    expect(got.map((m) => [m.id, m.event.type])).toEqual([
      ['1', 'request.accepted'],
      ['2', 'request.running'],
      ['3', 'request.completed'],
    ]);
    // Each SSE event carries exactly the history entry with that id.
    const history = (await get(`/api/v1/data/requests/${id}/events`)).body.data;
    expect(got.map((m) => m.event)).toEqual(history.slice(0, 3));
    expect(s.retry).toBeGreaterThan(0);
  }, 30_000);

  it('replays the history, resumes after Last-Event-ID without repeats, and answers 204 when nothing can follow', async () => {
    const id = await submit('/page');
    await until(id, settled);
    const all = await open(id);
    await all.ended;
    expect(parsed(all).map((m) => m.event.id)).toEqual([1, 2, 3, 4]);
    const resumed = await open(id, A(), { 'Last-Event-ID': '2' });
    await resumed.ended;
    expect(parsed(resumed).map((m) => m.event.id)).toEqual([3, 4]);
    const done = await open(id, A(), { 'Last-Event-ID': '4' });
    await done.ended;
    expect([done.status, done.messages]).toEqual([204, []]);
  });

  it('sends heartbeat comments while idle', async () => {
    const id = await submit('/slow?ms=2000');
    const s = await open(id);
    await eventually(
      async () => s.comments,
      (c) => c.includes('heartbeat'),
      5_000,
      50,
    );
    s.close();
  });

  it('is bounded: a stream ends after its maximum duration, and reconnecting with Last-Event-ID continues without gaps or repeats', async () => {
    const id = await submit('/slow?ms=4000');
    const t0 = Date.now();
    const first = await open(id, gatewayB.url);
    await first.ended;
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(STREAM_MAX_MS_B - 100);
    expect(elapsed).toBeLessThan(STREAM_MAX_MS_B + 2_000);
    expect(first.comments).toContain('end max_duration');
    const received = parsed(first).map((m) => m.event);
    expect(received.every((e) => e.status !== 'completed')).toBe(true);
    // Reconnect the way EventSource does until the stream closes on the terminal event.
    for (let i = 0; i < 10 && received[received.length - 1]?.status !== 'completed'; i++) {
      const last = received[received.length - 1];
      const next = await open(id, gatewayB.url, last ? { 'Last-Event-ID': String(last.id) } : {});
      await next.ended;
      received.push(...parsed(next).map((m) => m.event));
    }
    expect(received.map((e) => [e.id, e.type])).toEqual([
      [1, 'request.accepted'],
      [2, 'request.running'],
      [3, 'request.completed'],
    ]);
  }, 40_000);

  it('delivers live events through Kafka (not the database) and fills a gap from the stored history', async () => {
    const id = await submit('/slow?ms=8000');
    await until(id, (d) => d['status'] === 'running');
    const s = await open(id, gatewayB.url);
    await s.waitForMessages(2);
    // The live consumer runs only while a stream is open: this one started it; it reads from the
    // offsets at its join, so the Kafka-only events below are published once it has joined.
    const liveReady = async () =>
      ((await request(gatewayB.url).get('/readyz')).body as { checks: { name: string; ok: boolean }[] }).checks.find(
        (c) => c.name === 'kafka_live_events',
      )?.ok;
    await eventually(liveReady, (ok) => ok === true, 20_000, 100);
    // Event 3 exists only in the database (as if its Kafka copy were lost); 4 and 5 only on Kafka.
    await orchestratorSql(
      `WITH bumped AS (UPDATE data_requests SET last_event_seq = 3 WHERE id = $1 RETURNING id)
       INSERT INTO request_events (request_id, seq, kind, status, payload) SELECT id, 3, 'test.db_only', 'running', '{}'::jsonb FROM bumped`,
      [id],
    );
    const publish = (eventId: number, status: string) =>
      bus.send(bus.topic('requestLifecycle'), [
        {
          key: id,
          envelope: makeEnvelope('requestLifecycle', 'request.event_appended', tenantId, {
            request_id: id,
            event_id: eventId,
            kind: `test.kafka_only_${eventId}`,
            status,
            payload: { attempt: eventId, vendor: 'never shown' },
            created_at: new Date().toISOString(),
          }),
        },
      ]);
    const t0 = Date.now();
    await publish(4, 'running');
    await s.waitForMessages(4, 5_000);
    const latencyMs = Date.now() - t0;
    expect(latencyMs).toBeLessThan(2_000);
    console.log(`Kafka publish -> SSE client (gap fill from the database included): ${latencyMs} ms`);
    await publish(4, 'running'); // a duplicate delivery is not repeated
    const t1 = Date.now();
    await publish(5, 'cancelled');
    await s.ended;
    console.log(`Kafka publish -> SSE client: ${Date.now() - t1} ms`);
    expect(parsed(s).map((m) => [m.event.id, m.event.type])).toEqual([
      [1, 'request.accepted'],
      [2, 'request.running'],
      [3, 'test.db_only'],
      [4, 'test.kafka_only_4'],
      [5, 'test.kafka_only_5'],
    ]);
    expect(JSON.stringify(parsed(s))).not.toContain('never shown');
    await post(`/api/v1/data/requests/${id}/cancel`).send().expect(200);
  }, 30_000);

  it("mirrors a tenant's events on Kafka only while somebody listens: none without a stream or endpoint, the rest once a stream opened", async () => {
    const quiet = await adminCommand(fleet, ['create-tenant', '--name', 'quiet', '--credits', '100']);
    const key = quiet['api_key'] as string;
    const mirrors = async (id: string) =>
      (
        await orchestratorSql<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_messages WHERE topic = 'requestLifecycle' AND message_key = $1`,
          [id],
        )
      )[0]!.n;
    // The dispatcher's sync at start ended the "every tenant" registration the orchestrator starts with.
    await eventually(
      () => orchestratorSql(`SELECT 1 FROM lifecycle_listeners WHERE tenant_id = '00000000-0000-0000-0000-000000000000'`, []),
      (rows) => rows.length === 0,
      30_000,
    );
    const unheard = await submit('/page', {}, key);
    await eventually(() => detail(unheard, key), settled, 30_000, 150);
    expect(await mirrors(unheard)).toBe(0);
    // The history is whole all the same.
    const history = (await get(`/api/v1/data/requests/${unheard}/events`, key)).body.data as { type: string }[];
    expect(history.map((e) => e.type)).toEqual(['request.accepted', 'request.running', 'request.completed', 'tokens.settled']);

    const heard = await submit('/slow?ms=1500', {}, key);
    const s = await openEventStream(gatewayB.url, streamPath(heard), { 'X-API-Key': key });
    await s.ended;
    expect(parsed(s).map((m) => m.event.type)).toEqual(['request.accepted', 'request.running', 'request.completed']);
    // The events written once the stream listened are on Kafka (at least the completion, 1.5 s later).
    expect(await mirrors(heard)).toBeGreaterThanOrEqual(1);
    const holders = await orchestratorSql<{ holder: string }>(`SELECT holder FROM lifecycle_listeners WHERE tenant_id = $1::uuid`, [
      quiet['tenant_id'],
    ]);
    expect(holders.map((h) => h.holder)).toEqual([expect.stringMatching(/^gateway:[0-9a-f-]{36}$/)]);
  }, 60_000);

  it('answers errors as PublicError bodies before streaming: 401, 404 for another tenant, 422', async () => {
    const id = await submit('/page');
    const none = await openEventStream(A(), streamPath(id), {});
    await none.ended;
    expect([none.status, JSON.parse(none.body()).code]).toEqual([401, 'UNAUTHENTICATED']);
    const foreign = await openEventStream(A(), streamPath(id), { 'X-API-Key': otherKey });
    await foreign.ended;
    expect([foreign.status, JSON.parse(foreign.body()).code]).toEqual([404, 'NOT_FOUND']);
    const badId = await open('nope');
    await badId.ended;
    expect(badId.status).toBe(422);
    const badLast = await open(id, A(), { 'Last-Event-ID': '-3' });
    await badLast.ended;
    expect([badLast.status, JSON.parse(badLast.body()).details[0].field]).toEqual([422, 'Last-Event-ID']);
  });

  it('ends open streams at once when an instance shuts down', async () => {
    const id = await submit('/slow?ms=6000');
    const s = await open(id, gatewayB.url);
    await s.waitForMessages(1);
    const t0 = Date.now();
    const exited = gatewayB.kill('SIGTERM');
    await s.ended;
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(s.comments).toContain('end shutdown');
    await exited;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(gatewayB.proc()?.exitCode).toBe(0);
  }, 30_000);
});
