import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Adds up the per-workspace jest results and prints the plain summary line CI reads.
const dir = process.argv[2];
let passed = 0;
let failed = 0;
let skipped = 0;
let files = [];
try {
  files = readdirSync(dir).filter((f) => f.endsWith('.json'));
} catch {
  files = [];
}
for (const f of files) {
  const r = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
  console.log(`  ${r.name}: ${r.passed} passed, ${r.failed} failed${r.suitesFailed ? ` (${r.suitesFailed} suites failed)` : ''}`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
