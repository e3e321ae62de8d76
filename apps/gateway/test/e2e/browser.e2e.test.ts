// Own fleet (not the shared one of ./shared/): it kills Chromium and the renderer mid-render.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, eventually, startFixtureSite, startFleet, type Fleet, type FixtureSite, internalAgent } from '@wdr/testkit';
import { settledBalance } from './balances.js';

/**
 * The browser stage through the public API, on the real fleet with a real Chromium: the default
 * mode renders, waits, text, actions and what they may not do, context isolation, the resource
 * policy, `auto` escalation and its billing, the budget ceiling, debug artifacts, and a Chromium
 * killed mid-render.
 */
let fleet: Fleet;
let site: FixtureSite;
let key: string;
let tenantId: string;
let otherKey: string;

const gw = () => request(fleet.url('gateway'));
type Detail = Record<string, unknown> & {
  status: string;
  token_state: string;
  result_meta: Record<string, unknown> | null;
  user_error: Record<string, unknown> | null;
};

async function submit(body: Record<string, unknown>, apiKey = key): Promise<{ id: string; route_mode: string; base_tokens: number }> {
  const res = await gw().post('/api/v1/data/requests').set('X-API-Key', apiKey).send(body);
  expect(res.status).toBe(202);
  return res.body as { id: string; route_mode: string; base_tokens: number };
}

const detail = async (id: string, apiKey = key): Promise<Detail> =>
  (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', apiKey).expect(200)).body as Detail;
const settledDetail = (id: string, ms = 60_000) =>
  eventually(
    () => detail(id),
    (d) => ['settled', 'refunded'].includes(d.token_state),
    ms,
    200,
  );
const textOf = async (id: string) =>
  (await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', key).expect(200)).text;
const eventsOf = async (id: string) =>
  (
    (await gw().get(`/api/v1/data/requests/${id}/events`).set('X-API-Key', key).expect(200)).body as {
      data: { type: string; data: Record<string, unknown> }[];
    }
  ).data;

const balance = (): Promise<number> => settledBalance(fleet, tenantId);

/** What the ledger finally charged for a request (its settled reservation). */
async function charged(id: string): Promise<number> {
  const res = await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
    .get(`/internal/v1/reservations/${id}`)
    .expect(200);
  return (res.body as { charged_tokens: number }).charged_tokens;
}

beforeAll(async () => {
  site = await startFixtureSite();
  // The renderer stops with production's grace period (the fleets' is 10 s): the SIGTERM case
  // below is a deploy's, and a loaded machine stretches a render and the browsers' close.
  fleet = await startFleet({ env: { 'browser-renderer': { SHUTDOWN_GRACE_MS: '15000' } } });
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'browser', '--credits', '5000']);
  key = tenant['api_key'] as string;
  tenantId = tenant['tenant_id'] as string;
  otherKey = (await adminCommand(fleet, ['create-tenant', '--name', 'other', '--credits', '100']))['api_key'] as string;
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
}, 60_000);

describe('the default request', () => {
  it('renders in a real Chromium: the JavaScript-made text is in the result, billed at the browser tariff', async () => {
    const s = await submit({ url: `${site.url}/js-page` });
    expect(s.route_mode).toBe('browser');
    const d = await settledDetail(s.id);
    expect([d.status, d.token_state]).toEqual(['completed', 'settled']);
    expect(d.result_meta).toMatchObject({ stage: 'browser', status_code: 200, javascript: true });
    expect(await textOf(s.id)).toContain('Rendered by JavaScript');
    expect(await charged(s.id)).toBe(5);
    const running = (await eventsOf(s.id)).find((e) => e.type === 'request.running');
    expect(running?.data).toMatchObject({ stage: 'browser' });
  });

  it('renders with JavaScript disabled when asked: the script does not run', async () => {
    const s = await submit({ url: `${site.url}/js-page`, mode: 'browser', javascript: false });
    expect((await settledDetail(s.id)).status).toBe('completed');
    expect(await textOf(s.id)).not.toContain('Rendered by JavaScript');
  });

  it('sends the user agent, headers and cookies of the submission', async () => {
    const ua = await submit({ url: `${site.url}/ua`, user_agent: 'wdr-browser-test/1.0' });
    const headers = await submit({ url: `${site.url}/headers`, headers: { 'X-Wdr-Test': 'header-value' } });
    const cookies = await submit({ url: `${site.url}/cookies/show`, cookies: { flavour: 'oatmeal' } });
    for (const s of [ua, headers, cookies]) expect((await settledDetail(s.id)).status).toBe('completed');
    expect(await textOf(ua.id)).toContain('wdr-browser-test/1.0');
    expect((await textOf(headers.id)).toLowerCase()).toContain('x-wdr-test: header-value');
    expect(await textOf(cookies.id)).toContain('flavour=oatmeal');
  });
});

