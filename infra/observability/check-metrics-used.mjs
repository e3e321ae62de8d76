#!/usr/bin/env node
// Every metric the services register is read by an alert rule (alerts.yaml) or a dashboard panel
// (dashboard.json), or it is not registered at all: a series nobody looks at costs scrape and
// storage and suggests a watch that does not exist. Exit 1 and one line per unread metric otherwise.
// Run by ./dev test inside check_alert_rules (and on its own: node infra/observability/check-metrics-used.mjs).
//
// Registered names are read from the source (no service needs to run), the way the kit names them
// (packages/kit/src/metrics.ts): in apps/<service>/src, `metrics.counter|gauge|histogram('<name>'`
// is `<service with _>_<name>` and `metrics.shared.counter|gauge|histogram('<name>'` is `wdr_<name>`;
// in packages/kit/src every metric is shared (`${SHARED_PREFIX}_<name>` or a 'wdr_…' constant), and
// a per-service call there fails the check (its name would depend on the caller). prom-client's
// default metrics (process_*, nodejs_*) are not counted. A call whose name is not a string literal
// fails the check too: it could not be audited. A histogram is read through _bucket, _count or _sum.
//
// The other way round, every name under the fleet's prefixes (wdr_, gateway_, fetch_orchestrator_, ...)
// that a rule or panel reads must be registered: a rename that forgets a reader fails here.
//
// Negative controls (each must come out as stated, or the check fails): a metric registered by a
// made-up gateway source is reported unread; without the dashboard, a metric only a panel reads is
// reported unread; a per-service call inside the kit is refused; a panel reading an old per-service
// name (gateway_http_requests_total) is reported.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.ts$/.test(entry) && !/\.(test|e2e\.test)\.ts$/.test(entry) && !/\.d\.ts$/.test(entry)) out.push(p);
  }
  return out;
}

/** [{ file, owner: '<service>' | 'kit', text }] of every non-test TypeScript source that can register metrics. */
function codeSources() {
  const list = [];
  for (const app of readdirSync(join(repo, 'apps'))) {
    const src = join(repo, 'apps', app, 'src');
    try {
      statSync(src);
    } catch {
      continue;
    }
    for (const f of sourceFiles(src)) list.push({ file: relative(repo, f), owner: app, text: readFileSync(f, 'utf8') });
  }
  for (const f of sourceFiles(join(repo, 'packages', 'kit', 'src'))) {
    list.push({ file: relative(repo, f), owner: 'kit', text: readFileSync(f, 'utf8') });
  }
  return list;
}

