import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Adds up the per-workspace results (.stack/test-results/*.json), prints one line per workspace or
// check, the ten slowest test files with their seconds, and last the plain summary line CI reads.
const dir = process.argv[2];
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