describe('waits and text', () => {
  it('fails with WAIT_FOR_SELECTOR_TIMEOUT when the selector never appears, and refunds', async () => {
    const before = await balance();
    const s = await submit({ url: `${site.url}/page`, wait_for_selector: '#never', timeout_ms: 5000 });
    const d = await settledDetail(s.id);
    expect([d.status, d.token_state]).toEqual(['failed', 'refunded']);
    expect(d['user_error']).toMatchObject({ code: 'WAIT_FOR_SELECTOR_TIMEOUT' });
    expect(await balance()).toBe(before);
  });

  it('waits for a selector and for text that scripts add later', async () => {
    const bySelector = await submit({ url: `${site.url}/late?ms=700`, wait_for_selector: '#late' });
    const byText = await submit({ url: `${site.url}/late?ms=700`, wait_for_text: 'Late text arrived' });
    for (const s of [bySelector, byText]) {
      expect((await settledDetail(s.id)).status).toBe('completed');
      expect(await textOf(s.id)).toContain('Late text arrived');
    }
    const missing = await submit({ url: `${site.url}/late?ms=700`, wait_for_text: 'never written', timeout_ms: 5000 });
    expect((await settledDetail(missing.id))['user_error']).toMatchObject({ code: 'WAIT_FOR_TEXT_TIMEOUT' });
  });

  it('returns the text of the elements result_text_selector matches, in the browser and over HTTP', async () => {
    const browser = await submit({ url: `${site.url}/page`, result_text_selector: '.price' });
    const http = await submit({ url: `${site.url}/page`, mode: 'http', result_text_selector: '.price' });
    for (const s of [browser, http]) expect((await settledDetail(s.id)).status).toBe('completed');
    expect(await textOf(browser.id)).toBe('42.00');
    expect(await textOf(http.id)).toBe('42.00');
    expect((await detail(browser.id)).result_meta).toMatchObject({ text_matches: 1 });
  });
});

