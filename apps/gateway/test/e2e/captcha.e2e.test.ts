// Own fleet (not the shared one of ./shared/): the renderer points at this file's local CAPTCHA solver, and the file restarts the renderer.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  CAPTCHA_PROTECTED_TEXT,
  eventually,
  startCaptchaSolver,
  startFixtureSite,
  startFleet,
  startProxyExit,
  startServiceProcess,
  UNSOLVABLE_SITEKEY,
  type CaptchaSolverServer,
  type FixtureSite,
  type Fleet,
  type ProxyExitServer,
  type ServiceProcess,
  internalAgent,
} from '@wdr/testkit';

/**
 * CAPTCHA in the browser stage through the public API, on the real fleet: fixture pages behind
 * reCAPTCHA-, hCaptcha- and Turnstile-like widgets whose content appears only for a token the local
 * solver minted; the renderer solves through that solver (createTask / getTaskResult). What is
 * checked: the `solving_captcha` status in the events, the protected content in the result, what
 * the ledger charged (pricing version 2: browser datacenter 5, one solve 10), the ceiling, a failed
 * solve, no solver configured, and a solve through a proxy exit with the traffic the exit counted.
 */
let fleet: Fleet;
let site: FixtureSite;
let solver: CaptchaSolverServer;
let key: string;
let tenantId: string;

const gw = () => request(fleet.url('gateway'));
type Detail = Record<string, unknown> & {
  status: string;
  token_state: string;
  captcha_type: string | null;
  captcha_tokens: number;
  result_meta: Record<string, unknown> | null;
  user_error: Record<string, unknown> | null;
};
type Event = { type: string; status: string; data: Record<string, unknown> };

/** Each request must really run (the CAPTCHA is what is tested): never from the result cache. */
async function submit(body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await gw()
    .post('/api/v1/data/requests')
    .set('X-API-Key', key)
    .send({ skip_cache: true, ...body });
  expect([res.status, res.body]).toEqual([202, expect.anything()]);
  return res.body as { id: string };
}

const detail = async (id: string): Promise<Detail> =>
  (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', key).expect(200)).body as Detail;
const settled = (id: string, ms = 90_000) =>
  eventually(
    () => detail(id),
    (d) => ['settled', 'refunded'].includes(d.token_state),
    ms,
    200,
  );
const textOf = async (id: string) =>
  (await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', key).expect(200)).text;
const eventsOf = async (id: string) =>
  ((await gw().get(`/api/v1/data/requests/${id}/events`).set('X-API-Key', key).expect(200)).body as { data: Event[] }).data;
const charged = async (id: string) =>
  (
    (
      await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
        .get(`/internal/v1/reservations/${id}`)
        .expect(200)
    ).body as { charged_tokens: number }
  ).charged_tokens;
const balance = async () =>
  (
    (
      await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
        .get(`/internal/v1/accounts/${tenantId}/balance`)
        .expect(200)
    ).body as {
      balance_tokens: number;
    }
  ).balance_tokens;
const tasksCreated = () => [...solver.tasks.values()].reduce((n, c) => n + c, 0);

beforeAll(async () => {
  solver = await startCaptchaSolver();
  site = await startFixtureSite({ captchaVerifyUrl: solver.verifyUrl });
  fleet = await startFleet({
    env: { 'browser-renderer': { CAPTCHA_SOLVER_URL: solver.url, CAPTCHA_SOLVER_KEY: solver.clientKey, CAPTCHA_SOLVER_POLL_MS: '200' } },
  });
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'captcha', '--credits', '5000']);
  key = tenant['api_key'] as string;
  tenantId = tenant['tenant_id'] as string;
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await Promise.all([site?.close(), solver?.close()]);
}, 60_000);