const CALL = /\.(shared\s*\.\s*)?(counter|gauge|histogram)\(\s*(['"`])?([A-Za-z0-9_${}.]*)/g;

/** Map name -> { kind, where } of every registered metric; problems for calls that cannot be audited. */
function registered(sources) {
  const metrics = new Map();
  const problems = [];
  const add = (name, kind, where) => {
    if (!metrics.has(name)) metrics.set(name, { kind, where });
  };
  for (const { file, owner, text } of sources) {
    for (const m of text.matchAll(CALL)) {
      const line = text.slice(0, m.index).split('\n').length;
      const where = `${file}:${line}`;
      const [, shared, kind, quote, name] = m;
      if (quote !== "'" && quote !== '"') {
        problems.push(`${where}: metrics.${shared ? 'shared.' : ''}${kind}(...) without a string literal name: cannot be audited`);
        continue;
      }
      if (owner === 'kit' && !shared) {
        problems.push(
          `${where}: the kit registers the per-service metric '${name}' (use metrics.shared: its name must not depend on the caller)`,
        );
        continue;
      }
      add(`${shared ? 'wdr' : owner.replace(/-/g, '_')}_${name}`, kind, where);
    }
    if (owner === 'kit') {
      for (const m of text.matchAll(/new (Counter|Gauge|Histogram)\b/g)) {
        const line = text.slice(0, m.index).split('\n').length;
        // Directly built metrics of the kit are named by a SHARED_PREFIX template or a 'wdr_' constant in the same file.
        if (!/\$\{SHARED_PREFIX\}_[a-z_]+`|'wdr_[a-z_]+'/.test(text))
          problems.push(`${file}:${line}: new ${m[1]} with a name this check cannot read`);
      }
      for (const m of text.matchAll(/`\$\{SHARED_PREFIX\}_([a-z0-9_]+)`/g)) {
        const line = text.slice(0, m.index).split('\n').length;
        add(`wdr_${m[1]}`, /histogram|duration_seconds$/.test(m[1]) ? 'histogram' : 'metric', `${file}:${line}`);
      }
      for (const m of text.matchAll(/_METRIC = '(wdr_[a-z0-9_]+)'/g)) add(m[1], 'metric', file);
    }
  }
  return { metrics, problems };
}

/** The PromQL of every rule (`expr: |` blocks and one-line exprs) of alerts.yaml, plain line scanning. */
function ruleExprs(text) {
  const exprs = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)expr:\s*(.*)$/.exec(lines[i]);
    if (!m) continue;
    if (m[2] !== '|' && m[2] !== '|-' && m[2] !== '>') {
      exprs.push(m[2]);
      continue;
    }
    const block = [];
    for (let j = i + 1; j < lines.length && (lines[j].trim() === '' || lines[j].search(/\S/) > m[1].length); j++) block.push(lines[j]);
    exprs.push(block.join('\n'));
  }
  return exprs;
}

/** Every `expr` and query variable of the dashboard. */
function dashboardExprs(dashboard) {
  const out = [];
  const walk = (o) => {
    if (Array.isArray(o)) return o.forEach(walk);
    if (!o || typeof o !== 'object') return;
    if (typeof o.expr === 'string') out.push(o.expr);
    if (typeof o.definition === 'string') out.push(o.definition);
    for (const v of Object.values(o)) walk(v);
  };
  walk(dashboard);
  return out;
}

function readTokens(exprs) {
  const tokens = new Set();
  // Label values and strings are not metric names.
  for (const e of exprs) for (const t of e.replace(/"(?:[^"\\]|\\.)*"/g, '""').matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) tokens.add(t[0]);
  return tokens;
}

function unread(metrics, tokens) {
  const out = [];
  for (const [name, { where }] of metrics) {
    const forms = [name, `${name}_bucket`, `${name}_count`, `${name}_sum`];
    if (!forms.some((f) => tokens.has(f))) out.push({ name, where });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

const alerts = readFileSync(join(here, 'alerts.yaml'), 'utf8');
const dashboard = JSON.parse(readFileSync(join(here, 'dashboard.json'), 'utf8'));
const sources = codeSources();
const { metrics, problems } = registered(sources);
const tokens = readTokens([...ruleExprs(alerts), ...dashboardExprs(dashboard)]);
const missing = unread(metrics, tokens);

/** Names a rule or panel reads under the fleet's prefixes that no service registers (a stale name after a rename). */
const OWN_PREFIX = /^(wdr|gateway|fetch_orchestrator|billing_ledger|browser_renderer|recipe_extractor|webhook_dispatcher)_/;
// Label names that share the prefixes (never metric names).
const LABELS = new Set(['wdr_service']);
function unregistered(metrics, tokens) {
  const known = new Set([...metrics.keys()].flatMap((n) => [n, `${n}_bucket`, `${n}_count`, `${n}_sum`]));
  return [...tokens].filter((t) => OWN_PREFIX.test(t) && !known.has(t) && !LABELS.has(t)).sort();
}
const stale = unregistered(metrics, tokens);

const failures = [...problems];
for (const { name, where } of missing)
  failures.push(`${name} (registered at ${where}) is read by no rule in alerts.yaml and no dashboard panel`);
for (const name of stale) failures.push(`${name} is read by a rule or panel but registered by no service (renamed or removed?)`);

// Negative controls.
const controls = [];
{
  const fake = { file: 'apps/gateway/src/control.ts', owner: 'gateway', text: "m.counter('audit_control_total', 'x', []);" };
  const r = registered([...sources, fake]);
  const u = unread(r.metrics, tokens).map((x) => x.name);
  controls.push(['a gateway metric nothing reads is reported', u.includes('gateway_audit_control_total')]);
}
{
  const panelOnly = [...metrics.keys()].find((n) => {
    const forms = [n, `${n}_bucket`, `${n}_count`, `${n}_sum`];
    const ruleTokens = readTokens(ruleExprs(alerts));
    return !forms.some((f) => ruleTokens.has(f)) && forms.some((f) => tokens.has(f));
  });
  const u = unread(metrics, readTokens(ruleExprs(alerts))).map((x) => x.name);
  controls.push([
    `without the dashboard, ${panelOnly ?? '(no panel-only metric)'} is reported`,
    panelOnly !== undefined && u.includes(panelOnly),
  ]);
}
{
  const fake = { file: 'packages/kit/src/control.ts', owner: 'kit', text: "metrics.gauge('control_gauge', 'x', []);" };
  controls.push(['a per-service metric in the kit is refused', registered([fake]).problems.length === 1]);
}
{
  const t = new Set([...tokens, 'gateway_http_requests_total']);
  controls.push([
    'a panel reading the old per-service name gateway_http_requests_total is reported',
    unregistered(metrics, t).includes('gateway_http_requests_total'),
  ]);
}
for (const [what, ok] of controls) if (!ok) failures.push(`negative control failed: ${what}`);

if (failures.length > 0) {
  for (const f of failures) console.log(`FAILED: ${f}`);
  console.log(
    `${metrics.size} metrics registered, ${missing.length} unread, ${stale.length} read but not registered, ${problems.length} not auditable`,
  );
  process.exit(1);
}
console.log(
  `${metrics.size} metrics registered by the services, each read by a rule or a dashboard panel, every name read registered; ${controls.length} negative controls held`,
);