describe('browser actions', () => {
  it('clicks, fills, selects, hovers and scrolls in order, and reports only aggregates', async () => {
    const s = await submit({
      url: `${site.url}/actions`,
      browser_actions: [
        { type: 'click', selector: '#btn' },
        { type: 'fill', selector: '#name', value: 'Ada' },
        { type: 'select', selector: '#pick', values: ['b'] },
        { type: 'hover', selector: '#hover' },
        { type: 'scroll', to: 'bottom' },
        { type: 'wait_for_selector', selector: '#bottom-seen', timeout_ms: 5000 },
      ],
    });
    const d = await settledDetail(s.id);
    expect(d.status).toBe('completed');
    expect(d.result_meta?.['actions']).toEqual({ run: 6, failed: 0, blocked: 0, elapsed_ms: expect.any(Number) });
    const text = await textOf(s.id);
    for (const marker of ['clicked', 'Ada', 'bottom reached']) expect(text).toContain(marker);
    const html = (await gw().get(`/api/v1/data/requests/${s.id}/result`).set('X-API-Key', key).expect(200)).text;
    expect(html).toMatch(/id="hover-out"[^>]*>[^<]*hovered/);
  });

  it('blocks a navigating click, both kinds of popup and both kinds of download; the page stays where it was', async () => {
    const s = await submit({
      url: `${site.url}/actions`,
      browser_actions: [
        { type: 'click', selector: '#nav' },
        { type: 'click', selector: '#popup' },
        { type: 'click', selector: '#open' },
        { type: 'click', selector: '#download' },
        { type: 'click', selector: '#download-attr' },
        { type: 'click', selector: '#btn' },
      ],
    });
    const d = await settledDetail(s.id);
    expect(d.status).toBe('completed');
    expect(d.result_meta?.['actions']).toMatchObject({ run: 6, failed: 0, blocked: 5 });
    // Still the actions page (not /page), and the last click worked there.
    const text = await textOf(s.id);
    expect(text).toContain('clicked');
    expect(text).not.toContain('Hello from the fixture site');
  });

  it('fails the request on an action that cannot run, unless it is optional', async () => {
    const strict = await submit({
      url: `${site.url}/actions`,
      browser_actions: [{ type: 'click', selector: '#absent' }],
      timeout_ms: 5000,
    });
    const lenient = await submit({
      url: `${site.url}/actions`,
      browser_actions: [
        { type: 'click', selector: '#absent', optional: true },
        { type: 'click', selector: '#btn' },
      ],
      timeout_ms: 20_000,
    });
    expect((await settledDetail(strict.id))['user_error']).toMatchObject({ code: 'BROWSER_ACTION_FAILED' });
    const d = await settledDetail(lenient.id);
    expect([d.status, d.user_error]).toEqual(['completed', null]);
    expect(d.result_meta?.['actions']).toMatchObject({ run: 2, failed: 1 });
    expect(await textOf(lenient.id)).toContain('clicked');
  });

  it('refuses an unknown action type or a bad field at the door, with the field named', async () => {
    const res = await gw()
      .post('/api/v1/data/requests')
      .set('X-API-Key', key)
      .send({ url: `${site.url}/page`, browser_actions: [{ type: 'teleport' }, { type: 'click' }, { type: 'wait', ms: 60_000 }] });
    expect(res.status).toBe(422);
    const fields = (res.body as { details: { field: string }[] }).details.map((x) => x.field);
    expect(fields).toEqual(expect.arrayContaining(['browser_actions.0.type', 'browser_actions.1.selector', 'browser_actions.2.ms']));
  });
});

describe('isolation', () => {
  it('never shows a cookie set during one request to the next one', async () => {
    const a = await submit({ url: `${site.url}/cookies/set?name=leak&value=secret42` });
    expect((await settledDetail(a.id)).status).toBe('completed');
    expect(await textOf(a.id)).toContain('secret42');
    const b = await submit({ url: `${site.url}/cookies/show` });
    expect((await settledDetail(b.id)).status).toBe('completed');
    expect(await textOf(b.id)).not.toContain('secret42');
  });
});

describe('resource policy', () => {
  it('site-light (adaptive) blocks images yet the page renders; compatible loads them all', async () => {
    const light = await submit({ url: `${site.url}/images?n=20` });
    const full = await submit({ url: `${site.url}/images?n=20`, resource_policy: 'compatible' });
    const [dl, df] = [await settledDetail(light.id), await settledDetail(full.id)];
    expect([dl.status, df.status]).toEqual(['completed', 'completed']);
    expect(dl.result_meta?.['resource_policy']).toMatchObject({ requested: 'adaptive', applied: 'site-light' });
    expect(
      (dl.result_meta!['resource_policy'] as { blocked_requests: Record<string, number> }).blocked_requests['image'] ?? 0,
    ).toBeGreaterThanOrEqual(20);
    expect(df.result_meta?.['resource_policy']).toEqual({ requested: 'compatible', applied: 'full', blocked_requests: {} });
    expect(await textOf(light.id)).toContain('Image gallery');
  });
});

