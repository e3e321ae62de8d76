import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, startFixtureSite, type FixtureSite, type TestDatabase } from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { createMetrics } from '@wdr/kit/metrics';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { RenderOptions, type RenderJob } from '@wdr/contracts';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { BrowserCrashedError, BrowserPool } from '../src/domain/browser-pool.js';
import { treeRss } from '../src/domain/process-memory.js';
import { purgeExpiredArtifacts, readDebugArtifact, storeDebugArtifacts } from '../src/domain/debug-artifacts.js';
import { renderJob } from '../src/domain/render-job.js';
import { testPool } from './pool.js';
import { isAdOrAnalyticsHost, siteLightBlocks } from '../src/domain/resource-policy.js';

/**
 * The render engine against the real Chromium and a real local site (no Kafka: the fleet's e2e
 * suite covers the pipeline): crashes, recycling, geo, the target policy, large pages, artifacts.
 */
let site: FixtureSite;
let pool: BrowserPool;
const metrics = createMetrics('browser-renderer');
const local = new TargetPolicy(['127.0.0.1']);

const job = (path: string, options: Partial<RenderJob['options']> = {}, extra: Partial<RenderJob> = {}): RenderJob => ({
  request_id: randomUUID(),
  tenant_id: randomUUID(),
  attempt: 1,
  url: `${site.url}${path}`,
  route_mode: 'browser',
  reason: 'requested',
  options: RenderOptions.parse({ javascript: true, timeout_ms: 15_000, resource_policy: 'adaptive', debug_artifacts: false, ...options }),
  route: { proxy: null, country: null },
  max_result_bytes: 10 * 1024 * 1024,
  ...extra,
});

const newPool = testPool;

beforeAll(async () => {
  site = await startFixtureSite();
  pool = newPool({ pagesPerBrowser: 2, healthIntervalMs: 2_000, metrics });
  await pool.start();
}, 60_000);

afterAll(async () => {
  await pool?.stop();
  await site?.close();
});

