#!/usr/bin/env node
/**
 * The browser stage, measured beside a bare puppeteer-core loop in the same run on the same local
 * pages and the same machine (see bench/README.md):
 *
 *   1. bare loop: one Chromium, a new context per page, BENCH_CONCURRENCY pages at once, each
 *      loaded, settled (network quiet for 200 ms, as the renderer does) and read (HTML + text);
 *   2. the renderer's engine (its pool and render function, no Kafka) on the same pages;
 *   3. end to end through the API: the whole fleet, browser-mode submissions, timed from the first
 *      POST until every request is terminal, the renderer's pool sized to the same concurrency;
 *   4. site-light (adaptive) against full (compatible) on an image-heavy page, through the engine;
 *   5. the renderer's memory at that concurrency: the node process, and with its Chromium tree.
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   node bench/browser.mjs            # BENCH_PAGES=40 BENCH_CONCURRENCY=4 BENCH_PAGE=/js-page
 *   BENCH_LOG_DIR=/tmp/b node bench/browser.mjs   # the fleet's logs kept, the renderer's at info:
 *                                     # a 'render finished' line per job (claim, render, hand-back ms)
 *
 * Only loopback traffic: every page comes from the local fixture site.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import puppeteer from 'puppeteer-core';
import { SERVICE_NAMES, adminCommand, startFixtureSite, startFleet, withDatabase } from '@wdr/testkit';
import { createLogger } from '@wdr/kit/log';
import { createMetrics } from '@wdr/kit/metrics';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { RenderOptions } from '@wdr/contracts';
import { cpuOfPid } from './lib/cpu.mjs';
import { benchGatewayEnv, nodeOptionsEnv, recordProfiledFleet } from './lib/fleet.mjs';
import { leaseEnv, leaseRestOf } from './lib/leases.mjs';
import { benchReport } from './lib/report.mjs';
import { BrowserPool } from '../apps/browser-renderer/dist/domain/browser-pool.js';
import { treeRss } from '../apps/browser-renderer/dist/domain/process-memory.js';
import { EgressGate } from '../apps/browser-renderer/dist/domain/egress-gate.js';
import { renderJob, SETTLE_IDLE_MS } from '../apps/browser-renderer/dist/domain/render-job.js';

const PAGES = Number(process.env.BENCH_PAGES ?? 40);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
/** Pages submitted and finished before the API run is measured (`BENCH_WARMUP_PAGES`, one round: CONCURRENCY). */
const WARMUP_PAGES = Number(process.env.BENCH_WARMUP_PAGES ?? CONCURRENCY);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// BENCH_PAGE: another fixture page for every row but site-light (`/big?mb=5`: the hand-back of large pages).
const PAGE = process.env.BENCH_PAGE ?? '/js-page';
const IMAGES = '/images?n=40';
const MB = 1024 * 1024;

/**
 * Run `n` tasks, `concurrency` at a time; pages/s of the completed ones, and this process's CPU per
 * completed page (ms: the bare loop's puppeteer-core client or the in-process engine, plus the
 * fixture site, which serves from this process in every row).
 */
async function closedLoop(n, concurrency, task) {
  let next = 0;
  let ok = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        if (await task()) ok++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { pagesPerSecond: ok / seconds, ok, seconds, cpuMsPerPage: (used.user + used.system) / 1000 / Math.max(1, ok) };
}

async function bareLoop(site, path) {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  const once = async () => {
    const context = await browser.createBrowserContext();
    try {
      const page = await context.newPage();
      const res = await page.goto(`${site.url}${path}`, { waitUntil: 'load', timeout: 30_000 });
      await page.waitForNetworkIdle({ idleTime: SETTLE_IDLE_MS, timeout: 5_000 }).catch(() => undefined);
      await page.content();
      await page.evaluate(() => document.body.innerText);
      return res?.ok() ?? false;
    } finally {
      await context.close();
    }
  };
  try {
    await once(); // warm-up
    return await closedLoop(PAGES, CONCURRENCY, once);
  } finally {
    await browser.close();
  }
}

function engineJob(site, path, resourcePolicy = 'adaptive') {
  return {
    request_id: randomUUID(),
    tenant_id: randomUUID(),
    attempt: 1,
    url: `${site.url}${path}`,
    route_mode: 'browser',
    reason: 'requested',
    options: RenderOptions.parse({ javascript: true, timeout_ms: 30_000, resource_policy: resourcePolicy, debug_artifacts: false }),
    route: { proxy: null, country: null },
    max_result_bytes: 10 * MB,
  };
}

