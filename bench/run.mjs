#!/usr/bin/env node
/**
 * `npm run bench`: every bench of bench/, one after the other, then one table of their figures:
 * figure, the same run's reference, ratio, the target (issue 24's), met or not; and every check
 * each bench made of what it measured. Exits non-zero when a bench failed or any check did, and
 * says which. About ten minutes on a 2-core machine; `--quick` (about four) runs smaller loads
 * (figures noisier, checks the same).
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   npm run bench                      # all
 *   npm run bench -- --quick
 *   npm run bench -- --only submissions,webhooks
 *
 * Each bench's own output goes to a log file (printed at the start); the table is printed at the end.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createWriteStream, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { KAFKA_BROKERS } from '@wdr/testkit';
import { met, targetText } from './lib/report.mjs';

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
const quick = args.quick;

/** The benches, in the order they run: script, arguments, environment (full and quick). */
const BENCHES = [
  // First: the machine's price of a hop between processes, which every fleet figure below pays many times a page.
  { name: 'ipc', script: 'ipc.mjs', args: quick ? ['--trips', '5000'] : [] },
  { name: 'extraction', script: 'extraction.mjs', args: quick ? ['--seconds', '1'] : [] },
  {
    name: 'processed-retention',
    script: 'processed-retention.mjs',
    args: quick ? ['--rows', '20000', '--keep', '20000'] : ['--rows', '100000', '--keep', '100000'],
  },
  { name: 'ledger', script: 'ledger.mjs', args: quick ? ['--ops', '500', '--kafka'] : ['--kafka'] },
  { name: 'webhooks', script: 'webhooks.mjs', env: quick ? { BENCH_EVENTS: '300', BENCH_RATES: '100', BENCH_LATENCY_S: '5' } : {} },
  {
    name: 'submissions',
    script: 'submissions.mjs',
    env: quick ? { BENCH_IDLE_S: '20', BENCH_DURATION_S: '6', BENCH_TENANTS: '64' } : {},
  },
  { name: 'http', script: 'http.mjs', args: quick ? ['--pages', '150', '--repeat', '1', '--scenarios', 'direct,proxy'] : [] },
  { name: 'browser', script: 'browser.mjs', env: quick ? { BENCH_PAGES: '20' } : {} },
];

const only = args.only?.split(',');
if (only)
  for (const o of only) if (!BENCHES.some((b) => b.name === o)) throw new Error(`no bench ${o} (${BENCHES.map((b) => b.name).join(', ')})`);
const chosen = BENCHES.filter((b) => !only || only.includes(b.name));
const dir = mkdtempSync(join(tmpdir(), 'wdr-bench-'));
const here = import.meta.dirname;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

// Every bench but extraction needs the broker; without one they hang on their first send (no error).
const broker = KAFKA_BROKERS[0];
const reachable = await new Promise((resolve) => {
  const [host, port] = broker.split(':');
  const socket = connect({ host, port: Number(port), timeout: 2_000 });
  const done = (ok) => {
    socket.destroy();
    resolve(ok);
  };
  socket.once('connect', () => done(true));
  socket.once('timeout', () => done(false));
  socket.once('error', () => done(false));
});
if (!reachable) {
  console.error(`npm run bench: no Kafka broker answers at ${broker}; start one with \`bash infra/kafka/kafka.sh start\` (or ./dev up)`);
  process.exit(1);
}

console.log(`npm run bench${quick ? ' --quick' : ''}: ${chosen.map((b) => b.name).join(', ')}; logs in ${dir}; load average ${load()}`);
const started = performance.now();
const outcomes = [];
for (const b of chosen) {
  const log = join(dir, `${b.name}.log`);
  const reportFile = join(dir, `${b.name}.json`);
  const t0 = performance.now();
  const loadBefore = load();
  const code = await new Promise((resolve) => {
    const out = createWriteStream(log);
    const child = spawn(process.execPath, [join(here, b.script), ...(b.args ?? [])], {
      env: { ...process.env, ...b.env, BENCH_REPORT_FILE: reportFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on('exit', (c, signal) => {
      out.end();
      resolve(c ?? (signal ? 128 : 1));
    });
  });
  const seconds = (performance.now() - t0) / 1000;
  const report = existsSync(reportFile) ? JSON.parse(readFileSync(reportFile, 'utf8')) : undefined;
  const failedChecks = report?.checks.filter((c) => !c.ok) ?? [];
  outcomes.push({ ...b, code, seconds, report, failedChecks, log, loadBefore, loadAfter: load() });
  console.log(
    `  ${b.name.padEnd(20)} ${seconds.toFixed(0).padStart(4)} s, exit ${code}, ${report ? `${report.checks.length - failedChecks.length}/${report.checks.length} checks passed` : 'no report'}, load ${loadBefore} -> ${load()}`,
  );
  for (const c of failedChecks) console.log(`    CHECK FAILED: ${c.name}${c.detail ? ` (${c.detail})` : ''}`);
  if (code !== 0 && !failedChecks.length) {
    const tail = readFileSync(log, 'utf8').trim().split('\n').slice(-8).join('\n      ');
    console.log(`    FAILED (exit ${code}); the end of ${log}:\n      ${tail}`);
  }
}

const fmt = (x, unit) => {
  if (x === undefined || !Number.isFinite(x)) return '-';
  const d = Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2;
  return `${x.toFixed(d)}${unit ? ` ${unit}` : ''}`;
};
const rows = [['figure', 'value', 'same-run reference', 'ratio', 'target', 'met']];
for (const o of outcomes) {
  for (const f of o.report?.figures ?? []) {
    const m = met(f);
    const valid = o.code === 0 && o.failedChecks.length === 0;
    rows.push([
      f.name,
      fmt(f.value, f.unit),
      f.reference !== undefined ? `${fmt(f.reference, f.unit)} (${f.referenceName})` : '-',
      f.ratio !== undefined ? `${f.ratio.toFixed(2)}x` : '-',
      targetText(f.target),
      m === undefined ? '-' : !valid ? 'CHECKS FAILED' : m ? 'met' : 'NOT met',
    ]);
  }
  if (!o.report?.figures.length) rows.push([`${o.name}: no figures`, '-', '-', '-', '-', o.code === 0 ? '-' : 'FAILED']);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
console.log(`\n${line(rows[0])}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n${rows.slice(1).map(line).join('\n')}`);
const failed = outcomes.filter((o) => o.code !== 0 || o.failedChecks.length);
const checks = outcomes.reduce((n, o) => n + (o.report?.checks.length ?? 0), 0);
console.log(
  `\n${outcomes.length} benches in ${((performance.now() - started) / 60_000).toFixed(1)} min; ${checks} checks; load average at the end ${load()}`,
);
if (failed.length) {
  console.log(
    `FAILED: ${failed.map((o) => `${o.name} (${o.failedChecks.length ? o.failedChecks.map((c) => c.name).join('; ') : `exit ${o.code}, see ${o.log}`})`).join(', ')}`,
  );
  process.exitCode = 1;
} else {
  console.log('every bench ran and every check passed');
}