describe('a page behind a CAPTCHA', () => {
  it('goes through solving_captcha, completes with the protected content, and is charged one solve (10) on top of the browser stage (5)', async () => {
    const tasks = tasksCreated();
    const s = await submit({ url: `${site.url}/captcha/recaptcha?session=tenant-secret`, wait_for_text: 'Protected content' });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d.captcha_type, d.captcha_tokens]).toEqual(['completed', 'settled', 'captcha', 10]);
    expect(await textOf(s.id)).toContain(CAPTCHA_PROTECTED_TEXT);
    expect(d.result_meta?.['captcha']).toEqual({ kind: 'recaptcha_v2', solves: 1 });
    expect(await charged(s.id)).toBe(15);
    // The solver was told the page's origin and path with the widget's site key; the query stays the tenant's.
    expect(tasksCreated()).toBe(tasks + 1);
    expect(solver.received.at(-1)).toEqual({
      type: 'RecaptchaV2TaskProxyless',
      websiteURL: `${site.url}/captcha/recaptcha`,
      websiteKey: '6Lc-fixture-recaptcha-sitekey',
    });
    const events = await eventsOf(s.id);
    const kinds = events.map((e) => e.type);
    const solving = events.find((e) => e.type === 'request.solving_captcha');
    expect(solving).toMatchObject({ status: 'solving_captcha', data: { stage: 'browser' } });
    expect(events.find((e) => e.type === 'request.captcha_solved')).toMatchObject({ status: 'running' });
    expect(kinds.indexOf('request.running')).toBeLessThan(kinds.indexOf('request.solving_captcha'));
    expect(kinds.indexOf('request.solving_captcha')).toBeLessThan(kinds.indexOf('request.captcha_solved'));
    expect(kinds.indexOf('request.captcha_solved')).toBeLessThan(kinds.indexOf('request.completed'));
    // token_state settled: the ledger's figure reflected back (billing.reservation_resolved).
    expect(events.find((e) => e.type === 'tokens.settled')?.data).toEqual({ charged_tokens: 15 });
  }, 120_000);

  it('solves hCaptcha and Turnstile widgets too, with their own task types', async () => {
    const h = await submit({ url: `${site.url}/captcha/hcaptcha`, wait_for_text: 'Protected content' });
    const t = await submit({ url: `${site.url}/captcha/turnstile`, wait_for_text: 'Protected content' });
    for (const [s, kind] of [
      [h, 'hcaptcha'],
      [t, 'turnstile'],
    ] as const) {
      const d = await settled(s.id);
      expect([kind, d.status, d.captcha_type, d.captcha_tokens]).toEqual([kind, 'completed', 'captcha', 10]);
      expect(d.result_meta?.['captcha']).toEqual({ kind, solves: 1 });
      expect(await textOf(s.id)).toContain(CAPTCHA_PROTECTED_TEXT);
    }
    expect(solver.tasks.get('HCaptchaTaskProxyless')).toBeGreaterThanOrEqual(1);
    expect(solver.tasks.get('TurnstileTaskProxyless')).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('lists the request as solving_captcha while the solver works', async () => {
    // The solver answers `processing` first; with 200 ms polls the status is visible for a moment.
    const s = await submit({ url: `${site.url}/captcha/recaptcha?n=list`, wait_for_text: 'Protected content' });
    const seen = await eventually(
      async () =>
        (
          (await gw().get('/api/v1/data/requests?status=solving_captcha').set('X-API-Key', key).expect(200)).body as {
            data: { id: string }[];
          }
        ).data.map((r) => r.id),
      (ids) => ids.includes(s.id),
      60_000,
      50,
    );
    expect(seen).toContain(s.id);
    expect((await settled(s.id)).status).toBe('completed');
  }, 120_000);

  it('shows solving_captcha on a replay of the submission and in the batch job view, not running', async () => {
    const body = { url: `${site.url}/captcha/recaptcha?n=replay`, wait_for_text: 'Protected content', skip_cache: true };
    const idem = `captcha-replay-${Date.now()}`;
    const send = () => gw().post('/api/v1/data/requests').set('X-API-Key', key).set('Idempotency-Key', idem).send(body);
    const first = await send();
    expect(first.status).toBe(202);
    const replayed = await eventually(
      async () => (await send()).body as { status: string; idempotent_replay: boolean },
      (r) => r.status === 'solving_captcha',
      60_000,
      50,
    );
    expect(replayed).toMatchObject({ status: 'solving_captcha', idempotent_replay: true });
    expect((await settled(first.body.id as string)).status).toBe('completed');

    const batch = await gw()
      .post('/api/v1/data/batches')
      .set('X-API-Key', key)
      .send({ jobs: [{ url: `${site.url}/captcha/recaptcha?n=batch`, wait_for_text: 'Protected content', skip_cache: true }] });
    expect(batch.status).toBe(202);
    const job = await eventually(
      async () =>
        (
          (
            await gw()
              .get(`/api/v1/data/batches/${batch.body.batch_id as string}`)
              .set('X-API-Key', key)
          ).body as { jobs: { id: string; status: string }[] }
        ).jobs[0]!,
      (j) => j.status === 'solving_captcha',
      60_000,
      50,
    );
    expect(job.status).toBe('solving_captcha');
    expect((await settled(job.id)).status).toBe('completed');
  }, 180_000);
});

