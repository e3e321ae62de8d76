/**
 * What a bench measured and what it checked, for `npm run bench` (bench/run.mjs) to gather into one
 * table. Each bench reports its figures (value, the same run's reference, ratio, the issue's target)
 * and its checks (did it measure what it says: nothing from the cache unless the cache is the
 * subject, every page completed and settled, the charge equal to the price). A failed check is
 * printed with its name and detail and makes the bench exit non-zero: a figure whose checks failed
 * is not a figure.
 *
 * With BENCH_REPORT_FILE set, the report is also written there as JSON when the bench ends.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/**
 * @typedef {{ op: '>=' | '<=' | '<', value: number, of: 'ratio' | 'value' }} Target
 * @typedef {{ bench: string, name: string, value: number, unit: string, reference?: number, referenceName?: string,
 *   ratio?: number, target?: Target }} Figure
 */

export function benchReport(bench) {
  /** @type {Figure[]} */
  const figures = [];
  const checks = [];
  const loadBefore = loadavg();
  const report = {
    /**
     * A figure; with `reference` the ratio value/reference is computed, with `target` whether it is met
     * (`of: 'ratio'` compares the ratio, `of: 'value'` the value itself).
     */
    figure(name, value, { unit = '', reference, referenceName, target } = {}) {
      const ratio = reference !== undefined && reference > 0 ? value / reference : undefined;
      figures.push({ bench, name, value, unit, reference, referenceName, ratio, target });
    },
    /** A check of what was measured: failed checks fail the bench. Answers `ok`. */
    check(name, ok, detail = '') {
      checks.push({ bench, name, ok: Boolean(ok), detail: String(detail) });
      if (!ok) console.error(`CHECK FAILED [${bench}] ${name}${detail ? `: ${detail}` : ''}`);
      return Boolean(ok);
    },
    /** Prints the checks, writes BENCH_REPORT_FILE, sets the exit code (1 when a check failed). */
    finish() {
      const failed = checks.filter((c) => !c.ok);
      console.log(`\nchecks (${bench}): ${checks.length - failed.length}/${checks.length} passed`);
      for (const c of checks) console.log(`  ${c.ok ? 'ok    ' : 'FAILED'} ${c.name}${c.detail ? ` (${c.detail})` : ''}`);
      if (process.env.BENCH_REPORT_FILE) {
        writeFileSync(process.env.BENCH_REPORT_FILE, JSON.stringify({ bench, figures, checks, load: [loadBefore, loadavg()] }, null, 1));
      }
      if (failed.length) {
        console.error(`${bench}: ${failed.length} check(s) failed: ${failed.map((c) => c.name).join('; ')}`);
        process.exitCode = 1;
      }
      return failed.length === 0;
    },
  };
  return report;
}

/** Whether `figure` meets its target (undefined when it has none or could not be measured). */
export function met(figure) {
  const t = figure.target;
  if (!t) return undefined;
  const x = t.of === 'ratio' ? figure.ratio : figure.value;
  if (x === undefined || !Number.isFinite(x)) return false;
  return t.op === '>=' ? x >= t.value : t.op === '<=' ? x <= t.value : x < t.value;
}

export const targetText = (t) => (t ? `${t.op} ${t.value}${t.of === 'ratio' ? 'x' : ''}` : '-');
