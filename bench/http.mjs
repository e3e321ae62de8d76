#!/usr/bin/env node
/**
 * HTTP mode end to end through the API, beside Crawlee's CheerioCrawler fetching the same local
 * pages at the same concurrency, in one run on the same machine (issue 9; see bench/README.md):
 *
 *   1. Crawlee, direct: CheerioCrawler, minConcurrency = maxConcurrency = --concurrency, no retries,
 *      each page parsed with cheerio and counted;
 *   2. platform, direct: POST /api/v1/data/requests {mode: http, proxy: off, skip_cache: true} from
 *      --concurrency workers, timed from the first POST until every request is completed with
 *      token_state settled (stored and billed), the orchestrator's FETCH_CONCURRENCY = --concurrency;
 *   3. and 4. the same two through a local proxy-chain exit (Crawlee: ProxyConfiguration; the
 *      platform: the exit registered as a datacenter exit, submissions with proxy: random).
 *
 * Each row is the median of --repeat runs, Crawlee's and the platform's alternating (the platform's
 * each with a fresh tenant and a warm-up of its own); the ratio is median over median.
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   node bench/http.mjs [--pages 300] [--concurrency 16] [--repeat 3] [--scenarios direct,proxy]
 *   BENCH_CPU_PROF_DIR=/tmp/prof node bench/http.mjs && node bench/profile-top.mjs /tmp/prof
 *
 * The target site and the proxy exit run in child processes of their own (this file, --role site
 * and --role proxy), so neither shares an event loop with Crawlee or with the load generator.
 * Only loopback traffic: the site listens on 127.0.0.1, the exit on 127.0.0.2.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: process.env.BENCH_PAGES ?? '300' },
    concurrency: { type: 'string', default: process.env.BENCH_CONCURRENCY ?? '16' },
    scenarios: { type: 'string', default: 'direct,proxy' },
    repeat: { type: 'string', default: process.env.BENCH_REPEAT ?? '3' },
    role: { type: 'string' },
    // Another tenant watches one of its requests through an event stream while the pages run: the
    // gateway's live consumer runs (as it does whenever any stream is open on an instance).
    watcher: { type: 'boolean', default: process.env.BENCH_HTTP_WATCHER === '1' },
  },
});

// ---------------------------------------------------------------------------------------------
// Child roles: the target site and the proxy exit.
// ---------------------------------------------------------------------------------------------

const WORDS =
  'market price delivery order garden kitchen window travel report season weather museum river station library coffee village harbour mountain bicycle concert festival theatre review summer winter autumn spring product service customer history science painting journey'.split(
    ' ',
  );

/** A deterministic page of 20-50 KB: head with styles and a small script, navigation, article, product table, footer. */
function pageHtml(path) {
  let seed = [...path].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 2166136261);
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const words = (n) => Array.from({ length: n }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
  const sentence = () => {
    const s = words(8 + Math.floor(rnd() * 14));
    return s[0].toUpperCase() + s.slice(1) + '.';
  };
  const target = 20_000 + Math.floor(rnd() * 30_000);
  const parts = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${words(4)} | Fixture ${path}</title>`,
    `<meta name="description" content="${sentence()}"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<link rel="canonical" href="https://shop.example${path}"><style>body{font-family:sans-serif;margin:0}header,footer{background:#eee;padding:1em}.grid{display:grid;grid-template-columns:repeat(4,1fr)}.price{font-weight:bold}</style>`,
    `<script>window.dataLayer=window.dataLayer||[];window.dataLayer.push({page:${JSON.stringify(path)}});</script></head><body>`,
    '<header><nav><ul>',
  ];
  for (let i = 0; i < 40; i++) parts.push(`<li><a href="/section/${i}/${words(1)}">${words(2)}</a></li>`);
  parts.push(`</ul></nav></header><main><article><h1>${words(6)}</h1>`);
  const closing = `</article></main><footer><p>${sentence()}</p><p>&copy; Fixture shop</p></footer></body></html>`;
  let size = parts.reduce((n, p) => n + p.length, 0) + closing.length;
  let row = 0;
  while (size < target) {
    const chunk =
      row % 5 === 4
        ? `<table class="grid"><tr><th>item</th><th>price</th></tr>${Array.from({ length: 6 }, (_, k) => `<tr><td><a href="/p/${row}-${k}">${words(3)}</a></td><td class="price">${(rnd() * 200).toFixed(2)}</td></tr>`).join('')}</table>`
        : `<h2>${words(5)}</h2><p>${Array.from({ length: 5 }, sentence).join(' ')}</p><p>${Array.from({ length: 4 }, sentence).join(' ')} <a href="/read/${row}">${words(2)}</a></p>`;
    parts.push(chunk);
    size += chunk.length;
    row++;
  }
  parts.push(closing);
  return Buffer.from(parts.join(''));
}