describe('auto', () => {
  it('stays on HTTP for a plain page and escalates a JavaScript shell to the browser, each billed at its stage', async () => {
    const plain = await submit({ url: `${site.url}/page`, mode: 'auto' });
    const shell = await submit({ url: `${site.url}/js-shell`, mode: 'auto' });
    const [dp, ds] = [await settledDetail(plain.id), await settledDetail(shell.id)];
    expect([dp.status, ds.status]).toEqual(['completed', 'completed']);
    expect(dp.result_meta).toMatchObject({ stage: 'http' });
    expect(ds.result_meta).toMatchObject({ stage: 'browser' });
    expect(await textOf(shell.id)).toContain('Shell rendered');
    expect(await charged(plain.id)).toBe(1);
    expect(await charged(shell.id)).toBe(5);
    expect((await eventsOf(shell.id)).find((e) => e.type === 'request.escalated')?.data).toEqual({
      from: 'http',
      to: 'browser',
      reason: 'js_shell',
    });
    expect((await eventsOf(plain.id)).map((e) => e.type)).not.toContain('request.escalated');
  });

  it('ends in budget_exhausted when the escalation would cross max_credits_per_request, charged at most the ceiling', async () => {
    // skip_cache: the escalation test above completed this page; this one must really run.
    const s = await submit({ url: `${site.url}/js-shell`, mode: 'auto', max_credits_per_request: 2, skip_cache: true });
    const d = await settledDetail(s.id);
    expect([d.status, d.token_state]).toEqual(['failed', 'settled']);
    expect(d['error']).toMatchObject({ reason: 'budget_exhausted' });
    expect(d['user_error']).toMatchObject({ reason: 'budget_exhausted' });
    const cost = await charged(s.id);
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThanOrEqual(2);
    const reservation = await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
      .get(`/internal/v1/reservations/${s.id}`)
      .expect(200);
    expect(reservation.body).toMatchObject({ end_reason: 'budget_exhausted', token_state: 'settled' });
    expect((await eventsOf(s.id)).find((e) => e.type === 'request.failed')?.data).toMatchObject({ error: { reason: 'budget_exhausted' } });
  });

  it('escalates a challenge page, marks the request protected, and refunds it when the challenge cannot be passed', async () => {
    const s = await submit({ url: `${site.url}/challenge`, mode: 'auto' });
    const d = await settledDetail(s.id);
    expect(d['protected']).toBe(true);
    expect((await eventsOf(s.id)).find((e) => e.type === 'request.escalated')?.data).toMatchObject({
      reason: 'challenge',
      protection: 'cloudflare',
    });
    // The fixture's challenge never passes: not delivered, so not billed.
    expect([d.status, d.token_state, (d['user_error'] as { code: string }).code]).toEqual(['failed', 'refunded', 'PROTECTION_NOT_PASSED']);
  });
});

describe('a proxy network without exits', () => {
  it('fails residential_browser with PROXY_UNAVAILABLE and refunds it instead of billing the residential tariff for a direct render', async () => {
    // This fleet has no residential exit configured (proxies.e2e.test.ts runs the browser through one).
    const before = await balance();
    const s = await submit({ url: `${site.url}/page`, mode: 'residential_browser' });
    const d = await settledDetail(s.id);
    expect([d.status, d.token_state]).toEqual(['failed', 'refunded']);
    expect(d['user_error']).toMatchObject({ code: 'PROXY_UNAVAILABLE' });
    expect(await balance()).toBe(before);
  });
});

