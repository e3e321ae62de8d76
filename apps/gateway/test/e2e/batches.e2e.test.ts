// Own fleet (not the shared one of ./shared/): its 1,000-job batch keeps a fleet busy for minutes after the file ends (800 jobs still open 150 s later, measured), which would delay every file after it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  cabinetEnvironment,
  eventually,
  startFixtureSite,
  startFleet,
  startWebhookReceiver,
  withDatabase,
  type Fleet,
  type FixtureSite,
  internalAgent,
} from '@wdr/testkit';

/** Batches through the real fleet: admission all or nothing, the cabinet and Data API submissions, and the aggregated read. */
let fleet: Fleet;
let site: FixtureSite;

interface Tenant {
  id: string;
  key: string;
  cabinet: string;
}

let t: Tenant;
let other: Tenant;

async function newTenant(credits: number): Promise<Tenant> {
  const created = await adminCommand(fleet, ['create-tenant', '--name', `b-${randomUUID().slice(0, 8)}`, '--credits', String(credits)]);
  const id = created['tenant_id'] as string;
  const cabinet = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', id]);
  return { id, key: created['api_key'] as string, cabinet: cabinet['cabinet_token'] as string };
}

const gw = () => request(fleet.url('gateway'));
const dataBatch = (tenant: Tenant, body: unknown, key?: string) => {
  const req = gw().post('/api/v1/data/batches').set('X-API-Key', tenant.key);
  return (key ? req.set('Idempotency-Key', key) : req).send(body as object);
};
const cabinetBatch = (tenant: Tenant, body: unknown, key?: string) => {
  const req = gw().post('/api/v1/client/batches').set('Authorization', `Bearer ${tenant.cabinet}`);
  return (key ? req.set('Idempotency-Key', key) : req).send(body as object);
};
const readBatch = (tenant: Tenant, id: string) => gw().get(`/api/v1/data/batches/${id}`).set('X-API-Key', tenant.key);
const job = (path: string, extra: Record<string, unknown> = {}) => ({ url: `${site.url}${path}`, mode: 'http', ...extra });
const untilBatch = (tenant: Tenant, id: string, pred: (b: Record<string, unknown>) => boolean, ms = 30_000) =>
  eventually(async () => (await readBatch(tenant, id)).body as Record<string, unknown>, pred, ms, 200);

async function balance(tenant: Tenant): Promise<number> {
  const res = await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger').get(`/internal/v1/accounts/${tenant.id}/balance`);
  return (res.body as { balance_tokens: number }).balance_tokens;
}

const orchestratorCount = (sql: string, params: unknown[]) =>
  withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => Number((await c.query<{ n: string }>(sql, params)).rows[0]!.n));

const CABINET_JOB_KEYS = [
  'id',
  'url',
  'status',
  'cached',
  'protected',
  'pricing_version',
  'route_mode',
  'base_tokens',
  'protected_tokens',
  'captcha_tokens',
  'created_at',
].sort();

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet();
  t = await newTenant(3000);
  other = await newTenant(10);
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
}, 60_000);

