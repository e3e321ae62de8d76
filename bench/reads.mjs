#!/usr/bin/env node
/**
 * Result reads through the API (issue 21, bounded reads; see bench/README.md): one fleet, one
 * tenant with its read limits lifted, a stored result of --mb MB (random bytes, application/pdf)
 * and a small HTML page, then for each scenario --reads reads from --concurrency workers:
 *
 *   large result   GET …/result of the large page, each read to its last byte (sha-256 checked once)
 *   text result    GET …/result?format=text of the small page (derived once, then served stored)
 *   detail         GET …/requests/{id}
 *
 * Reported per scenario: reads/s, MB/s, p50/p99 latency (to the last byte), and the gateway's and
 * the orchestrator's peak RSS growth over the scenario (/proc, sampled every 10 ms).
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   node bench/reads.mjs [--mb 10] [--reads 64] [--concurrency 8]
 *
 * Only loopback traffic: the page is served on 127.0.0.1.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { adminCommand, startFleet } from '@wdr/testkit';

const { values: args } = parseArgs({
  options: {
    mb: { type: 'string', default: '10' },
    reads: { type: 'string', default: '64' },
    concurrency: { type: 'string', default: '8' },
  },
});
const MB = Number(args.mb);
const READS = Number(args.reads);
const CONCURRENCY = Number(args.concurrency);

const page = randomBytes(Math.floor(MB * 1024 * 1024) - 4096);
const pageSha = createHash('sha256').update(page).digest('hex');
const html = `<html><head><title>Bench</title></head><body>${'<p>reads bench paragraph with some words</p>'.repeat(500)}</body></html>`;
const site = createServer((req, res) => {
  if (req.url === '/large') res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': page.length }).end(page);
  else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
});
await new Promise((r) => site.listen(0, '127.0.0.1', r));
const siteUrl = `http://127.0.0.1:${site.address().port}`;

const rss = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

/** One GET read to its last byte: { status, bytes, ms, sha? }. */
function read(base, path, key, hash = false) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(`${base}${path}`, { headers: { 'x-api-key': key } }, (res) => {
      const h = hash ? createHash('sha256') : undefined;
      let bytes = 0;
      res.on('data', (c) => {
        bytes += c.length;
        h?.update(c);
      });
      res.on('end', () => resolve({ status: res.statusCode, bytes, ms: performance.now() - started, sha: h?.digest('hex') }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

let fleet;
try {
  fleet = await startFleet();
  const base = fleet.url('gateway');
  const t = await adminCommand(fleet, ['create-tenant', '--name', `bench-reads-${Date.now()}`, '--credits', '1000']);
  const key = String(t.api_key);
  await adminCommand(fleet, ['set-limits', '--tenant', String(t.tenant_id), '--read-rate', '10000000', '--read-concurrency', '10000']);
  const submit = async (path) => {
    const res = await fetch(`${base}/api/v1/data/requests`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${siteUrl}${path}`, mode: 'http', skip_cache: true }),
    });
    const { id } = await res.json();
    for (let i = 0; i < 600; i++) {
      const d = await (await fetch(`${base}/api/v1/data/requests/${id}`, { headers: { 'x-api-key': key } })).json();
      if (d.status === 'completed') return id;
      if (['failed', 'cancelled'].includes(d.status)) throw new Error(`${path}: ${d.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${path}: not completed`);
  };
  const large = await submit('/large');
  const small = await submit('/small');
  const check = await read(base, `/api/v1/data/requests/${large}/result`, key, true);
  if (check.sha !== pageSha) throw new Error('the large result did not arrive intact');

  const scenarios = [
    ['large result', `/api/v1/data/requests/${large}/result`],
    ['text result', `/api/v1/data/requests/${small}/result?format=text`],
    ['detail', `/api/v1/data/requests/${large}`],
  ];
  const rows = [];
  for (const [name, path] of scenarios) {
    await read(base, path, key); // warm
    const pids = { gateway: fleet.pid('gateway'), orchestrator: fleet.pid('fetch-orchestrator') };
    const before = { gateway: rss(pids.gateway), orchestrator: rss(pids.orchestrator) };
    const peak = { ...before };
    const sampler = setInterval(() => {
      for (const k of Object.keys(pids)) peak[k] = Math.max(peak[k], rss(pids[k]));
    }, 10);
    const times = [];
    let bytes = 0;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < READS) {
          next++;
          const r = await read(base, path, key);
          if (r.status !== 200) throw new Error(`${name}: ${r.status}`);
          times.push(r.ms);
          bytes += r.bytes;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    times.sort((a, b) => a - b);
    rows.push({
      name,
      rps: READS / seconds,
      mbps: bytes / 1048576 / seconds,
      p50: pct(times, 50),
      p99: pct(times, 99),
      gw: (peak.gateway - before.gateway) / 1048576,
      orch: (peak.orchestrator - before.orchestrator) / 1048576,
    });
  }
  console.log(`${READS} reads per scenario, ${CONCURRENCY} at once; large result ${(page.length / 1048576).toFixed(1)} MB`);
  console.log('scenario          reads/s   MB/s     p50 ms   p99 ms   gateway RSS +MB   orchestrator RSS +MB');
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(18)}${r.rps.toFixed(1).padEnd(10)}${r.mbps.toFixed(1).padEnd(9)}${r.p50.toFixed(1).padEnd(9)}${r.p99.toFixed(1).padEnd(9)}${r.gw.toFixed(0).padEnd(18)}${r.orch.toFixed(0)}`,
    );
  }
} finally {
  if (fleet) await fleet.stop();
  site.close();
}