async function engineLoop(site, path, resourcePolicy) {
  const pool = new BrowserPool({
    chromiumPath: CHROMIUM,
    size: 1,
    pagesPerBrowser: CONCURRENCY,
    maxPages: 100_000,
    maxRssBytes: 8 * 1024 * MB,
    healthIntervalMs: 10_000,
    log: createLogger('bench', 'silent'),
    metrics: createMetrics('browser-renderer'),
    // As the service runs it: every connection through the egress gate (the renderer's deps).
    gate: new EgressGate({ log: createLogger('bench', 'silent') }),
    // As a development machine runs it (./dev, the test fleet): Chromium as `nobody` when this is root.
    allowNoSandbox: process.env.CHROMIUM_ALLOW_NO_SANDBOX === 'true',
  });
  await pool.start();
  const policy = new TargetPolicy(['127.0.0.1']);
  const once = async () => (await renderJob(pool, engineJob(site, path, resourcePolicy), policy)).result.outcome === 'completed';
  try {
    await once();
    return await closedLoop(PAGES, CONCURRENCY, once);
  } finally {
    await pool.stop();
  }
}

/**
 * CPU seconds of every service's node process, from /proc (as bench/http.mjs and
 * bench/submissions.mjs read them). Not from each service's /metrics: a scrape is work the bench
 * would add to the figure, and the first scrape of a service (the one before the run) cost it
 * 20-80 ms (collectors compiled, the lag gauge's admin client connecting to the broker) partly
 * after its CPU counter was read, so inside the window: 0.5-2 ms per page per service over 40 pages.
 */
function fleetCpu(fleet) {
  return Object.fromEntries(SERVICE_NAMES.map((s) => [s, cpuOfPid(fleet.pid(s))]));
}