const waitFor = async (pred: () => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('render engine', () => {
  it('renders a JavaScript page and reports what it loaded', async () => {
    const out = await renderJob(pool, job('/js-page'), local);
    expect(out.result.outcome).toBe('completed');
    if (out.result.outcome !== 'completed') return;
    expect(out.result.text).toContain('Rendered by JavaScript');
    expect(out.result.meta.requests['document']).toBe(1);
  });

  it('types, presses, scrolls to an element, waits and waits for text', async () => {
    const out = await renderJob(
      pool,
      job('/actions', {
        browser_actions: [
          { type: 'type', selector: '#name', text: 'Bob', delay_ms: 5 },
          { type: 'press', key: 'Tab' },
          { type: 'wait', ms: 50 },
          { type: 'scroll', selector: '#bottom' },
          { type: 'wait_for_text', text: 'bottom reached', timeout_ms: 5_000 },
          { type: 'scroll', y: -100_000 },
        ],
      }),
      local,
    );
    expect(out.result.outcome).toBe('completed');
    if (out.result.outcome !== 'completed') return;
    expect(out.result.text).toContain('echo Bob');
    expect(out.result.text).toContain('bottom reached');
    expect(out.result.meta.actions).toMatchObject({ run: 6, failed: 0, blocked: 0 });
  });

  it('fails on a required action that cannot run, keeping the outcomes of the actions before it', async () => {
    const out = await renderJob(
      pool,
      job('/actions', {
        debug_artifacts: true,
        browser_actions: [
          { type: 'click', selector: '#btn' },
          { type: 'click', selector: '#absent' },
          { type: 'wait', ms: 10 },
        ],
      }),
      local,
    );
    expect(out.result).toMatchObject({
      outcome: 'failed',
      code: 'BROWSER_ACTION_FAILED',
      caused_by: 'tenant',
      meta: { actions: { run: 2, failed: 1 } },
    });
    expect((out.evidence!.report['actions'] as { outcome: string }[]).map((a) => a.outcome)).toEqual(['ok', 'failed']);
  }, 30_000);

  it('refuses a target the policy forbids before Chromium reaches it', async () => {
    const hits = site.hits.get('/page') ?? 0;
    const out = await renderJob(pool, job('/page'), new TargetPolicy([]));
    expect(out.result).toMatchObject({ outcome: 'failed', code: 'TARGET_BLOCKED', caused_by: 'tenant' });
    expect(site.hits.get('/page') ?? 0).toBe(hits);
  });

  it('emulates the time zone of the route country', async () => {
    const out = await renderJob(pool, job('/geo', {}, { route: { proxy: null, country: 'JP' } }), local);
    expect(out.result.outcome === 'completed' && out.result.text).toContain('tz Asia/Tokyo');
    expect(out.result.outcome === 'completed' && out.result.meta.country).toBe('JP');
  });

  it.each([
    // Chromium's ICU answers its own canonical spelling of a zone (Asia/Katmandu for Asia/Kathmandu).
    ['NP', /tz Asia\/Kath?mandu/],
    ['IS', /tz Atlantic\/Reykjavik/],
    ['BO', /tz America\/La_Paz/],
  ])('emulates countries beyond the old hand-written table too: %s renders in %s', async (country, tz) => {
    const out = await renderJob(pool, job('/geo', {}, { route: { proxy: null, country } }), local);
    expect(out.result.outcome === 'completed' && out.result.text).toMatch(tz);
    expect(out.result.outcome === 'completed' && out.result.meta.country).toBe(country);
  });

  it('counts console errors and renders a 10 MB page within the result limit', async () => {
    const errors = await renderJob(pool, job('/console-errors'), local);
    expect(errors.result.outcome === 'completed' && errors.result.meta.console_errors).toBe(2);
    const big = await renderJob(pool, job('/big?mb=10', { timeout_ms: 60_000 }), local);
    expect(big.result.outcome).toBe('completed');
    if (big.result.outcome === 'completed') expect(big.result.body.length).toBeGreaterThan(9_000_000);
    const tooBig = await renderJob(pool, job('/big?mb=2', {}, { max_result_bytes: 1_000_000 }), local);
    expect(tooBig.result).toMatchObject({ outcome: 'failed', code: 'TARGET_TOO_LARGE' });
  }, 90_000);

  it('refuses a DOM over the bound before transferring it: only its size crosses from Chromium to Node', async () => {
    // The page builds a 48 MB DOM itself (a few hundred bytes travel over HTTP; hidden, so layout stays cheap). What this process
    // reads (/proc/self/io rchar: files, sockets and the DevTools pipe alike) is measured around
    // each render: a transferred DOM would be at least its own size in it.
    const MB = 48;
    const built = createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><html><body><div id="big" hidden></div><script>document.getElementById('big').textContent = 'x'.repeat(${MB} * 1e6);</script></body></html>`,
        ),
    );
    await new Promise<void>((resolve) => built.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(built.address() as AddressInfo).port}/built`;
    const readBytes = () => Number(/^rchar: (\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
    const render = async (maxBytes: number) => {
      const before = readBytes();
      const out = await renderJob(
        pool,
        {
          ...job('/'),
          url,
          max_result_bytes: maxBytes,
          // A 48 MB DOM takes seconds to build and measure on a loaded machine: the bound, not the time, is under test.
          options: RenderOptions.parse({ ...job('/').options, resource_policy: 'compatible', timeout_ms: 60_000 }),
        },
        local,
      );
      return { out, read: readBytes() - before };
    };
    try {
      const refused = await render(1_000_000);
      expect(refused.out.result).toMatchObject({ outcome: 'failed', code: 'TARGET_TOO_LARGE' });
      // Control: the same page under a bound it fits is transferred, and the measure sees its size.
      const delivered = await render(64 * 1024 * 1024);
      expect(delivered.out.result).toMatchObject({ outcome: 'completed' });
      expect(delivered.read).toBeGreaterThan(MB * 1e6);
      // Refused: what crossed is a small fraction of the DOM (CDP messages, the page's HTML, modules jest read).
      expect(refused.read).toBeLessThan((MB * 1e6) / 20);
      process.stdout.write(`oversize: refused read ${refused.read} B, delivered read ${delivered.read} B (DOM ${MB} MB)\n`);
    } finally {
      await new Promise((resolve) => built.close(resolve));
    }
  }, 120_000);

  it('fails a page that stays behind its challenge, and collects evidence when asked', async () => {
    const out = await renderJob(pool, job('/challenge', { debug_artifacts: true, timeout_ms: 8_000 }), local);
    expect(out.result).toMatchObject({ outcome: 'failed', code: 'PROTECTION_NOT_PASSED' });
    expect(out.result.meta?.challenge).toBe(true);
    expect(out.evidence?.screenshot?.subarray(1, 4).toString()).toBe('PNG');
    expect(out.evidence?.report).not.toHaveProperty('screenshot_missing');
    expect(JSON.stringify(out.evidence?.report)).not.toContain('Just a moment');
  }, 30_000);

  it('stops a navigating click in the page, before any request, and counts it there', async () => {
    const out = await renderJob(
      pool,
      job('/actions', {
        browser_actions: [
          { type: 'click', selector: '#nav' },
          { type: 'click', selector: '#download' },
          { type: 'click', selector: '#btn' },
        ],
      }),
      local,
    );
    expect(out.result).toMatchObject({ outcome: 'completed', meta: { actions: { run: 3, failed: 0, blocked: 2 } } });
    // The page's own document is the only one requested: neither click's navigation reached the
    // request interception (which would have stopped it too, one document request later each).
    expect(out.result.meta?.requests).toMatchObject({ document: 1 });
  }, 30_000);

  it("keeps the guard's counts out of the page's reach: a page replacing their reader changes no outcome", async () => {
    const tampering = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><a id="nav" href="/elsewhere">go</a><button id="btn">ok</button><script>' +
          'try { window.__wdrGuardStops = () => [1e9, "x", -1]; } catch (e) {}' +
          'try { Object.defineProperty(window, "__wdrGuardStops", { value: () => [7, 7, 7] }); } catch (e) {}' +
          'try { delete window.__wdrGuardStops; } catch (e) {}</script>',
      );
    });
    await new Promise<void>((resolve) => tampering.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(tampering.address() as AddressInfo).port}/`;
      const browser_actions = [
        { type: 'click', selector: '#btn' },
        { type: 'click', selector: '#nav' },
        { type: 'click', selector: '#btn' },
      ] as const;
      const out = await renderJob(pool, job('/', { browser_actions: [...browser_actions] }, { url }), local);
      expect(out.result).toMatchObject({ outcome: 'completed', meta: { actions: { run: 3, failed: 0, blocked: 1 } } });
    } finally {
      await new Promise((resolve) => tampering.close(resolve));
    }
  }, 30_000);

  it('reports a screenshot that did not come within its budget as timed_out, and the failure keeps its report', async () => {
    // A page whose main thread never comes back once loaded: no frame, no answer to the render's reads.
    const spinning = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><p>loaded</p><script>addEventListener("load", () => setTimeout(() => { for (;;) {} }, 20));</script>');
    });
    await new Promise<void>((resolve) => spinning.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(spinning.address() as AddressInfo).port}/`;
      const started = Date.now();
      const out = await renderJob(pool, job('/', { debug_artifacts: true, timeout_ms: 3_000 }, { url }), local, {
        screenshotBudgetMs: 1_000,
      });
      expect(out.result.outcome).toBe('failed');
      expect(out.evidence?.screenshot).toBeUndefined();
      expect(out.evidence?.report).toMatchObject({ screenshot_missing: 'timed_out', timings_ms: { total: expect.any(Number) } });
      // The budget bounded the wait: the render's own time-out, the budget, and slack for a loaded machine.
      expect(Date.now() - started).toBeLessThan(3_000 + 1_000 + 10_000);
      // The pool is not left with the spinning page: the next render works.
      expect((await renderJob(pool, job('/js-page'), local)).result.outcome).toBe('completed');
    } finally {
      await new Promise((resolve) => spinning.close(resolve));
    }
  }, 60_000);

  it('survives a Chromium killed mid-render: the attempt fails as a crash, the pool relaunches, the next render works', async () => {
    const [pid] = pool.pids();
    expect(pid).toBeDefined();
    const rendering = renderJob(pool, job('/slow?ms=5000'), local);
    await new Promise((r) => setTimeout(r, 700));
    process.kill(pid!, 'SIGKILL');
    await expect(rendering).rejects.toBeInstanceOf(BrowserCrashedError);
    await waitFor(() => pool.pids().length === 1 && pool.pids()[0] !== pid);
    expect(await metrics.registry.getSingleMetricAsString('browser_renderer_browser_restarts_total')).toMatch(/reason="crash"[^\n]* 1/);
    const out = await renderJob(pool, job('/js-page'), local);
    expect(out.result.outcome).toBe('completed');
  }, 60_000);

  it('measures the RSS of the whole Chromium process tree', async () => {
    const [pid] = pool.pids();
    const rss = await treeRss(pid!);
    expect(rss).toBeGreaterThan(20 * 1024 * 1024);
  });

  it('reads the dear PSS only over a bound: under it, the summed RSS, which is never less', async () => {
    const [pid] = pool.pids();
    // Chromium's processes share their libraries: the summed RSS counts them once per process.
    const bounded = await treeRss(pid!, { exactAbove: 64 * 1024 ** 3 });
    const exact = await treeRss(pid!, { exactAbove: 0 });
    expect(exact).toBeGreaterThan(20 * 1024 * 1024);
    // Measured 2.4x here; two PSS reads (the bound ignored) differ by a few MB at most.
    expect(bounded).toBeGreaterThan(1.5 * exact);
  });
});

