#!/usr/bin/env node
// Prints the plain Prometheus rule groups inside alerts.yaml (a PrometheusRule: the groups are its
// `spec`), which is what `promtool check rules` and `promtool test rules` read. alerts.yaml stays
// the one source the cluster applies (kubectl / kustomize); this only un-wraps it: everything below
// the top-level `spec:` line, dedented by two spaces. Fails if that does not start with `groups:`.
//   node infra/observability/rule-groups.mjs [alerts.yaml] > rules.yaml
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const file = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'alerts.yaml');
const lines = readFileSync(file, 'utf8').split('\n');
const at = lines.indexOf('spec:');
if (at < 0) throw new Error(`${file}: no top-level "spec:" line`);
const body = lines.slice(at + 1);
const bad = body.find((l) => l.trim() !== '' && !l.startsWith('  ') && !l.startsWith('#'));
if (bad !== undefined) throw new Error(`${file}: a top-level key follows spec: (${bad}); keep spec last`);
const groups = body.map((l) => (l.startsWith('  ') ? l.slice(2) : l));
if (!groups.find((l) => l.trim() !== '' && !l.trim().startsWith('#'))?.startsWith('groups:')) {
  throw new Error(`${file}: spec does not start with "groups:"`);
}
process.stdout.write(`# Generated from ${file.split('/').slice(-3).join('/')} by rule-groups.mjs; do not edit.\n${groups.join('\n')}`);
