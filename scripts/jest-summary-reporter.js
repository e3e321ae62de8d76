import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

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
    // The failed tests by name, with the first line of their error, so a CI log that keeps only the
    // summary still says what failed.
    const failures = [];
    for (const r of results.testResults) {
      const path = relative(REPO, r.testFilePath);
      if (r.testExecError) failures.push({ path, test: '(suite did not run)', error: firstLine(r.testExecError.message) });
      for (const t of r.testResults)
        if (t.status === 'failed') failures.push({ path, test: t.fullName, error: firstLine(t.failureMessages[0] ?? '') });
      if (r.failureMessage && r.numFailingTests === 0 && !r.testExecError)
        failures.push({ path, test: '(suite failed outside its tests)', error: firstLine(r.failureMessage) });
    }
    writeFileSync(
      join(dir, `${this.name}.json`),
      JSON.stringify({
        name: this.name,
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
        suitesFailed: results.numFailedTestSuites,
        files,
        failures,
      }),
    );
  }
}

// The first three lines of an error message (matcher, expected, received), without colour codes
// or stack frames, at most 400 characters.
function firstLine(message) {
  const plain = stripVTControlCharacters(String(message));
  const lines = plain
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('●') && !l.startsWith('at '))
    .slice(0, 3)
    .join(' | ');
  return lines.length > 400 ? `${lines.slice(0, 397)}...` : lines;
}
