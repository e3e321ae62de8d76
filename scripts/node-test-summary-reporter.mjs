import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A node:test reporter that writes the run's totals where `./dev test` collects jest's
 * (.stack/test-results/<name>.json), so one summary line covers both runners. Name from
 * WDR_TEST_RESULTS_NAME. It prints nothing; pair it with the spec reporter.
 */
export default async function* summaryReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:summary' || event.data.file !== undefined) continue;
    const { passed, failed, skipped, todo, cancelled } = event.data.counts;
    const dir = process.env.WDR_TEST_RESULTS_DIR ?? join(process.cwd(), '..', '..', '.stack', 'test-results');
    const name = process.env.WDR_TEST_RESULTS_NAME ?? 'node-test';
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `${name}.json`),
      JSON.stringify({ name, passed, failed: failed + cancelled, skipped: skipped + todo, suitesFailed: 0 }),
    );
  }
  yield '';
}
