#!/usr/bin/env node
// Every alert in alerts.yaml has a runbook that exists and promtool unit tests that show it firing
// and resolving: its `runbook_url` annotation is absolute (<base>/docs/operations.md#<anchor>, the base
// set per installation by the kustomize replacement in kustomization.yaml) and the anchor is a heading of docs/operations.md (GitHub's anchor
// of it), and some test group of tests/*.test.yaml (one `- interval:` item, one set of input series)
// has an alert_rule_test for it with a non-empty exp_alerts and, at a later eval_time, one with
// `exp_alerts: []` (the alert resolved once its input recovered). Exit 1 and one line per gap
// otherwise. Run by ./dev test inside check_alert_rules.
//   node infra/observability/check-coverage.mjs
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
// Plain line scanning (no YAML library: this runs before anything is installed beyond Node).
const alerts = [];
for (const line of readFileSync(join(here, 'alerts.yaml'), 'utf8').split('\n')) {
  const a = /^\s*- alert: (\w+)/.exec(line);
  if (a) alerts.push({ alert: a[1], annotations: {} });
  const r = /^\s*runbook_url: "([^"]*)"/.exec(line);
  if (r && alerts.length) alerts[alerts.length - 1].annotations.runbook = r[1];
}
const slug = (h) =>
  h
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
const anchors = new Set(
  readFileSync(join(repo, 'docs', 'operations.md'), 'utf8')
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) => slug(l.replace(/^#+ /, ''))),
);
// Prometheus durations as promtool reads eval_time: 90s, 45m, 1h30m, 2d.
const UNIT_SECONDS = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
const seconds = (d) => {
  let total = 0;
  const parts = [...d.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.map((p) => p[0]).join('') !== d) throw new Error(`eval_time ${d} is not a duration`);
  for (const p of parts) total += Number(p[1]) * UNIT_SECONDS[p[2]];
  return total;
};
// Per alert: the eval times at which a test expected it firing or not, per test group.
const evals = new Map(); // alert -> [{ group, at, firing }]
for (const f of readdirSync(join(here, 'tests')).filter((f) => f.endsWith('.yaml'))) {
  let group = 0;
  let at;
  let current;
  for (const line of readFileSync(join(here, 'tests', f), 'utf8').split('\n')) {
    if (/^\s*- interval:/.test(line)) group++;
    const t = /^\s*- eval_time: (\S+)/.exec(line);
    if (t) at = seconds(t[1]);
    const n = /^\s*alertname: (\w+)/.exec(line);
    if (n) current = n[1];
    const e = /^\s*exp_alerts:\s*(.*)$/.exec(line);
    if (e && current && at !== undefined) {
      if (!evals.has(current)) evals.set(current, []);
      evals.get(current).push({ group: `${f}#${group}`, at, firing: e[1].trim() !== '[]' });
      current = undefined;
      at = undefined;
    }
  }
}
const fired = new Set();
const resolved = new Set();
for (const [alert, list] of evals) {
  for (const e of list.filter((e) => e.firing)) {
    fired.add(alert);
    if (list.some((later) => later.group === e.group && !later.firing && later.at > e.at)) resolved.add(alert);
  }
}
const gaps = [];
for (const a of alerts) {
  const runbook = a.annotations?.runbook ?? '';
  const m = /^https:\/\/[^#\s]+\/docs\/operations\.md#(.+)$/.exec(runbook);
  if (!m) gaps.push(`${a.alert}: runbook_url annotation "${runbook}" is not https://<base>/docs/operations.md#<anchor>`);
  else if (!anchors.has(m[1])) gaps.push(`${a.alert}: no heading in docs/operations.md for #${m[1]}`);
  if (!fired.has(a.alert)) gaps.push(`${a.alert}: no promtool test expects it to fire (tests/*.test.yaml)`);
  else if (!resolved.has(a.alert))
    gaps.push(`${a.alert}: no promtool test expects it to resolve (exp_alerts: [] at a later eval_time of a test group where it fired)`);
}
const names = new Set(alerts.map((a) => a.alert));
for (const g of gaps) console.log(`FAIL ${g}`);
console.log(
  `${names.size} alerts: ${gaps.length ? `${gaps.length} gaps` : 'each has a runbook section and tests that fire and resolve it'}`,
);
process.exit(gaps.length ? 1 : 0);
