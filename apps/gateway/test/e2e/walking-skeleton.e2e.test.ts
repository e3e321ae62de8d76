// Own fleet (not the shared one of ./shared/): it SIGKILLs the orchestrator mid-fetch and stops every service.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, eventually, startFixtureSite, startFleet, withDatabase, type Fleet, type FixtureSite } from '@wdr/testkit';
import { settledBalance } from './balances.js';

/**
 * The walking skeleton through the real pieces: six service processes, real Postgres, the real
 * Kafka broker and a real target site. Nothing is mocked.
 */
let fleet: Fleet;
let site: FixtureSite;
let apiKey: string;
let tenantId: string;

const gateway = () => request(fleet.url('gateway'));

async function detail(id: string, key = apiKey) {
  const res = await gateway().get(`/api/v1/data/requests/${id}`).set('X-API-Key', key);
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

async function submit(path: string, extra: Record<string, unknown> = {}) {
  const res = await gateway()
    .post('/api/v1/data/requests')
    .set('X-API-Key', apiKey)
    .send({ url: `${site.url}${path}`, mode: 'http', ...extra });
  expect(res.status).toBe(202);
  return res.body as Record<string, unknown> & { id: string };
}

const balance = (): Promise<number> => settledBalance(fleet, tenantId);

async function ledgerTransfers(requestId: string) {
  return withDatabase(
    fleet.databases['billing-ledger'].url,
    async (c) =>
      (
        await c.query<{ id: string; kind: string; amount: string }>(
          'SELECT id, kind, amount FROM transfers WHERE request_id = $1 ORDER BY created_at',
          [requestId],
        )
      ).rows,
  );
}

async function eventKinds(requestId: string) {
  return withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) =>
    (await c.query<{ kind: string }>('SELECT kind FROM request_events WHERE request_id = $1 ORDER BY seq', [requestId])).rows.map(
      (r) => r.kind,
    ),
  );
}

const settled = (d: Record<string, unknown>) => d['status'] === 'completed' && d['token_state'] === 'settled';

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet();
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'e2e', '--credits', '100']);
  apiKey = tenant['api_key'] as string;
  tenantId = tenant['tenant_id'] as string;
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
}, 60_000);