async function roleSite() {
  const cache = new Map();
  let hits = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    // The watcher's request: answered only when the site stops (it stays running meanwhile).
    if (path === '/hold') return;
    if (!/^\/(page|warm)\/\d+$/.test(path)) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    let body = cache.get(path);
    if (!body) cache.set(path, (body = pageHtml(path)));
    hits++;
    bytes += body.length;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, 'cache-control': 'max-age=60' });
    res.end(body);
  });
  server.keepAliveTimeout = 10_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  process.on('message', (m) => {
    if (m === 'stats') process.send({ hits, bytes });
    if (m === 'stop') {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    }
  });
  process.send({ url: `http://127.0.0.1:${server.address().port}` });
}

async function roleProxy() {
  const { startProxyExit } = await import('@wdr/testkit');
  const exit = await startProxyExit({ host: '127.0.0.2', username: 'bench', password: randomBytes(6).toString('hex') });
  process.on('message', (m) => {
    if (m === 'stats') process.send({ requests: exit.requests(), ...exit.bytes() });
    if (m === 'stop') {
      exit.close().then(
        () => process.exit(0),
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
    }
  });
  process.send({ url: exit.url });
}

/** A child running one of the roles above; `ask('stats')` answers its counters. */
async function child(role) {
  const proc = fork(import.meta.filename, ['--role', role], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const first = await new Promise((resolve, reject) => {
    proc.once('message', resolve);
    proc.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
  return {
    ...first,
    pid: proc.pid,
    ask: (m) =>
      new Promise((resolve) => {
        proc.once('message', resolve);
        proc.send(m);
      }),
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', resolve);
        proc.send('stop');
      }),
  };
}

if (args.role === 'site') await roleSite();
else if (args.role === 'proxy') await roleProxy();
else await main();

// ---------------------------------------------------------------------------------------------
// The benchmark.
// ---------------------------------------------------------------------------------------------

async function main() {
  const PAGES = Number(args.pages);
  const CONCURRENCY = Number(args.concurrency);
  const SCENARIOS = args.scenarios.split(',');
  const REPEAT = Number(args.repeat);
  const WARMUP = Math.min(CONCURRENCY, 16);
  const POLL_MS = 200;
  const FINAL_POLL_MS = 10;
  if (!(PAGES > 0 && REPEAT > 0 && CONCURRENCY > 0 && CONCURRENCY <= 256))
    throw new Error('--pages and --repeat must be > 0, --concurrency in 1..256');

  // Crawlee reads its storage directory at import: a fresh one per run, removed at the end.
  const storageDir = mkdtempSync(join(tmpdir(), 'wdr-bench-crawlee-'));
  process.env.CRAWLEE_STORAGE_DIR = storageDir;
  process.env.CRAWLEE_LOG_LEVEL ??= 'ERROR';
  const { CheerioCrawler, Configuration, ProxyConfiguration, log } = await import('crawlee');
  log.setLevel(log.LEVELS.ERROR);
  const { PG_ADMIN_URL, SERVICE_NAMES, adminCommand, startFleet, withDatabase } = await import('@wdr/testkit');
  const { benchReport } = await import('./lib/report.mjs');
  const { leaseEnv, leaseRestOf } = await import('./lib/leases.mjs');
  const { CPU_PROF_DIR, benchGatewayEnv, nodeOptionsEnv, productionEnv, recordProfiledFleet } = await import('./lib/fleet.mjs');
  const report = benchReport('http');

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const { cpuOfPid, postgresBackendsCpu, backendsCpuSince: pgCpuSince } = await import('./lib/cpu.mjs');
  const selfCpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  /** CPU seconds of each Postgres backend serving the fleet's databases (by pid). */
  const pgCpu = (fleet) =>
    postgresBackendsCpu(
      PG_ADMIN_URL,
      Object.values(fleet.databases).map((d) => d.name),
    );
  /** The local Kafka broker's pid (infra/kafka/kafka.sh records it), or undefined for a broker elsewhere. */
  const brokerPid = (() => {
    try {
      const pid = Number(readFileSync(new URL('../.stack/kafka/kafka.pid', import.meta.url), 'utf8').trim());
      cpuOfPid(pid);
      return pid;
    } catch {
      return undefined;
    }
  })();

  /**
   * Crawlee: one CheerioCrawler over `urls`, its own in-memory storage (nothing persisted, the
   * queue purged on start), at exactly `CONCURRENCY` (min = max, so the pool does not ramp up),
   * no retries; the handler parses the page with cheerio (as the crawler does) and counts it.
   */
  async function crawlee(urls, proxyUrl) {
    const config = new Configuration({
      persistStorage: false,
      purgeOnStart: true,
      storageClientOptions: { localDataDirectory: storageDir },
    });
    let ok = 0;
    let failed = 0;
    let bytes = 0;
    const crawler = new CheerioCrawler(
      {
        minConcurrency: CONCURRENCY,
        maxConcurrency: CONCURRENCY,
        maxRequestRetries: 0,
        statusMessageLoggingInterval: 3600,
        ...(proxyUrl ? { proxyConfiguration: new ProxyConfiguration({ proxyUrls: [proxyUrl] }) } : {}),
        requestHandler: async ({ $, body }) => {
          if ($('h1').length === 1 && $('a').length > 0) ok++;
          else failed++;
          bytes += body.length;
        },
        failedRequestHandler: async () => {
          failed++;
        },
      },
      config,
    );
    const cpu0 = selfCpu();
    const t0 = performance.now();
    await crawler.run(urls);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = selfCpu() - cpu0;
    await crawler.requestQueue?.drop().catch(() => undefined);
    return { ok, failed, seconds, pagesPerSecond: ok / seconds, cpuMsPerPage: (cpu * 1000) / Math.max(1, ok), bytes };
  }

  /** Closed loop: `CONCURRENCY` workers, each submitting its next page when the previous answer arrived. */
  async function submitAll(gw, apiKey, urls, proxy) {
    const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
    const ids = [];
    const refused = new Map();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, urls.length) }, async () => {
        while (next < urls.length) {
          const url = urls[next++];
          const res = await fetch(`${gw}/api/v1/data/requests`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ url, mode: 'http', proxy, skip_cache: true }),
          });
          const body = await res.json().catch(() => ({}));
          if (res.status === 202) ids.push(body.id);
          else refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
        }
      }),
    );
    return { ids, refused };
  }

  /**
   * Until every request in `ids` is terminal with its tokens settled or refunded. Cheap while
   * anything moves (one `limit=1` list call per moving status); once nothing does, the terminal
   * requests are paged (100 a page) to read their token states.
   */
  async function untilSettled(gw, apiKey, ids) {
    const headers = { 'x-api-key': apiKey };
    const list = async (query) => {
      const res = await fetch(`${gw}/api/v1/data/requests?${new URLSearchParams(query)}`, { headers });
      if (res.status !== 200) throw new Error(`list answered ${res.status}: ${await res.text()}`);
      return res.json();
    };
    const wanted = new Set(ids);
    const deadline = performance.now() + 10 * 60_000;
    while (performance.now() < deadline) {
      const moving = await Promise.all(['pending', 'running', 'solving_captcha'].map((status) => list({ status, limit: '1' })));
      if (moving.every((p) => p.data.length === 0)) {
        const seen = new Map();
        for (const status of ['completed', 'failed', 'cancelled']) {
          let cursor;
          do {
            const page = await list({ status, limit: '100', ...(cursor ? { cursor } : {}) });
            for (const d of page.data) if (wanted.has(d.id)) seen.set(d.id, d);
            cursor = page.meta.next_cursor;
          } while (cursor);
        }
        const all = [...seen.values()];
        if (seen.size === wanted.size && all.every((d) => d.token_state === 'settled' || d.token_state === 'refunded')) return all;
      }
      await sleep(POLL_MS);
    }
    throw new Error('requests were not all settled within 10 minutes');
  }

  /**
   * The timed wait: until every request in `ids` is terminal with its tokens settled or refunded,
   * read from the orchestrator's database (one connection, POLL_MS polls, FINAL_POLL_MS once no
   * more than a concurrency's worth is left: a run lasts a second or two, and a 200-ms step at its
   * end read up to a tenth more than the run took). A client polling the API would add its own
   * reads to the fleet's CPU per page (the browser bench measured some 7 ms a page for a list every
   * 500 ms); the checks read the API's answers once, afterwards (untilSettled).
   */
  function untilSettledInDatabase(fleet, ids) {
    const deadline = performance.now() + 10 * 60_000;
    return withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => {
      while (performance.now() < deadline) {
        const { rows } = await c.query(
          `SELECT count(*)::int AS n FROM data_requests
            WHERE id = ANY($1::uuid[]) AND status IN ('completed', 'failed', 'cancelled') AND token_state IN ('settled', 'refunded')`,
          [ids],
        );
        if (rows[0].n === ids.length) return;
        await sleep(ids.length - rows[0].n <= CONCURRENCY ? FINAL_POLL_MS : POLL_MS);
      }
      throw new Error('requests were not all settled within 10 minutes');
    });
  }

  /**
   * The watcher: a tenant of its own with one request that stays running (the site holds it) and an
   * event stream open on it, read in the background. Stopped: the stream closed, the request cancelled.
   */
  async function watch(fleet, gw, holdUrl) {
    const t = await adminCommand(fleet, ['create-tenant', '--name', `bench-watcher-${randomBytes(3).toString('hex')}`, '--credits', '100']);
    const headers = { 'x-api-key': t.api_key, 'content-type': 'application/json' };
    const res = await fetch(`${gw}/api/v1/data/requests`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: holdUrl, mode: 'http', skip_cache: true, timeout_ms: 300_000 }),
    });
    const { id } = await res.json();
    const aborter = new AbortController();
    const stream = await fetch(`${gw}/api/v1/data/requests/${id}/events/stream`, { headers, signal: aborter.signal });
    if (stream.status !== 200) throw new Error(`the watcher's stream answered ${stream.status}`);
    let events = 0;
    let open = true;
    const reading = (async () => {
      for await (const chunk of stream.body) events += (Buffer.from(chunk).toString('utf8').match(/^id: /gm) ?? []).length;
    })()
      .catch(() => undefined)
      .finally(() => (open = false));
    while (events === 0) await sleep(50);
    return {
      /** Ends the watch; answers whether the stream was still open until then (what the scenario measures). */
      stop: async () => {
        const heldOpen = open;
        aborter.abort();
        await reading;
        await fetch(`${gw}/api/v1/data/requests/${id}/cancel`, { method: 'POST', headers });
        return heldOpen;
      },
    };
  }

  async function balance(gw, apiKey) {
    return (await fetch(`${gw}/api/v1/data/balance`, { headers: { 'x-api-key': apiKey } })).json();
  }

  /** The platform: a fresh tenant, a warm-up, then `urls` submitted and timed until all are settled. */
  async function platform(fleet, site, exit, urls, warmUrls, proxy) {
    const gw = fleet.url('gateway');
    const tenant = await adminCommand(fleet, [
      'create-tenant',
      '--name',
      `bench-http-${proxy}-${randomBytes(3).toString('hex')}`,
      '--credits',
      '100000000',
    ]);
    const apiKey = tenant.api_key;
    const watcher = args.watcher ? await watch(fleet, gw, `${new URL(urls[0]).origin}/hold`) : undefined;
    const warm = await submitAll(gw, apiKey, warmUrls, proxy);
    await untilSettled(gw, apiKey, warm.ids);
    const before = await balance(gw, apiKey);
    const siteBefore = await site.ask('stats');
    const exitBefore = exit ? await exit.ask('stats') : undefined;
    const cpuBefore = Object.fromEntries(SERVICE_NAMES.map((s) => [s, cpuOfPid(fleet.pid(s))]));
    const pgBefore = await pgCpu(fleet);
    const brokerBefore = brokerPid === undefined ? undefined : cpuOfPid(brokerPid);
    const t0 = performance.now();
    const wall0 = Date.now();
    const { ids, refused } = await submitAll(gw, apiKey, urls, proxy);
    const admittedIn = (performance.now() - t0) / 1000;
    await untilSettledInDatabase(fleet, ids);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = Object.fromEntries(SERVICE_NAMES.map((s) => [s, cpuOfPid(fleet.pid(s)) - cpuBefore[s]]));
    const pgSeconds = pgCpuSince(pgBefore, await pgCpu(fleet));
    const watched = watcher ? await watcher.stop() : undefined;
    const brokerSeconds = brokerBefore === undefined ? undefined : cpuOfPid(brokerPid) - brokerBefore;
    // Untimed, after the figures: the API's own answers, which the checks read.
    const rows = await untilSettled(gw, apiKey, ids);
    const siteAfter = await site.ask('stats');
    const exitRequests = exit ? (await exit.ask('stats')).requests - exitBefore.requests : undefined;
    const after = await balance(gw, apiKey);
    // What the pages wrote to the orchestrator's outbox (published rows stay a day), by topic: by the
    // request id every envelope carries (billing.commands are keyed by tenant).
    const outbox = await withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) =>
      Object.fromEntries(
        (
          await c.query(
            `SELECT topic, count(*)::int AS n FROM outbox_messages WHERE envelope->'data'->>'request_id' = ANY($1::text[]) GROUP BY topic`,
            [ids],
          )
        ).rows.map((r) => [r.topic, r.n]),
      ),
    );
    const ok = rows.filter((d) => d.status === 'completed' && d.token_state === 'settled').length;
    // skip_cache: true, so no row may be a cache answer (`cached` must be present and false).
    const cachedOrUnknown = rows.filter((d) => d.cached !== false).length;
    const baseTokens = rows.reduce((n, d) => n + (d.base_tokens ?? 0), 0);
    const failures = new Map();
    for (const d of rows)
      if (d.status !== 'completed') failures.set(d.error?.code ?? d.status, (failures.get(d.error?.code ?? d.status) ?? 0) + 1);
    return {
      ok,
      cachedOrUnknown,
      failed: rows.length - ok,
      refused,
      failures,
      seconds,
      admittedIn,
      // When the last page's HTTP stage ended (the request's finished_at), from the first POST.
      fetchedIn: (Math.max(...rows.map((d) => Date.parse(d.finished_at ?? d.created_at))) - wall0) / 1000,
      pagesPerSecond: ok / seconds,
      siteHits: siteAfter.hits - siteBefore.hits,
      exitRequests,
      baseTokens,
      // Leases: a block leaves the balance and counts as reserved until used (bench/lib/leases.mjs).
      charged: before.balance_tokens + before.reserved_tokens - after.balance_tokens - after.reserved_tokens,
      heldAfter: after.reserved_tokens - (await leaseRestOf(fleet, [tenant.tenant_id])),
      cpuMsPerPage: Object.fromEntries(Object.entries(cpu).map(([s, c]) => [s, (c * 1000) / Math.max(1, ok)])),
      pgMsPerPage: (pgSeconds * 1000) / Math.max(1, ok),
      // Not in the fleet's figure (the bare crawler has no broker): shown beside it.
      brokerMsPerPage: brokerSeconds === undefined ? undefined : (brokerSeconds * 1000) / Math.max(1, ok),
      outbox,
      watched,
    };
  }

  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.error(`bench: ${PAGES} pages, concurrency ${CONCURRENCY}, scenarios ${SCENARIOS.join(',')}; load average ${load()}`);

  const site = await child('site');
  const exit = SCENARIOS.includes('proxy') ? await child('proxy') : undefined;
  const urls = (k) => Array.from({ length: PAGES }, (_, i) => `${site.url}/page/${k * 100_000 + i}`);
  const warmUrls = (k) => Array.from({ length: WARMUP }, (_, i) => `${site.url}/warm/${k * 100_000 + i}`);
  let fleet;
  const results = [];
  try {
    fleet = await startFleet({
      env: {
        gateway: benchGatewayEnv(),
        'fetch-orchestrator': { FETCH_CONCURRENCY: String(CONCURRENCY), ...leaseEnv() },
        all: { ...productionEnv(), ...nodeOptionsEnv() },
      },
    });
    recordProfiledFleet(fleet);
    if (exit) {
      await adminCommand(fleet, ['proxy-add', '--label', 'bench-dc', '--class', 'datacenter'], 'fetch-orchestrator', {
        PROXY_EXIT_URL: exit.url,
      });
    }

    let k = 0;
    for (const scenario of SCENARIOS) {
      const proxied = scenario === 'proxy';
      if (!proxied && scenario !== 'direct') throw new Error(`unknown scenario ${scenario} (direct, proxy)`);
      const how = proxied ? 'through a local proxy' : 'direct';
      const c = { name: `Crawlee CheerioCrawler, ${how}`, runs: [] };
      const p = { name: `platform, HTTP mode via the API, ${how}`, platform: true, crawlee: c, runs: [] };
      results.push(c, p);
      await crawlee(warmUrls(++k), proxied ? exit.url : undefined); // warm-up (module loading, JIT)
      // Rounds alternate the two, so both see the machine in the same state; every run fetches
      // pages nobody fetched before.
      for (let round = 1; round <= REPEAT; round++) {
        const siteBefore = await site.ask('stats');
        const exitBefore = proxied ? await exit.ask('stats') : undefined;
        const cr = await crawlee(urls(++k), proxied ? exit.url : undefined);
        cr.siteHits = (await site.ask('stats')).hits - siteBefore.hits;
        if (proxied) cr.exitRequests = (await exit.ask('stats')).requests - exitBefore.requests;
        c.runs.push(cr);
        console.error(
          `  [${round}/${REPEAT}] Crawlee ${how}: ${cr.pagesPerSecond.toFixed(1)} pages/s (${cr.ok}/${PAGES} in ${cr.seconds.toFixed(2)} s)`,
        );

        const pr = await platform(fleet, site, proxied ? exit : undefined, urls(++k), warmUrls(k), proxied ? 'random' : 'off');
        p.runs.push(pr);
        console.error(
          `  [${round}/${REPEAT}] platform ${how}: ${pr.pagesPerSecond.toFixed(1)} pages/s (${pr.ok}/${PAGES} settled in ${pr.seconds.toFixed(2)} s, all admitted in ${pr.admittedIn.toFixed(2)} s); load ${load()}`,
        );
      }
    }
  } finally {
    if (fleet) await fleet.stop();
    await site.stop();
    if (exit) await exit.stop();
    rmSync(storageDir, { recursive: true, force: true });
  }

  const fmt = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  /** The run with the median pages/s (the lower middle one for an even count). */
  const median = (runs) => [...runs].sort((a, b) => a.pagesPerSecond - b.pagesPerSecond)[Math.floor((runs.length - 1) / 2)];
  const sum = (runs, f) => runs.reduce((n, r) => n + f(r), 0);
  for (const r of results) {
    r.median = median(r.runs);
    r.range = `${fmt(Math.min(...r.runs.map((x) => x.pagesPerSecond)))}-${fmt(Math.max(...r.runs.map((x) => x.pagesPerSecond)))}`;
  }
  const rows = [
    ['scenario', 'pages', 'concurrency', 'seconds', 'pages/s', `range (${REPEAT} runs)`, 'vs Crawlee'],
    ...results.map((r) => [
      r.name,
      `${r.median.ok}/${PAGES}`,
      String(CONCURRENCY),
      fmt(r.median.seconds, 2),
      fmt(r.median.pagesPerSecond),
      r.range,
      r.platform ? `${fmt(r.median.pagesPerSecond / r.crawlee.median.pagesPerSecond, 2)}x` : '1.00x',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  console.log(rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n'));
  console.log(
    `\nmedian of ${REPEAT} runs per row (Crawlee and platform runs alternate); target: platform >= 0.5x Crawlee, every page persisted and billed`,
  );
  for (const r of results.filter((x) => x.platform)) {
    const ratio = r.median.pagesPerSecond / r.crawlee.median.pagesPerSecond;
    const ok = sum(r.runs, (x) => x.ok);
    const perPage = (f) => sum(r.runs, (x) => f(x) * x.ok) / Math.max(1, ok);
    const cpu = Object.fromEntries(SERVICE_NAMES.map((s) => [s, perPage((x) => x.cpuMsPerPage[s])]));
    const fleetCpu = Object.values(cpu).reduce((a, b) => a + b, 0);
    const crawleeOk = sum(r.crawlee.runs, (x) => x.ok);
    const failures = new Map();
    const refused = new Map();
    for (const x of r.runs) {
      for (const [code, n] of x.failures) failures.set(code, (failures.get(code) ?? 0) + n);
      for (const [code, n] of x.refused) refused.set(code, (refused.get(code) ?? 0) + n);
    }
    console.log(`${r.name}: ${fmt(ratio, 2)}x, ${ratio >= 0.5 ? 'met' : 'NOT met'}`);
    console.log(
      `  over ${REPEAT} runs: ${ok} completed and settled, ${sum(r.runs, (x) => x.failed)} not${failures.size ? ` (${[...failures].map(([c, n]) => `${c} x${n}`).join(', ')})` : ''}${refused.size ? `; refused at submission: ${[...refused].map(([s, n]) => `${s} x${n}`).join(', ')}` : ''}`,
    );
    console.log(
      `  median run: all admitted after ${fmt(r.median.admittedIn, 2)} s, the last page fetched and stored after ${fmt(r.median.fetchedIn, 2)} s, settled (seen) after ${fmt(r.median.seconds, 2)} s`,
    );
    console.log(
      `  billed: balance down by ${sum(r.runs, (x) => x.charged)} tokens (base price ${sum(r.runs, (x) => x.baseTokens)}), ${sum(r.runs, (x) => x.heldAfter)} still held; target site hits ${sum(r.runs, (x) => x.siteHits)} (Crawlee's ${sum(r.crawlee.runs, (x) => x.siteHits)})${r.runs[0].exitRequests !== undefined ? `; requests through the exit ${sum(r.runs, (x) => x.exitRequests)} (Crawlee's ${sum(r.crawlee.runs, (x) => x.exitRequests)})` : ''}`,
    );
    console.log(
      `  CPU per page (ms): fleet ${fmt(fleetCpu)} (${Object.entries(cpu)
        .map(([s, ms]) => `${s} ${fmt(ms)}`)
        .join(
          ', ',
        )}), Postgres backends ${fmt(perPage((x) => x.pgMsPerPage))}; Crawlee's process ${fmt(sum(r.crawlee.runs, (x) => x.cpuMsPerPage * x.ok) / Math.max(1, crawleeOk))}`,
    );
    // Keyed by request id (the HTTP stage's own messages; the ledger's answers are in its outbox).
    const topics = [...new Set(r.runs.flatMap((x) => Object.keys(x.outbox)))].sort();
    if (r.runs.every((x) => x.brokerMsPerPage !== undefined))
      console.log(`  Kafka broker CPU per page (not in the fleet figure): ${fmt(perPage((x) => x.brokerMsPerPage))} ms`);
    console.log(
      `  orchestrator outbox messages per page: ${
        topics
          .map(
            (t) =>
              `${t} ${fmt(
                sum(r.runs, (x) => x.outbox[t] ?? 0) /
                  Math.max(
                    1,
                    sum(r.runs, (x) => x.ok),
                  ),
              )}`,
          )
          .join(', ') || 'none'
      }`,
    );
  }
  // What the figures stand on: every page fetched once, completed, settled, charged its price, no cache answer.
  for (const r of results) {
    const scenario = r.name;
    if (!r.platform) {
      const crawled = sum(r.runs, (x) => x.ok);
      report.check(
        `${scenario}: every page crawled`,
        crawled === PAGES * REPEAT && sum(r.runs, (x) => x.failed) === 0,
        `${crawled} of ${PAGES * REPEAT}`,
      );
      report.check(
        `${scenario}: every page fetched once`,
        sum(r.runs, (x) => x.siteHits) === PAGES * REPEAT,
        `${sum(r.runs, (x) => x.siteHits)} site hits`,
      );
      continue;
    }
    const proxied = r.runs[0].exitRequests !== undefined;
    const n = PAGES * REPEAT;
    report.check(`${scenario}: every page completed and settled`, sum(r.runs, (x) => x.ok) === n, `${sum(r.runs, (x) => x.ok)} of ${n}`);
    report.check(
      `${scenario}: no result from the cache`,
      sum(r.runs, (x) => x.cachedOrUnknown) === 0,
      `${sum(r.runs, (x) => x.cachedOrUnknown)} not cached: false`,
    );
    report.check(
      `${scenario}: every page fetched from the target once`,
      sum(r.runs, (x) => x.siteHits) === n,
      `${sum(r.runs, (x) => x.siteHits)} site hits for ${n} pages`,
    );
    if (args.watcher)
      report.check(
        `${scenario}: the watcher's event stream stayed open through every run`,
        r.runs.every((x) => x.watched === true),
        `${r.runs.filter((x) => x.watched === true).length} of ${r.runs.length} runs`,
      );
    if (proxied)
      report.check(
        `${scenario}: every page through the exit`,
        sum(r.runs, (x) => x.exitRequests) === n,
        `${sum(r.runs, (x) => x.exitRequests)} exit requests`,
      );
    // The price: the base tariff, plus through the exit one token of datacenter traffic per page (200 tokens/GiB, rounded up per request).
    const price = sum(r.runs, (x) => x.baseTokens) + (proxied ? n : 0);
    report.check(
      `${scenario}: charge equal to the price, nothing held`,
      sum(r.runs, (x) => x.charged) === price && sum(r.runs, (x) => x.heldAfter) === 0,
      `balance down by ${sum(r.runs, (x) => x.charged)}, price ${price}, held ${sum(r.runs, (x) => x.heldAfter)}`,
    );
    const ok = sum(r.runs, (x) => x.ok);
    const perPage = (f) => sum(r.runs, (x) => f(x) * x.ok) / Math.max(1, ok);
    const fleetMs = SERVICE_NAMES.reduce((a, s) => a + perPage((x) => x.cpuMsPerPage[s]), 0);
    report.figure(`http: platform pages/s, ${proxied ? 'through a proxy' : 'direct'}`, r.median.pagesPerSecond, {
      reference: r.crawlee.median.pagesPerSecond,
      referenceName: 'Crawlee CheerioCrawler',
      target: { op: '>=', value: 0.5, of: 'ratio' },
    });
    report.figure(`http: fleet + Postgres CPU per page, ${proxied ? 'proxy' : 'direct'}`, fleetMs + perPage((x) => x.pgMsPerPage), {
      unit: 'ms',
      reference:
        sum(r.crawlee.runs, (x) => x.cpuMsPerPage * x.ok) /
        Math.max(
          1,
          sum(r.crawlee.runs, (x) => x.ok),
        ),
      referenceName: "Crawlee's process",
      target: { op: '<=', value: 10, of: 'value' },
    });
  }
  console.log(`\nload average after the run: ${load()}`);
  if (CPU_PROF_DIR) console.log(`CPU profiles: ${CPU_PROF_DIR} (summarise with: node bench/profile-top.mjs ${CPU_PROF_DIR})`);
  // Crawlee's event manager may keep a timer: every server and process of ours is stopped, so leave.
  process.exit(report.finish() ? 0 : 1);
}