describe('debug artifacts', () => {
  it('are kept only for a failed request, listed on its detail, and readable only by its tenant', async () => {
    const failed = await submit({ url: `${site.url}/page`, wait_for_selector: '#never', timeout_ms: 5000, debug_artifacts: true });
    const ok = await submit({ url: `${site.url}/page`, debug_artifacts: true });
    const df = await settledDetail(failed.id);
    const dok = await settledDetail(ok.id);
    expect(dok.status).toBe('completed');
    expect(dok['debug_artifacts']).toEqual({});
    const listing = df['debug_artifacts'] as { items: { name: string; content_type: string }[]; expires_at: string };
    expect(listing.items.map((i) => i.name).sort()).toEqual(['report.json', 'screenshot.png']);
    const png = await gw()
      .get(`/api/v1/data/requests/${failed.id}/debug-artifacts/screenshot.png`)
      .set('X-API-Key', key)
      .buffer(true)
      .expect(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect((png.body as Buffer).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const report = await gw().get(`/api/v1/data/requests/${failed.id}/debug-artifacts/report.json`).set('X-API-Key', key).expect(200);
    const reportText = JSON.stringify(report.body);
    expect(reportText).not.toContain('Hello from the fixture site'); // never page content
    await gw().get(`/api/v1/data/requests/${failed.id}/debug-artifacts/screenshot.png`).set('X-API-Key', otherKey).expect(404);
    await gw().get(`/api/v1/data/requests/${ok.id}/debug-artifacts/screenshot.png`).set('X-API-Key', key).expect(404);
  });
});

describe('a Chromium that dies mid-render', () => {
  it('costs that attempt only: the request ends cleanly and the next one still renders', async () => {
    const s = await submit({ url: `${site.url}/slow?ms=4000`, timeout_ms: 30_000 });
    await eventually(
      () => detail(s.id),
      (d) => d.status === 'running',
      30_000,
      100,
    );
    // Give the page a moment to start loading, then kill every Chromium process of the renderer.
    await new Promise((r) => setTimeout(r, 500));
    const rendererPid = fleet.pid('browser-renderer');
    expect(rendererPid).toBeDefined();
    const chromium = execFileSync('pgrep', ['-P', String(rendererPid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(chromium.length).toBeGreaterThan(0);
    for (const pid of chromium) process.kill(Number(pid), 'SIGKILL');
    const d = await settledDetail(s.id, 90_000);
    if (d.status === 'completed') expect(d.token_state).toBe('settled');
    else expect([d.status, d.token_state, (d['user_error'] as { code: string }).code]).toEqual(['failed', 'refunded', 'BROWSER_CRASHED']);
    // skip_cache: the first test rendered this page already; this one must really render.
    const next = await submit({ url: `${site.url}/js-page`, skip_cache: true });
    expect((await settledDetail(next.id, 90_000)).status).toBe('completed');
    expect(await textOf(next.id)).toContain('Rendered by JavaScript');
  }, 180_000);
});

describe('a renderer killed mid-render', () => {
  it('repeats the job, never its effects: completed once, charged once', async () => {
    const s = await submit({ url: `${site.url}/slow?ms=3000`, timeout_ms: 30_000 });
    await eventually(
      () => detail(s.id),
      (d) => d.status === 'running',
      30_000,
      100,
    );
    const rendererPid = fleet.pid('browser-renderer')!;
    const chromium = execFileSync('pgrep', ['-P', String(rendererPid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    await fleet.kill('browser-renderer', 'SIGKILL');
    // Chromium outlives a SIGKILLed parent: clean up what the dead renderer left.
    for (const pid of chromium) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await fleet.start('browser-renderer');
    const d = await settledDetail(s.id, 90_000);
    expect([d.status, d.token_state]).toEqual(['completed', 'settled']);
    const events = await eventsOf(s.id);
    expect(events.filter((e) => e.type === 'request.completed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'request.running').length).toBeGreaterThanOrEqual(2);
    expect(await charged(s.id)).toBe(5);
  }, 180_000);
});

describe('large pages', () => {
  it('hands a 10 MB rendered page back by claim-check, whole, while detail reads of the request keep answering 200', async () => {
    const s = await submit({ url: `${site.url}/big?mb=10`, timeout_ms: 120_000 });
    // Two readers poll the request's detail from submission to its end, across the render and the
    // hand-back of its 10 MB page: the orchestrator must keep answering the gateway (10 s timeout)
    // while the page arrives. Each read's HTTP status and the request status it saw are kept.
    const reads: { code: number; status: string | undefined; at: number }[] = [];
    let finished = false;
    const reader = async () => {
      while (!finished) {
        const res = await gw().get(`/api/v1/data/requests/${s.id}`).set('X-API-Key', key);
        const status = (res.body as { status?: string }).status;
        reads.push({ code: res.status, status, at: Date.now() });
        if (res.status === 200 && status !== undefined && !['pending', 'running'].includes(status)) finished = true;
        else await new Promise((r) => setTimeout(r, 100));
      }
    };
    const readers = Promise.all([reader(), reader()]);
    const deadline = setTimeout(() => (finished = true), 150_000);
    await readers.finally(() => clearTimeout(deadline));
    const lastRunning = reads.filter((r) => r.status === 'running').at(-1);
    const firstDone = reads.find((r) => r.status === 'completed');
    process.stdout.write(
      `10 MB page: ${reads.length} detail reads, ${reads.filter((r) => r.status === 'running').length} while running; ` +
        `last running read ${lastRunning && firstDone ? firstDone.at - lastRunning.at : '?'} ms before the first completed one\n`,
    );
    expect(reads.filter((r) => r.code !== 200)).toEqual([]);
    expect(lastRunning).toBeDefined();
    expect(firstDone).toBeDefined();
    const d = await settledDetail(s.id, 60_000);
    expect(d.status).toBe('completed');
    expect(d.result_meta?.['bytes']).toBeGreaterThan(9_500_000);
    const html = await gw()
      .get(`/api/v1/data/requests/${s.id}/result`)
      .set('X-API-Key', key)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect((html.body as Buffer).length).toBe(d.result_meta?.['bytes']);
  }, 180_000);
});

describe('a renderer stopped during a deploy (SIGTERM)', () => {
  it('finishes the render in flight and hands it back before its browsers close', async () => {
    const s = await submit({ url: `${site.url}/slow?ms=2000`, timeout_ms: 30_000 });
    await eventually(
      () => detail(s.id),
      (d) => d.status === 'running',
      30_000,
      100,
    );
    // Exit 0: stopped within its grace period, with no error; otherwise its log says what it waited for.
    const code = await fleet.kill('browser-renderer', 'SIGTERM');
    expect({ code, log: code === 0 ? '' : fleet.logs('browser-renderer') }).toEqual({ code: 0, log: '' });
    // Completed by the instance that stopped, with no renderer running now.
    const d = await settledDetail(s.id, 30_000);
    expect([d.status, d.token_state]).toEqual(['completed', 'settled']);
    await fleet.start('browser-renderer');
  }, 120_000);
});

describe("a page that takes Chromium's memory past twice BROWSER_MAX_RSS_MB", () => {
  it('is killed by the memory watchdog while rendering: BROWSER_CRASHED, refunded, and the next page renders', async () => {
    // A renderer with a 512 MB bound checked every 200 ms: past 1 GiB a busy browser is killed at once.
    await fleet.kill('browser-renderer', 'SIGTERM');
    await fleet.start('browser-renderer', { BROWSER_MAX_RSS_MB: '512', BROWSER_MEMORY_CHECK_MS: '200' });
    // Touched typed arrays (counted in the tree's PSS): 32 MB every 100 ms, up to 3 GiB; the wait keeps the page busy meanwhile.
    const hog = http.createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<!doctype html><html><body><p>hog</p><script>const held = []; const t = setInterval(() => { if (held.length >= 96) return clearInterval(t); held.push(new Uint8Array(32 * 1024 * 1024).fill(7)); }, 100);</script></body></html>',
        ),
    );
    await new Promise<void>((resolve) => hog.listen(0, '127.0.0.1', resolve));
    try {
      const before = await balance();
      const started = Date.now();
      const s = await submit({
        url: `http://127.0.0.1:${(hog.address() as AddressInfo).port}/hog`,
        mode: 'browser',
        wait_for_selector: '#never',
        timeout_ms: 60_000,
        skip_cache: true,
      });
      const d = await settledDetail(s.id, 120_000);
      expect([d.status, d.token_state, d.user_error?.['code']]).toEqual(['failed', 'refunded', 'BROWSER_CRASHED']);
      // The watchdog ended each attempt (a wait that ran out would end WAIT_FOR_SELECTOR_TIMEOUT, and
      // the restart counter below says why the browser went). Its time is printed, not bounded: a
      // loaded machine stretches it.
      process.stdout.write(`memory watchdog: request ended BROWSER_CRASHED ${Date.now() - started} ms after submission\n`);
      expect(await balance()).toBe(before);
      const metrics = (await request(fleet.metricsUrl('browser-renderer')).get('/metrics').expect(200)).text;
      expect(
        Number(/browser_renderer_browser_restarts_total\{[^}]*reason="recycle_memory"[^}]*\} (\d+)/.exec(metrics)?.[1]),
      ).toBeGreaterThanOrEqual(1);
      const next = await submit({ url: `${site.url}/js-page`, skip_cache: true });
      expect((await settledDetail(next.id, 90_000)).status).toBe('completed');
    } finally {
      await new Promise((resolve) => hog.close(resolve));
    }
  }, 240_000);
});