describe('POST /api/v1/client/batches (cabinet)', () => {
  it('admits the jobs and answers exactly the cabinet batch response', async () => {
    const before = await balance(t);
    const res = await cabinetBatch(t, { jobs: [job('/page?a=secret'), job('/page?b=2'), job('/status/503')] });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(
      ['batch_id', 'charged_tokens', 'idempotent_replay', 'jobs', 'pricing_version', 'route_mode', 'status'].sort(),
    );
    expect(res.body).toMatchObject({
      batch_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'pending',
      charged_tokens: 3,
      pricing_version: 2,
      route_mode: 'http',
      idempotent_replay: false,
    });
    expect(res.body.jobs).toHaveLength(3);
    for (const j of res.body.jobs) {
      expect(Object.keys(j).sort()).toEqual(CABINET_JOB_KEYS);
      expect(j).toMatchObject({
        url: site.url,
        status: 'pending',
        cached: false,
        protected: false,
        pricing_version: 2,
        route_mode: 'http',
        base_tokens: 1,
        protected_tokens: 0,
        captcha_tokens: 0,
      });
    }
    expect(JSON.stringify(res.body)).not.toContain('secret');
    expect(await balance(t)).toBe(before - 3);
    // Each job is an ordinary request of the tenant, pointing at its batch.
    const d = await gw().get(`/api/v1/data/requests/${res.body.jobs[0].id}`).set('X-API-Key', t.key);
    expect(d.body.batch_id).toBe(res.body.batch_id);
  });

  it('replays under the same Idempotency-Key, conflicts with another body, and makes a new batch without a key', async () => {
    const body = { jobs: [job('/page?k=1'), job('/page?k=2')] };
    const key = `batch-${randomUUID()}`;
    const first = await cabinetBatch(t, body, key);
    const again = await cabinetBatch(t, body, key);
    expect(first.status).toBe(202);
    expect(again.body).toMatchObject({ batch_id: first.body.batch_id, idempotent_replay: true, charged_tokens: 0 });
    expect(again.body.jobs.map((j: { id: string }) => j.id)).toEqual(first.body.jobs.map((j: { id: string }) => j.id));
    const conflict = await cabinetBatch(t, { jobs: [job('/page?k=3')] }, key);
    expect([conflict.status, conflict.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
    const a = await cabinetBatch(t, body);
    const b = await cabinetBatch(t, body);
    expect(a.body.batch_id).not.toBe(b.body.batch_id);
    expect(b.body).toMatchObject({ idempotent_replay: false, charged_tokens: 2 });
  });

  it('needs a bearer token and validates every job with the submission rules', async () => {
    expect(
      (
        await gw()
          .post('/api/v1/client/batches')
          .send({ jobs: [job('/page')] })
      ).status,
    ).toBe(401);
    expect(
      (
        await gw()
          .post('/api/v1/client/batches')
          .set('X-API-Key', t.key)
          .send({ jobs: [job('/page')] })
      ).status,
    ).toBe(401);
    const empty = await cabinetBatch(t, { jobs: [] });
    expect(empty.status).toBe(422);
    const tooMany = await cabinetBatch(t, { jobs: Array.from({ length: 1001 }, () => ({ url: `${site.url}/page` })) });
    expect(tooMany.status).toBe(422);
    const range = await cabinetBatch(t, { jobs: [job('/page'), job('/page', { timeout_ms: 10 })] });
    expect([range.status, range.body.details.map((d: { field: string }) => d.field)]).toEqual([422, ['jobs.1.timeout_ms']]);
    // Rules beyond the schema (forbidden headers, control characters) are checked job by job too.
    const before = await balance(t);
    const rules = await cabinetBatch(t, {
      jobs: [job('/page'), job('/page'), job('/page', { headers: { Host: 'x' } }), job('/page', { cookies: { a: 'b\u0001' } })],
    });
    expect(rules.status).toBe(422);
    expect(rules.body.details.map((d: { field: string }) => d.field)).toEqual(['jobs.2.headers.Host', 'jobs.3.cookies.a']);
    expect(await balance(t)).toBe(before);
  });

  it('takes bodies beyond the 1 MB of other endpoints: 300 jobs with 4 KB URLs reach admission (402 here)', async () => {
    const broke = await newTenant(0);
    const jobs = Array.from({ length: 300 }, (_, i) => job(`/page?i=${i}&pad=${'x'.repeat(3_900)}`));
    expect(JSON.stringify({ jobs }).length).toBeGreaterThan(1_100_000);
    const res = await cabinetBatch(broke, { jobs });
    expect([res.status, res.body.code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
  });
});

describe('POST /api/v1/data/batches and GET /api/v1/data/batches/{id}', () => {
  it('aggregates the jobs: partial with counters, token sums, finished_at and redacted errors', async () => {
    const res = await dataBatch(t, { jobs: [job('/page?x=1'), job('/status/503'), job('/page?x=2')] });
    expect(res.status).toBe(202);
    const id = res.body.batch_id as string;
    const b = await untilBatch(t, id, (x) => x['finished_at'] !== null);
    expect(Object.keys(b).sort()).toEqual(
      [
        'id',
        'status',
        'total_jobs',
        'completed_jobs',
        'failed_jobs',
        'base_tokens',
        'protected_tokens',
        'captcha_tokens',
        'created_at',
        'finished_at',
        'jobs',
      ].sort(),
    );
    expect(b).toMatchObject({
      id,
      status: 'partial',
      total_jobs: 3,
      completed_jobs: 2,
      failed_jobs: 1,
      base_tokens: 3,
      protected_tokens: 0,
      captcha_tokens: 0,
    });
    const jobs = b['jobs'] as Record<string, unknown>[];
    expect(jobs.map((j) => j['id'])).toEqual(res.body.jobs.map((j: { id: string }) => j.id));
    expect(jobs.map((j) => j['status'])).toEqual(['completed', 'failed', 'completed']);
    expect(jobs[1]!['error']).toEqual({ code: 'TARGET_SERVER_ERROR', message: expect.any(String) });
    expect(jobs[0]!['error']).toBeNull();
    expect(Object.keys(jobs[1]!).sort()).toEqual(
      [
        'id',
        'url',
        'status',
        'route_mode',
        'proxy_type',
        'token_state',
        'cached',
        'protected',
        'pricing_version',
        'base_tokens',
        'protected_tokens',
        'captcha_tokens',
        'created_at',
        'started_at',
        'finished_at',
        'error',
      ].sort(),
    );
    expect(new Date(b['finished_at'] as string).getTime()).toBe(
      Math.max(...jobs.map((j) => new Date(j['finished_at'] as string).getTime())),
    );
  });

  it('reports completed, failed, running, cancelled and a mixed route mode', async () => {
    const ok = await dataBatch(t, { jobs: [job('/page'), job('/page?2')] });
    expect((await untilBatch(t, ok.body.batch_id, (x) => x['finished_at'] !== null))['status']).toBe('completed');

    // Two real failures in two stages: a target 500 over HTTP, and a selector that never appears in the browser.
    const failed = await dataBatch(t, {
      jobs: [job('/status/500'), job('/page', { mode: 'browser', wait_for_selector: '#never', timeout_ms: 5000 })],
    });
    expect(failed.body.route_mode).toBe('mixed');
    const f = await untilBatch(t, failed.body.batch_id, (x) => x['finished_at'] !== null);
    const reserved = failed.body.jobs.reduce((n: number, j: { base_tokens: number }) => n + j.base_tokens, 0);
    expect(f).toMatchObject({ status: 'failed', failed_jobs: 2, completed_jobs: 0, base_tokens: reserved });
    expect(failed.body.charged_tokens).toBe(reserved);
    expect((f['jobs'] as { error: { code: string } }[]).map((j) => j.error.code)).toEqual([
      'TARGET_SERVER_ERROR',
      'WAIT_FOR_SELECTOR_TIMEOUT',
    ]);

    const slow = await dataBatch(t, { jobs: [job('/slow?ms=3000'), job('/slow?ms=3000&b')] });
    const running = await untilBatch(t, slow.body.batch_id, (x) => x['status'] !== 'pending');
    expect(running['status']).toBe('running');
    for (const j of slow.body.jobs) await gw().post(`/api/v1/data/requests/${j.id}/cancel`).set('X-API-Key', t.key).send().expect(200);
    expect(await untilBatch(t, slow.body.batch_id, (x) => x['finished_at'] !== null)).toMatchObject({
      status: 'cancelled',
      failed_jobs: 0,
      completed_jobs: 0,
    });
  });

  it("hides another tenant's batch (404) and refuses a bad id (422)", async () => {
    const res = await dataBatch(t, { jobs: [job('/page')] });
    const foreign = await readBatch(other, res.body.batch_id);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
    expect((await readBatch(t, 'nope')).status).toBe(422);
    expect((await readBatch(t, randomUUID())).status).toBe(404);
  });
});

describe('batch.completed', () => {
  it("is announced once, when the last job ends, to the tenant's endpoints that subscribe to it", async () => {
    const receiver = await startWebhookReceiver();
    const { bodies } = receiver;
    try {
      const { projectId, environmentId } = await cabinetEnvironment(fleet.url('gateway'), t.cabinet, 'Batches');
      const hook = await gw()
        .post(`/api/v1/client/browser/projects/${projectId}/environments/${environmentId}/webhooks`)
        .set('Authorization', `Bearer ${t.cabinet}`)
        .send({ url: `${receiver.url}/hooks/batches`, event_types: ['batch.completed'] });
      expect(hook.status).toBe(201);

      const res = await dataBatch(t, {
        jobs: [job('/page?b=1'), job('/page?b=2'), job('/status/503'), job('/page?b=3'), job('/page?b=4'), job('/page?b=5')],
      });
      expect(res.status).toBe(202);
      const id = res.body.batch_id as string;
      await untilBatch(t, id, (x) => x['finished_at'] !== null, 90_000);
      const mine = await eventually(
        async () => bodies.filter((b) => b.data['batch_id'] === id),
        (xs) => xs.length >= 1,
        30_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // nothing more comes
      expect(bodies.filter((b) => b.data['batch_id'] === id)).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        type: 'batch.completed',
        data: { batch_id: id, status: 'partial', total_jobs: 6, completed: 5, failed: 1, cancelled: 0, finished_at: expect.any(String) },
      });
      expect(await orchestratorCount('SELECT count(*) AS n FROM batches WHERE id = $1::uuid AND finished_at IS NOT NULL', [id])).toBe(1);
    } finally {
      await receiver.close();
    }
  }, 150_000);
});

describe('admission all or nothing', () => {
  it('refuses a batch the balance cannot fully cover, creating nothing, and admits 1,000 jobs at once', async () => {
    const poor = await newTenant(999);
    const jobs = Array.from({ length: 1000 }, (_, i) => job(`/status/404?i=${i}`));
    const refused = await dataBatch(poor, { jobs });
    expect([refused.status, refused.body.code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
    expect(await balance(poor)).toBe(999);
    expect(await orchestratorCount('SELECT count(*) AS n FROM data_requests WHERE tenant_id = $1', [poor.id])).toBe(0);
    expect(await orchestratorCount('SELECT count(*) AS n FROM batches WHERE tenant_id = $1', [poor.id])).toBe(0);

    const rich = await newTenant(1000);
    const t0 = Date.now();
    const admitted = await dataBatch(rich, { jobs }, `big-${randomUUID()}`);
    const admissionMs = Date.now() - t0;
    expect(admitted.status).toBe(202);
    expect(admitted.body).toMatchObject({ charged_tokens: 1000, idempotent_replay: false });
    expect(admitted.body.jobs).toHaveLength(1000);
    expect(await balance(rich)).toBe(0);
    expect(await orchestratorCount('SELECT count(*) AS n FROM data_requests WHERE batch_id = $1', [admitted.body.batch_id])).toBe(1000);
    expect(
      await orchestratorCount(
        "SELECT count(*) AS n FROM request_events e JOIN data_requests r ON r.id = e.request_id WHERE r.batch_id = $1 AND e.kind = 'request.accepted'",
        [admitted.body.batch_id],
      ),
    ).toBe(1000);
    const read = await readBatch(rich, admitted.body.batch_id);
    expect(read.body.total_jobs).toBe(1000);
    console.log(`batch of 1000 jobs admitted in ${admissionMs} ms`);
  }, 120_000);
});