/** Resident memory of one process (bytes). */
async function rssOf(pid) {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

async function throughApi(site) {
  const fleet = await startFleet({
    env: {
      gateway: benchGatewayEnv(),
      'browser-renderer': {
        BROWSER_POOL_SIZE: '1',
        BROWSER_PAGES_PER_BROWSER: String(CONCURRENCY),
        ...(process.env.BENCH_LOG_DIR ? { LOG_LEVEL: 'info' } : {}),
      },
      'fetch-orchestrator': leaseEnv(),
      // The outbox's production safety poll (the relays wake on NOTIFY at commit; the test fleet
      // polls every second). BENCH_NODE_OPTIONS: V8 flags for every service (issue 24);
      // BENCH_CPU_PROF_DIR: a profile of each (bench/lib/fleet.mjs).
      all: {
        LOG_LEVEL: 'error',
        OUTBOX_POLL_MS: process.env.BENCH_OUTBOX_POLL_MS ?? '5000',
        ...nodeOptionsEnv(),
      },
    },
    ...(process.env.BENCH_LOG_DIR ? { logDir: process.env.BENCH_LOG_DIR } : {}),
  });
  recordProfiledFleet(fleet);
  try {
    const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'bench-browser', '--credits', '100000000']);
    const gw = fleet.url('gateway');
    const headers = { 'x-api-key': tenant.api_key, 'content-type': 'application/json' };
    const submit = async () => {
      const res = await fetch(`${gw}/api/v1/data/requests`, {
        method: 'POST',
        headers,
        // Every page is the same URL: without skip_cache every page after the first would be a
        // result-cache answer (the cache is not what this bench measures).
        body: JSON.stringify({ url: `${site.url}${PAGE}`, mode: 'browser', skip_cache: true }),
      });
      if (res.status !== 202) throw new Error(`submission answered ${res.status}: ${await res.text()}`);
      return (await res.json()).id;
    };
    // Timed until every request is terminal, read from the orchestrator's database (200 ms polls,
    // 10 ms once no more than a concurrency's worth is left, so the end is seen when it comes and
    // not up to a poll later): the fleet's CPU per page is what doing the pages costs, and a client
    // polling the API would add its reads to it (a list of 40 requests every 500 ms was some 7 ms of
    // gateway and orchestrator CPU per page). The checks read the API's own answers, once, after the run.
    const untilTerminal = (ids) =>
      withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => {
        for (;;) {
          const { rows } = await c.query('SELECT status FROM data_requests WHERE id = ANY($1::uuid[])', [ids]);
          const done = rows.filter((d) => ['completed', 'failed', 'cancelled'].includes(d.status));
          if (done.length === ids.length) return done.map((d) => d.status);
          await new Promise((r) => setTimeout(r, ids.length - done.length <= CONCURRENCY ? 10 : 200));
        }
      });
    // Then until every one is settled or refunded (the same database, the same polls): the fleet's
    // CPU per page counts the billing of the pages too, which ends after the last page does (the
    // ledger's settlement and the orchestrator's reflection of it), not only what ran before.
    const untilBilled = (ids) =>
      withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => {
        const deadline = performance.now() + 120_000;
        for (;;) {
          const { rows } = await c.query(
            `SELECT count(*)::int AS n FROM data_requests WHERE id = ANY($1::uuid[]) AND token_state IN ('settled', 'refunded')`,
            [ids],
          );
          if (rows[0].n === ids.length || performance.now() > deadline) return;
          await new Promise((r) => setTimeout(r, 200));
        }
      });
    // One list call per poll (the tenant has only these requests), untimed.
    const list = async () => (await (await fetch(`${gw}/api/v1/data/requests?limit=100`, { headers })).json()).data;
    const untilSettled = async (ids) => {
      const wanted = new Set(ids);
      const deadline = performance.now() + 120_000;
      for (;;) {
        const rows = (await list()).filter((d) => wanted.has(d.id));
        if (rows.every((d) => d.token_state === 'settled' || d.token_state === 'refunded') || performance.now() > deadline) return rows;
        await new Promise((r) => setTimeout(r, 500));
      }
    };
    const balance = async () => (await fetch(`${gw}/api/v1/data/balance`, { headers })).json();
    // Warm-up: one round at the bench's concurrency (as bench/http.mjs warms one page per worker),
    // so the first pages' one-time work (Chromium's first contexts, the services' first compiles
    // of each path) is not charged to the 40 measured pages.
    const warmIds = await Promise.all(Array.from({ length: WARMUP_PAGES }, submit));
    await untilTerminal(warmIds);
    await untilSettled(warmIds);
    const balanceBefore = await balance();
    const pid = fleet.pid('browser-renderer');
    let peakTree = 0;
    let peakNode = 0;
    // Once a second: reading a tree's PSS costs some 20 ms of CPU (the kernel walks every mapping),
    // and at every 100 ms this sampler alone took half a core from the Chromium it measured.
    const sampler = setInterval(() => {
      void Promise.all([treeRss(pid), rssOf(pid)]).then(([tree, node]) => {
        peakTree = Math.max(peakTree, tree);
        peakNode = Math.max(peakNode, node);
      });
    }, 1_000);
    const cpuBefore = fleetCpu(fleet);
    const started = performance.now();
    const ids = await Promise.all(Array.from({ length: PAGES }, submit));
    const statuses = await untilTerminal(ids);
    const seconds = (performance.now() - started) / 1000;
    await untilBilled(ids);
    clearInterval(sampler);
    const cpuAfter = fleetCpu(fleet);
    const ok = statuses.filter((s) => s === 'completed').length;
    const rows = await untilSettled(ids);
    const balanceAfter = await balance();
    const checks = {
      settled: rows.filter((d) => d.status === 'completed' && d.token_state === 'settled').length,
      notCached: rows.filter((d) => d.cached === false).length,
      price: rows.reduce((n, d) => n + (d.base_tokens ?? 0), 0),
      // Leases: a block leaves the balance and counts as reserved until used (bench/lib/leases.mjs).
      charged: balanceBefore.balance_tokens + balanceBefore.reserved_tokens - balanceAfter.balance_tokens - balanceAfter.reserved_tokens,
      held: balanceAfter.reserved_tokens - (await leaseRestOf(fleet, [tenant.tenant_id])),
    };
    // CPU of each service's node process per page (Chromium's own CPU is not in these figures).
    const cpuPerPage = Object.fromEntries(Object.keys(cpuAfter).map((k) => [k, ((cpuAfter[k] - cpuBefore[k]) * 1000) / Math.max(1, ok)]));
    return { pagesPerSecond: ok / seconds, ok, seconds, peakTree, peakNode, cpuPerPage, checks };
  } finally {
    await fleet.stop();
  }
}

