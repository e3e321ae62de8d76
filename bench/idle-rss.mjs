/**
 * Idle CPU and memory of each service (issue 24): starts the fleet as bench/submissions.mjs does
 * (production mode, quiet logs, service defaults for polls), lets start-up pass (5 s), then idles
 * and prints per service its CPU over the idle seconds (user + system, /proc, % of one core), the
 * node process's RSS (/proc) beside V8's heap (used / total), external + array buffers and the rest
 * (code, native libraries, wasm, allocator), read from each service's own /metrics (prom-client's
 * default metrics). `BENCH_CPU_PROF_DIR=dir` also writes each service's V8 profile there (read with
 * `node bench/profile-top.mjs dir --skip-s <seconds before the idle>`).
 * Usage: node bench/idle-rss.mjs [idle seconds, 30]. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { adminCommand, SERVICE_NAMES, startFleet } from '@wdr/testkit';
import { cpuOfPid } from './lib/cpu.mjs';
import { nodeOptionsEnv, productionEnv, recordProfiledFleet } from './lib/fleet.mjs';

const IDLE_S = Number(process.argv[2] ?? 30);
const MB = 1024 * 1024;

const fleet = await startFleet({
  env: {
    gateway: { REDIS_KEY_PREFIX: `wdr:bench:${randomBytes(4).toString('hex')}:` },
    all: { ...productionEnv(), ...nodeOptionsEnv() },
  },
});
recordProfiledFleet(fleet);
/** CPU seconds (user + system) of a service's node process. */
const cpuSeconds = (s) => cpuOfPid(fleet.pid(s));
try {
  // BENCH_TENANTS: tenants created first, a few at a time, as bench/submissions.mjs does before its idle phase.
  const tenants = Number(process.env.BENCH_TENANTS ?? 0);
  for (let i = 0; i < tenants; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, tenants - i) }, (_, k) =>
        adminCommand(fleet, ['create-tenant', '--name', `idle-${i + k}`, '--credits', '1000']),
      ),
    );
  }
  await new Promise((r) => setTimeout(r, 5_000)); // start-up work (joins, first polls)
  const before = Object.fromEntries(SERVICE_NAMES.map((s) => [s, cpuSeconds(s)]));
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = Object.fromEntries(SERVICE_NAMES.map((s) => [s, ((cpuSeconds(s) - before[s]) / elapsed) * 100]));
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  console.log(`idle CPU over ${elapsed.toFixed(1)} s, % of one core: fleet ${total.toFixed(2)}`);
  for (const s of SERVICE_NAMES) console.log(`  ${s.padEnd(22)}${cpu[s].toFixed(3).padStart(7)}`);
  const metric = (text, name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  console.log(
    `idle ${IDLE_S} s; MB        RSS   heap used  heap total  external  rest (RSS - heap total - external)  anonymous  file-backed`,
  );
  for (const s of SERVICE_NAMES) {
    const status = readFileSync(`/proc/${fleet.pid(s)}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024;
    const rss = kb('VmRSS');
    const text = await (await fetch(`${fleet.metricsUrl(s)}/metrics`)).text();
    const used = metric(text, 'nodejs_heap_size_used_bytes') / MB;
    const total = metric(text, 'nodejs_heap_size_total_bytes') / MB;
    const external = metric(text, 'nodejs_external_memory_bytes') / MB;
    const f = (n) => n.toFixed(1).padStart(9);
    console.log(
      `${s.padEnd(22)}${f(rss)}${f(used)}  ${f(total)} ${f(external)}  ${f(rss - total - external)}  ${f(kb('RssAnon'))} ${f(kb('RssFile'))}`,
    );
  }
} finally {
  await fleet.stop();
}