describe('POST /api/v1/data/requests -> GET /api/v1/data/requests/{id}', () => {
  it('fetches a page over HTTP, stores it, and settles the base tokens exactly once', async () => {
    const before = await balance();
    const created = await submit('/page?q=secret-query');
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: site.url,
      status: 'pending',
      cached: false,
      protected: false,
      pricing_version: 2,
      route_mode: 'http',
      proxy_type: 'datacenter',
      base_tokens: 1,
      protected_tokens: 0,
      captcha_tokens: 0,
      quote: null,
      created_at: expect.any(String),
      charged_tokens: 1,
      idempotent_replay: false,
    });
    expect(new Date(created['created_at'] as string).toISOString()).toBe(created['created_at']);

    const d = await eventually(() => detail(created.id), settled, 30_000);
    expect(d).toMatchObject({
      id: created.id,
      batch_id: null,
      url: site.url,
      status: 'completed',
      token_state: 'settled',
      cached: false,
      protected: false,
      pricing_version: 2,
      base_tokens: 1,
      protected_tokens: 0,
      captcha_tokens: 0,
      captcha_type: null,
      error: null,
      user_error: null,
      proxy_used: 'platform',
      debug_artifacts: {},
    });
    for (const k of ['created_at', 'started_at', 'finished_at', 'result_expires_at']) {
      expect(typeof d[k]).toBe('string');
    }
    expect(d['result_meta']).toMatchObject({ status_code: 200, content_type: 'text/html; charset=utf-8', stage: 'http' });
    expect(d['request']).toMatchObject({ url: site.url, route_mode: 'http', timeout_ms: 45000 });
    // The full URL (path and query) is never returned.
    expect(JSON.stringify(d)).not.toContain('secret-query');
    expect(site.hits.get('/page')).toBeGreaterThanOrEqual(1);
    expect(await balance()).toBe(before - 1);
    const transfers = await ledgerTransfers(created.id);
    expect(transfers.map((t) => [t.kind, t.amount])).toEqual([
      ['pending', '1'],
      ['post_pending', '1'],
    ]);
    expect(await eventKinds(created.id)).toEqual(['request.accepted', 'request.running', 'request.completed', 'tokens.settled']);
    // It ran where it was admitted (no fetch.jobs hop: the orchestrator's LOCAL_HTTP_STAGES slots were free).
    const metrics = (await request(fleet.metricsUrl('fetch-orchestrator')).get('/metrics').expect(200)).text;
    const dispatched = (path: string) =>
      Number(new RegExp(`^fetch_orchestrator_http_stage_dispatch_total\\{[^}]*path="${path}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
    expect([dispatched('local'), dispatched('queued')]).toEqual([1, 0]);
  }, 60_000);

  it('refunds a request whose target fails', async () => {
    const before = await balance();
    const created = await submit('/status/503');
    const d = await eventually(
      () => detail(created.id),
      (x) => x['token_state'] === 'refunded',
      30_000,
    );
    expect(d['status']).toBe('failed');
    expect(d['user_error']).toMatchObject({ code: 'TARGET_SERVER_ERROR' });
    expect(await balance()).toBe(before);
  }, 60_000);

  it('answers 401 with a PublicError for a missing or wrong key', async () => {
    for (const key of [undefined, 'wdr_nope', `${apiKey.slice(0, -2)}xx`]) {
      const req = gateway()
        .post('/api/v1/data/requests')
        .send({ url: `${site.url}/page`, mode: 'http' });
      const res = await (key ? req.set('X-API-Key', key) : req);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'UNAUTHENTICATED', message: expect.any(String), request_id: expect.any(String) });
    }
  });

  it("hides another tenant's request behind a 404", async () => {
    const created = await submit('/page');
    const other = await adminCommand(fleet, ['create-tenant', '--name', 'other', '--credits', '5']);
    const res = await gateway()
      .get(`/api/v1/data/requests/${created.id}`)
      .set('X-API-Key', other['api_key'] as string);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('replays an idempotent submission for free and refuses a different body under the same key', async () => {
    const key = `idem-${Date.now()}`;
    const body = { url: `${site.url}/page?i=1`, mode: 'http' };
    const first = await gateway().post('/api/v1/data/requests').set('X-API-Key', apiKey).set('Idempotency-Key', key).send(body);
    const again = await gateway().post('/api/v1/data/requests').set('X-API-Key', apiKey).set('Idempotency-Key', key).send(body);
    expect(again.body).toMatchObject({ id: first.body.id, idempotent_replay: true, charged_tokens: 0 });
    const conflict = await gateway()
      .post('/api/v1/data/requests')
      .set('X-API-Key', apiKey)
      .set('Idempotency-Key', key)
      .send({ ...body, url: `${site.url}/page?i=2` });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
  });

  it("returns the ledger's admission quote for a tenant on a guarded-pricing plan, and null otherwise", async () => {
    const guarded = await adminCommand(fleet, ['create-tenant', '--name', 'guarded', '--credits', '500']);
    await adminCommand(fleet, ['set-plan', '--tenant', guarded['tenant_id'] as string, '--plan', 'business'], 'billing-ledger');
    const res = await gateway()
      .post('/api/v1/data/requests')
      .set('X-API-Key', guarded['api_key'] as string)
      .send({ url: `${site.url}/page`, mode: 'http' });
    expect(res.status).toBe(202);
    expect(res.body.quote).toMatchObject({
      policy: expect.any(String),
      estimate_tokens: expect.any(Number),
      worst_case_tokens: expect.any(Number),
      balance_after_tokens: expect.any(Number),
    });
    expect((await submit('/page')).quote).toBeNull();
  });

  it('refuses an account that cannot pay, creating nothing', async () => {
    const poor = await adminCommand(fleet, ['create-tenant', '--name', 'poor', '--credits', '0']);
    const res = await gateway()
      .post('/api/v1/data/requests')
      .set('X-API-Key', poor['api_key'] as string)
      .send({ url: `${site.url}/page`, mode: 'http' });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    const rows = await withDatabase(
      fleet.databases['fetch-orchestrator'].url,
      async (c) => (await c.query('SELECT 1 FROM data_requests WHERE tenant_id = $1', [poor['tenant_id']])).rowCount,
    );
    expect(rows).toBe(0);
  });
});

describe('crash safety', () => {
  it('completes and charges once when the orchestrator is SIGKILLed mid-fetch and restarted', async () => {
    const before = await balance();
    const slowHitsBefore = site.hits.get('/slow') ?? 0;
    const created = await submit('/slow?ms=4000');
    // Wait until the HTTP stage has started (the target has been asked), then crash the worker.
    await eventually(
      async () => site.hits.get('/slow') ?? 0,
      (n) => n > slowHitsBefore,
      20_000,
      50,
    );
    expect((await detail(created.id))['status']).toBe('running');
    await fleet.kill('fetch-orchestrator', 'SIGKILL');
    // While it is down the request is not lost, only unanswered.
    await fleet.start('fetch-orchestrator');
    const d = await eventually(() => detail(created.id), settled, 60_000, 250);
    expect(d['status']).toBe('completed');
    // Fetched again after the crash, but completed once and charged once.
    expect(site.hits.get('/slow')).toBeGreaterThanOrEqual(slowHitsBefore + 2);
    const kinds = await eventKinds(created.id);
    expect(kinds.filter((k) => k === 'request.completed')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'tokens.settled')).toHaveLength(1);
    expect((await ledgerTransfers(created.id)).map((t) => t.kind)).toEqual(['pending', 'post_pending']);
    expect(await balance()).toBe(before - 1);
  }, 120_000);

  it('loses nothing submitted just before a crash', async () => {
    const before = await balance();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await submit(`/slow?ms=1500&n=${i}`)).id);
    await fleet.kill('fetch-orchestrator', 'SIGKILL');
    await fleet.start('fetch-orchestrator');
    for (const id of ids) await eventually(() => detail(id), settled, 60_000, 250);
    expect(await balance()).toBe(before - 5);
    for (const id of ids) {
      expect((await ledgerTransfers(id)).map((t) => t.kind)).toEqual(['pending', 'post_pending']);
      expect((await eventKinds(id)).filter((k) => k === 'request.completed')).toHaveLength(1);
    }
  }, 120_000);
});

describe('fleet health', () => {
  it('every service reports healthy, ready and exposes Prometheus metrics', async () => {
    for (const s of [
      'gateway',
      'billing-ledger',
      'fetch-orchestrator',
      'browser-renderer',
      'recipe-extractor',
      'webhook-dispatcher',
    ] as const) {
      await request(fleet.url(s)).get('/healthz').expect(200);
      const ready = await request(fleet.url(s)).get('/readyz');
      expect([s, ready.status]).toEqual([s, 200]);
      const metrics = await request(fleet.metricsUrl(s)).get('/metrics');
      expect(metrics.text).toMatch(new RegExp(`^wdr_http_requests_total\\{[^}]*wdr_service="${s}"`, 'm'));
      expect(metrics.text).toContain('process_cpu_seconds_total');
    }
  });
});

describe('graceful shutdown', () => {
  it('every service exits 0 on SIGTERM, well within its grace period', async () => {
    for (const s of [
      'gateway',
      'browser-renderer',
      'recipe-extractor',
      'webhook-dispatcher',
      'fetch-orchestrator',
      'billing-ledger',
    ] as const) {
      const t0 = Date.now();
      const code = await fleet.kill(s, 'SIGTERM');
      expect([s, code]).toEqual([s, 0]);
      expect(Date.now() - t0).toBeLessThan(10_000);
    }
  }, 90_000);
});
