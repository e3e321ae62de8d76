import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes each workspace's totals to .stack/test-results/<name>.json for `./dev test`'s summary line. */
export default class SummaryReporter {
  constructor(_globalConfig, options) {
    this.name = options.name;
  }

  onRunComplete(_contexts, results) {
    const dir = join(process.env.WDR_TEST_RESULTS_DIR ?? join(process.cwd(), '..', '..', '.stack', 'test-results'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `${this.name}.json`),
      JSON.stringify({
        name: this.name,
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
        suitesFailed: results.numFailedTestSuites,
      }),
    );
  }
}
