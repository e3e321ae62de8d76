#!/usr/bin/env node
// Every alert in alerts.yaml has a runbook that exists and a promtool unit test that expects it to
// fire: its `runbook` annotation points at a heading of docs/operations.md (GitHub's anchor of it),
// and some tests/*.test.yaml has an alert_rule_test for it with a non-empty exp_alerts. Exit 1 and
// one line per gap otherwise. Run by ./dev test inside check_alert_rules.
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
  const r = /^\s*runbook: "([^"]*)"/.exec(line);
  if (r && alerts.length) alerts[alerts.length - 1].annotations.runbook = r[1];
}
const slug = (h) => h.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');
const anchors = new Set(readFileSync(join(repo, 'docs', 'operations.md'), 'utf8').split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, ''))));
const fired = new Set();
for (const f of readdirSync(join(here, 'tests')).filter((f) => f.endsWith('.yaml'))) {
  let current;
  for (const line of readFileSync(join(here, 'tests', f), 'utf8').split('\n')) {
    const n = /^\s*alertname: (\w+)/.exec(line);
    if (n) current = n[1];
    const e = /^\s*exp_alerts:\s*(.*)$/.exec(line);
    if (e && current) {
      if (e[1].trim() !== '[]') fired.add(current);
      current = undefined;
    }
  }
}
const gaps = [];
for (const a of alerts) {
  const runbook = a.annotations?.runbook ?? '';
  const m = /^docs\/operations\.md#(.+)$/.exec(runbook);
  if (!m) gaps.push(`${a.alert}: runbook annotation "${runbook}" is not docs/operations.md#<anchor>`);
  else if (!anchors.has(m[1])) gaps.push(`${a.alert}: no heading in docs/operations.md for #${m[1]}`);
  if (!fired.has(a.alert)) gaps.push(`${a.alert}: no promtool test expects it to fire (tests/*.test.yaml)`);
}
const names = new Set(alerts.map((a) => a.alert));
for (const g of gaps) console.log(`FAIL ${g}`);
console.log(`${names.size} alerts: ${gaps.length ? `${gaps.length} gaps` : 'each has a runbook section and a test that fires it'}`);
process.exit(gaps.length ? 1 : 0);