describe('recycling and health', () => {
  it('replaces a browser after BROWSER_MAX_PAGES pages', async () => {
    const small = newPool({ maxPages: 2, healthIntervalMs: 5_000 });
    await small.start();
    try {
      const [first] = small.pids();
      for (let i = 0; i < 2; i++) expect((await renderJob(small, job('/page'), local)).result.outcome).toBe('completed');
      await waitFor(() => small.pids().length === 1 && small.pids()[0] !== first);
      expect((await renderJob(small, job('/page'), local)).result.outcome).toBe('completed');
    } finally {
      await small.stop();
    }
  }, 60_000);

  it('kills and replaces a browser that stops answering (hung), and the next render works', async () => {
    const m = createMetrics('browser-renderer');
    const hung = newPool({ metrics: m });
    await hung.start();
    try {
      const [pid] = hung.pids();
      process.kill(pid!, 'SIGSTOP');
      await waitFor(() => hung.pids().length === 1 && hung.pids()[0] !== pid, 30_000);
      expect(await m.registry.getSingleMetricAsString('browser_renderer_browser_restarts_total')).toMatch(/reason="hang"[^\n]* 1/);
      expect((await renderJob(hung, job('/page'), local)).result.outcome).toBe('completed');
    } finally {
      await hung.stop();
    }
  }, 60_000);

  it('retires a browser whose process tree grew past BROWSER_MAX_RSS_MB', async () => {
    const m = createMetrics('browser-renderer');
    const fat = newPool({ metrics: m, maxRssBytes: 1 });
    await fat.start();
    try {
      const [pid] = fat.pids();
      await waitFor(() => fat.pids().length === 1 && fat.pids()[0] !== pid, 30_000);
      expect(await m.registry.getSingleMetricAsString('browser_renderer_browser_restarts_total')).toMatch(/reason="recycle_memory"/);
    } finally {
      await fat.stop();
    }
  }, 60_000);
});