const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const site = await startFixtureSite();
try {
  console.error(`bench: ${PAGES} pages, concurrency ${CONCURRENCY}, ${PAGE} and ${IMAGES}`);
  const bare = await bareLoop(site, PAGE);
  console.error(`  bare loop: ${fmt(bare.pagesPerSecond)} pages/s`);
  const engine = await engineLoop(site, PAGE, 'adaptive');
  console.error(`  engine: ${fmt(engine.pagesPerSecond)} pages/s`);
  const api = await throughApi(site);
  console.error(`  API: ${fmt(api.pagesPerSecond)} pages/s`);
  const full = await engineLoop(site, IMAGES, 'compatible');
  const light = await engineLoop(site, IMAGES, 'adaptive');

  const rows = [
    ['run', 'pages/s', 'completed', 'vs bare loop'],
    [`bare puppeteer-core loop (${PAGE})`, fmt(bare.pagesPerSecond), `${bare.ok}/${PAGES}`, '1.00x'],
    [
      `renderer engine, no Kafka (${PAGE})`,
      fmt(engine.pagesPerSecond),
      `${engine.ok}/${PAGES}`,
      `${fmt(engine.pagesPerSecond / bare.pagesPerSecond)}x`,
    ],
    [
      `end to end through the API (${PAGE})`,
      fmt(api.pagesPerSecond),
      `${api.ok}/${PAGES}`,
      `${fmt(api.pagesPerSecond / bare.pagesPerSecond)}x`,
    ],
    [`engine, full / compatible (${IMAGES})`, fmt(full.pagesPerSecond), `${full.ok}/${PAGES}`, '-'],
    [`engine, site-light / adaptive (${IMAGES})`, fmt(light.pagesPerSecond), `${light.ok}/${PAGES}`, '-'],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  console.log(rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n'));
  console.log(`\nthrough the API / bare loop: ${fmt(api.pagesPerSecond / bare.pagesPerSecond)}x (target >= 0.8x)`);
  console.log(
    `fleet CPU per page through the API (ms, node processes only): ${Object.entries(api.cpuPerPage)
      .map(([k, ms]) => `${k} ${fmt(ms, 1)}`)
      .join(', ')}`,
  );
  console.log(
    `CPU per page of this process (ms, node; with the fixture site it serves): bare loop ${fmt(bare.cpuMsPerPage, 1)}, engine ${fmt(engine.cpuMsPerPage, 1)}`,
  );
  console.log(`site-light / full on ${IMAGES}: ${fmt(light.pagesPerSecond / full.pagesPerSecond)}x faster (target >= 1.3x)`);
  const report = benchReport('browser');
  report.check('bare loop: every page loaded', bare.ok === PAGES, `${bare.ok}/${PAGES}`);
  report.check(
    'engine: every page rendered',
    engine.ok === PAGES && full.ok === PAGES && light.ok === PAGES,
    `${engine.ok}, ${full.ok}, ${light.ok} of ${PAGES}`,
  );
  report.check('API: every page completed and settled', api.checks.settled === PAGES, `${api.checks.settled}/${PAGES}`);
  report.check(
    'API: no result from the cache (skip_cache)',
    api.checks.notCached === PAGES,
    `${PAGES - api.checks.notCached} not cached: false`,
  );
  report.check(
    'API: charge equal to the price, nothing held',
    api.checks.charged === api.checks.price && api.checks.held === 0,
    `balance down by ${api.checks.charged}, price ${api.checks.price}, held ${api.checks.held}`,
  );
  const fleetMs = Object.values(api.cpuPerPage).reduce((a, b) => a + b, 0);
  report.figure('browser: pages/s through the API', api.pagesPerSecond, {
    reference: bare.pagesPerSecond,
    referenceName: 'bare puppeteer-core loop',
    target: { op: '>=', value: 0.8, of: 'ratio' },
  });
  report.figure('browser: renderer engine pages/s', engine.pagesPerSecond, {
    reference: bare.pagesPerSecond,
    referenceName: 'bare puppeteer-core loop',
  });
  report.figure('browser: fleet CPU per page (node)', fleetMs, { unit: 'ms', target: { op: '<=', value: 30, of: 'value' } });
  report.figure('browser: bare loop CPU per page (node)', bare.cpuMsPerPage, { unit: 'ms' });
  report.figure('browser: renderer engine CPU per page (node, in-process)', engine.cpuMsPerPage, { unit: 'ms' });
  report.figure('browser: site-light pages/s (/images)', light.pagesPerSecond, {
    reference: full.pagesPerSecond,
    referenceName: 'full (compatible)',
    target: { op: '>=', value: 1.3, of: 'ratio' },
  });
  report.figure('browser: renderer memory, PSS with Chromium', api.peakTree / MB, {
    unit: 'MB',
    target: { op: '<', value: 1536, of: 'value' },
  });
  report.finish();
  console.log(
    `renderer memory at concurrency ${CONCURRENCY} (peak during the API run): ${fmt(api.peakTree / MB, 0)} MB with Chromium (PSS of the process tree), ${fmt(api.peakNode / MB, 0)} MB node alone (RSS) (target < 1536 MB)`,
  );
} finally {
  await site.close();
}
