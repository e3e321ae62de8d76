import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const REPO = join(import.meta.dirname, '..');

/**
 * Writes each jest run's totals, and each test file's wall time, to .stack/test-results/<name>.json
 * for `./dev test`'s summary (its pass/fail line and its ten slowest files).
 */
export default class SummaryReporter {
  constructor(_globalConfig, options) {
    this.name = options.name;
  }

  onRunComplete(_contexts, results) {
    const dir = join(process.env.WDR_TEST_RESULTS_DIR ?? join(REPO, '.stack', 'test-results'));
    mkdirSync(dir, { recursive: true });
    const files = results.testResults.map((r) => ({
      path: relative(REPO, r.testFilePath),
      seconds: Math.round(Math.max(0, r.perfStats.end - r.perfStats.start) / 100) / 10,
    }));
    writeFileSync(
      join(dir, `${this.name}.json`),
      JSON.stringify({
        name: this.name,
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
        suitesFailed: results.numFailedTestSuites,
        files,
      }),
    );
  }
}
