import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Adds up the per-workspace results (.stack/test-results/*.json), prints one line per workspace or
// check, the ten slowest test files with their seconds, and last the plain summary line CI reads.
// `--expect=NAME=LOG=PREFIX` (any number): a run that must have written NAME.json. One that did not
// (its global set-up threw, its process was killed) counts as a failed entry, and the summary quotes
// the last lines of LOG that start with PREFIX (all lines when PREFIX is empty), so a CI log that
// keeps only its tail still says why.
const dir = process.argv[2];
const expected = process.argv
  .slice(3)
  .filter((a) => a.startsWith('--expect='))
  .map((a) => {
    const [name, log, prefix = ''] = a.slice('--expect='.length).split('=');
    return { name, log, prefix };
  });
let passed = 0;
let failed = 0;
let skipped = 0;
let files = [];
try {
  files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
} catch {
  files = [];
}
const timed = [];
const failures = [];
for (const f of files) {
  const r = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
  for (const t of r.files ?? []) timed.push(t);
  for (const f of r.failures ?? []) failures.push(f);
  const seconds = (r.files ?? []).reduce((s, t) => s + t.seconds, 0);
  const took = r.files?.length ? ` [${r.files.length} files, ${seconds.toFixed(0)} s]` : '';
  console.log(`  ${r.name}: ${r.passed} passed, ${r.failed} failed${r.suitesFailed ? ` (${r.suitesFailed} suites failed)` : ''}${took}`);
}
const missing = expected.filter((e) => !files.includes(`${e.name}.json`));
for (const e of missing) {
  failed += 1;
  console.log(`  ${e.name}: no results (the run ended before its reporter wrote them)`);
  failures.push({ path: e.name, test: '(run wrote no results)', error: `last lines of ${e.log}:\n${logTail(e)}` });
}
if (timed.length > 0) {
  console.log('slowest test files:');
  for (const t of timed.sort((a, b) => b.seconds - a.seconds).slice(0, 10))
    console.log(`  ${t.seconds.toFixed(1).padStart(6)} s  ${t.path}`);
}
if (failures.length > 0) {
  console.log('failed tests:');
  for (const f of failures) console.log(`  ${f.path}: ${f.test}\n      ${f.error}`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);

// The last 30 lines of a lane's log that belong to one run (turbo prefixes each line with the package's task).
function logTail({ log, prefix }) {
  let lines;
  try {
    lines = readFileSync(log, 'utf8').split('\n');
  } catch (err) {
    return `        (unreadable: ${err.message})`;
  }
  return lines
    .filter((l) => l.startsWith(prefix))
    .slice(-30)
    .map((l) => `        ${l}`)
    .join('\n');
}