describe('the ceiling and failures', () => {
  it('stops at max_credits_per_request below the price of a solve: budget_exhausted, charged the ceiling, the solver never asked', async () => {
    const tasks = tasksCreated();
    const s = await submit({ url: `${site.url}/captcha/recaptcha?n=budget`, mode: 'browser', max_credits_per_request: 5 });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d.user_error?.['reason'], d.user_error?.['code']]).toEqual([
      'failed',
      'settled',
      'budget_exhausted',
      'BUDGET_EXHAUSTED',
    ]);
    expect(await charged(s.id)).toBe(5);
    expect([d.captcha_type, d.captcha_tokens]).toEqual([null, 0]);
    expect(tasksCreated()).toBe(tasks);
    expect((await eventsOf(s.id)).map((e) => e.type)).not.toContain('request.solving_captcha');
  }, 120_000);

  it('fails a solve the provider cannot make with CAPTCHA_NOT_SOLVED, refunded in full', async () => {
    const before = await balance();
    const s = await submit({ url: `${site.url}/captcha/recaptcha?sitekey=${UNSOLVABLE_SITEKEY}` });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d.user_error?.['code']]).toEqual(['failed', 'refunded', 'CAPTCHA_NOT_SOLVED']);
    expect(String(d.user_error?.['message'])).not.toMatch(/ERROR_|127\.0\.0\.1/);
    expect([d.captcha_type, d.captcha_tokens]).toEqual([null, 0]);
    expect(await charged(s.id)).toBe(0);
    // The solve was authorized (and its hold taken), then released with the rest.
    expect((await eventsOf(s.id)).map((e) => e.type)).toContain('request.solving_captcha');
    expect(await balance()).toBe(before);
  }, 120_000);
});

describe('through a proxy exit', () => {
  let exit: ProxyExitServer;

  beforeAll(async () => {
    exit = await startProxyExit({ host: '127.0.0.7' });
    await adminCommand(fleet, ['proxy-add', '--label', 'dc-captcha', '--class', 'datacenter'], 'fetch-orchestrator', {
      PROXY_EXIT_URL: exit.url,
    });
  }, 60_000);

  afterAll(async () => {
    await exit?.close();
  });

  it('solves behind the exit, and the usage bytes are the bytes the exit itself counted', async () => {
    const usageOf = async () =>
      (
        (await gw().get('/api/v1/data/usage').set('X-API-Key', key).expect(200)).body as {
          proxy_traffic: { request_bytes: number; response_bytes: number; charged_jobs: number; measurement_unavailable_jobs: number };
        }
      ).proxy_traffic;
    const usageBefore = await usageOf();
    const bytesBefore = exit.bytes();
    // The exit list is reloaded by the orchestrator on NOTIFY: wait until a render really uses it.
    const s = await eventually(
      async () => {
        const sub = await submit({ url: `${site.url}/captcha/recaptcha?n=proxied`, wait_for_text: 'Protected content' });
        await settled(sub.id);
        return sub;
      },
      () => exit.requests() > 0,
      60_000,
      500,
    );
    const d = await detail(s.id);
    expect([d.status, d.captcha_type, d.captcha_tokens]).toEqual(['completed', 'captcha', 10]);
    expect(await textOf(s.id)).toContain(CAPTCHA_PROTECTED_TEXT);
    const bytes = exit.bytes();
    const fromClients = bytes.fromClients - bytesBefore.fromClients;
    const toClients = bytes.toClients - bytesBefore.toClients;
    expect(toClients).toBeGreaterThan(500);
    const usage = await usageOf();
    const measured = {
      request: usage.request_bytes - usageBefore.request_bytes,
      response: usage.response_bytes - usageBefore.response_bytes,
    };
    // eslint-disable-next-line no-console
    console.log(
      `browser through the exit: measured ${measured.request}/${measured.response} bytes, the exit counted ${fromClients}/${toClients}`,
    );
    expect(usage.measurement_unavailable_jobs).toBe(usageBefore.measurement_unavailable_jobs);
    expect(Math.abs(measured.request - fromClients)).toBeLessThanOrEqual(64);
    expect(Math.abs(measured.response - toClients)).toBeLessThanOrEqual(64);
    // Browser 5 + one solve 10 + datacenter traffic (200 per GiB, rounded up per request) 1.
    expect(await charged(s.id)).toBe(16);
  }, 180_000);
});

describe('without a solver configured', () => {
  let renderer: ServiceProcess | undefined;

  beforeAll(async () => {
    await fleet.kill('browser-renderer');
    renderer = await startServiceProcess('browser-renderer', {
      ...fleet.envOf('browser-renderer'),
      CAPTCHA_SOLVER_URL: '',
      CAPTCHA_SOLVER_KEY: '',
    });
  }, 90_000);

  afterAll(async () => {
    await renderer?.kill();
  }, 30_000);

  it('reports the CAPTCHA in result_meta, delivers the page as it stands, and charges nothing for it', async () => {
    const tasks = tasksCreated();
    const s = await submit({ url: `${site.url}/captcha/recaptcha?n=unsolved`, proxy: 'off' });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d.captcha_type, d.captcha_tokens]).toEqual(['completed', 'settled', null, 0]);
    expect(d.result_meta?.['captcha']).toEqual({ kind: 'recaptcha_v2', solves: 0 });
    expect(await textOf(s.id)).not.toContain(CAPTCHA_PROTECTED_TEXT);
    expect(await charged(s.id)).toBe(5);
    expect(tasksCreated()).toBe(tasks);
    expect((await eventsOf(s.id)).map((e) => e.type)).not.toContain('request.solving_captcha');
  }, 120_000);
});
