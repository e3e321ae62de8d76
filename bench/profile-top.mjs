#!/usr/bin/env node
/**
 * Summarise V8 CPU profiles (`node --cpu-prof`), e.g. those bench/submissions.mjs writes with
 * BENCH_CPU_PROF_DIR: per process, where the sampled time went, by package (a dependency under
 * node_modules, the service's own code, node's internals, GC, idle) and by function (self time).
 *
 *   node bench/profile-top.mjs <dir> [--top 12] [--skip-s 0]
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/profile-top.mjs <dir with .cpuprofile files> [--top N]');
  process.exit(2);
}
const topIdx = process.argv.indexOf('--top');
const TOP = topIdx > 0 ? Number(process.argv[topIdx + 1]) : 12;
const skipIdx = process.argv.indexOf('--skip-s');
/** Leave out each profile's first seconds (start-up: module loading, connecting). */
const SKIP_US = skipIdx > 0 ? Number(process.argv[skipIdx + 1]) * 1e6 : 0;
const services = existsSync(join(dir, 'services.json')) ? JSON.parse(readFileSync(join(dir, 'services.json'), 'utf8')) : {};

/** Which part of the program a frame belongs to. */
function packageOf(frame) {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return '(gc)';
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(program)') return '(program: native, outside JS)';
  if (!url) return '(native)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node internals';
  const app = /\/(apps|packages)\/([^/]+)\//.exec(url);
  if (app) return `${app[1]}/${app[2]}`;
  return url;
}

const ms = (us) => (us / 1000).toFixed(0);
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort()) {
  const pid = /\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(file)?.[1];
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  // Sample i lasted timeDeltas[i + 1]; attribute it to the sampled node (its self time).
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (at < SKIP_US) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  const byPackage = new Map();
  const byFunction = new Map();
  let busy = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id).callFrame;
    const pkg = packageOf(frame);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    if (pkg === '(idle)') continue;
    busy += us;
    const name = `${frame.functionName || '(anonymous)'} ${pkg}${frame.url ? `:${frame.url.split('/').pop()}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  const total = profile.endTime - profile.startTime - SKIP_US;
  console.log(`\n${services[pid] ?? file}: ${ms(total)} ms profiled, ${ms(busy)} ms busy`);
  const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
  console.log('  by package (share of busy time):');
  for (const [pkg, us] of [...byPackage]
    .filter(([p]) => p !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)) {
    console.log(`    ${pct(us)}  ${pkg}`);
  }
  console.log('  by function (self time):');
  for (const [fn, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`    ${pct(us)}  ${fn}`);
}