describe('site-light denylist', () => {
  it('matches advertising and analytics hosts and their subdomains only', () => {
    expect(isAdOrAnalyticsHost('stats.g.doubleclick.net')).toBe(true);
    expect(isAdOrAnalyticsHost('www.google-analytics.com')).toBe(true);
    expect(isAdOrAnalyticsHost('notdoubleclick.net')).toBe(false);
    expect(isAdOrAnalyticsHost('example.com')).toBe(false);
    expect(siteLightBlocks('script', 'https://www.googletagmanager.com/gtm.js')).toBe(true);
    expect(siteLightBlocks('script', 'https://example.com/app.js')).toBe(false);
    expect(siteLightBlocks('image', 'https://example.com/a.png')).toBe(true);
    expect(siteLightBlocks('font', 'https://example.com/a.woff2')).toBe(false);
    expect(siteLightBlocks('document', 'https://doubleclick.net/')).toBe(false);
  });
});

describe('debug artifacts', () => {
  let database: TestDatabase;
  let db: PrismaClient;
  const sealer = Sealer.fromBase64(Buffer.alloc(32, 5).toString('base64'));
  beforeAll(async () => {
    database = await createTestDatabase('browser-renderer');
    db = new PrismaClient({ adapter: pgAdapterFor(database.url) });
  }, 60_000);
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  it('are sealed at rest, readable by their tenant only, and purged after their retention', async () => {
    const ids = { requestId: randomUUID(), tenantId: randomUUID() };
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
    const listing = await storeDebugArtifacts({ db, sealer, retentionHours: 1 }, ids, {
      screenshot: png,
      report: { timings_ms: { total: 5 } },
    });
    expect(listing.items.map((i) => i.name)).toEqual(['screenshot.png', 'report.json']);
    const row = await db.debugArtifact.findUniqueOrThrow({
      where: { requestId_name: { requestId: ids.requestId, name: 'screenshot.png' } },
    });
    expect(Buffer.from(row.sealed).includes(png.subarray(0, 8))).toBe(false);
    const read = await readDebugArtifact({ db, sealer }, { ...ids, name: 'screenshot.png' });
    expect(Buffer.from(read.body_base64, 'base64')).toEqual(png);
    await expect(readDebugArtifact({ db, sealer }, { ...ids, tenantId: randomUUID(), name: 'screenshot.png' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    // After the key was replaced outright, an old artifact reads as gone, not as a server error.
    const otherKey = Sealer.fromBase64(Buffer.alloc(32, 6).toString('base64'));
    await expect(readDebugArtifact({ db, sealer: otherKey }, { ...ids, name: 'screenshot.png' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await purgeExpiredArtifacts(db, new Date(Date.now() + 2 * 3600_000))).toBeGreaterThanOrEqual(2);
    await expect(readDebugArtifact({ db, sealer }, { ...ids, name: 'screenshot.png' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
