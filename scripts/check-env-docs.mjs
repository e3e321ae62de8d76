#!/usr/bin/env node
// Fails when a default documented in docs/operations.md differs from the default in the env schema
// (each service's src/env.ts, zod; read from the built apps/<service>/dist/env.js).
//
// What counts as a documented default (the convention docs/operations.md follows):
//   - a table whose header has a `default` column: the first column names the variables (backticked,
//     several separated by commas), the default column their values in the same order;
//   - prose: "`NAME` (default V" or "`NAME`, default V".
// V is compared through the schema itself: schema.parse(V) must equal schema.parse(undefined), so
// coercion and transforms apply to both sides (`16` = 16, `10 MiB` = 10485760, `15 s` for a *_MS
// variable = 15000, `true`, `empty` = parse(''), `unset` = no default, `required` = parse fails).
// An optional variable (no schema default) may have its default where the code reads it: a
// `NAME ?? V` in some src/ file counts. Values that name no value ("from `wdr-config`", "the shipped GeoLite2 country file") are listed
// as not checkable and do not fail. A documented variable no schema knows fails (stale docs), and so
// does a variable some schema has that is documented with no default anywhere (missing docs).
// One test per service schema plus one for the document's unknown names.
//   node scripts/check-env-docs.mjs [--results file.json] [--doc path]
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const resultsFile = opt('--results');
const docPath = opt('--doc') ?? join(repo, 'docs', 'operations.md');

// ------------------------------------------------------------------ schemas
const services = readdirSync(join(repo, 'apps'))
  .filter((d) => existsSync(join(repo, 'apps', d, 'src', 'env.ts')))
  .sort();
const schemas = new Map(); // service -> { NAME: zodType }
for (const s of services) {
  const dist = join(repo, 'apps', s, 'dist', 'env.js');
  if (!existsSync(dist)) {
    console.error(`check-env-docs: ${dist} missing: build first (npx turbo run build)`);
    process.exit(1);
  }
  const mod = await import(pathToFileURL(dist).href);
  const shape = Object.values(mod).find(
    (v) => v && typeof v === 'object' && Object.values(v).some((t) => typeof t?.safeParse === 'function'),
  );
  if (!shape) throw new Error(`${dist}: no exported env shape`);
  schemas.set(s, shape);
}

// ------------------------------------------------------------------ documented defaults
const doc = readFileSync(docPath, 'utf8');
const lines = doc.split('\n');
const documented = []; // { name, value, line }
const cells = (l) =>
  l
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
for (let i = 0; i < lines.length; i++) {
  if (!lines[i].trim().startsWith('|') || !lines[i + 1]?.trim().match(/^\|[\s|:-]+\|$/)) continue;
  const header = cells(lines[i]).map((c) => c.toLowerCase());
  const col = header.indexOf('default');
  if (col < 0) continue;
  for (let j = i + 2; j < lines.length && lines[j].trim().startsWith('|'); j++) {
    const row = cells(lines[j]);
    const names = [...row[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);
    if (!names.length || row[col] === undefined) continue;
    const values = names.length > 1 ? row[col].split(/,\s+/) : [row[col]];
    names.forEach((name, k) => documented.push({ name, value: (values[k] ?? values[0]).trim(), line: j + 1 }));
  }
}
lines.forEach((l, i) => {
  if (l.trim().startsWith('|')) return;
  // The value ends at ; ) : or a comma that is not a thousands separator, or where the prose goes on.
  for (const m of l.matchAll(
    /`([A-Z][A-Z0-9_]+)`(?: \(|, )default ((?:[^;),:]|,(?=\d))+?)(?=[;):]|,(?!\d)| (?:fetches|of|per|in|for|and)\b|$)/g,
  )) {
    documented.push({ name: m[1], value: m[2].trim(), line: i + 1 });
  }
});

// ------------------------------------------------------------------ compare
const UNITS = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, KB: 1e3, MB: 1e6, GB: 1e9 };
const TIME = { ms: 1, s: 1000, min: 60_000, h: 3_600_000 };
const SUFFIX_MS = { _MS: 1, _SECONDS: 1000, _HOURS: 3_600_000 };
function candidates(name, value) {
  const v = value.replace(/^`|`$/g, '');
  if (/^(unset|none)$/i.test(v)) return { unset: true };
  if (/^empty$/i.test(v)) return { raw: '' };
  if (/^required$/i.test(v)) return { required: true };
  const num = v.match(/^(-?[\d,._]+)\s*([A-Za-z%]+)?$/);
  if (num) {
    const n = Number(num[1].replace(/[,_]/g, ''));
    const unit = num[2];
    if (Number.isNaN(n)) return value.startsWith('`') ? { raw: v } : undefined; // 127.0.0.1
    if (!unit) return { raw: String(n) };
    if (UNITS[unit]) return { raw: String(n * UNITS[unit]) };
    const suffix = Object.keys(SUFFIX_MS).find((s) => name.endsWith(s));
    if (TIME[unit] && suffix) return { raw: String((n * TIME[unit]) / SUFFIX_MS[suffix]) };
    return undefined;
  }
  if (/^(true|false)$/.test(v)) return { raw: v };
  if (value.startsWith('`') && value.endsWith('`')) return { raw: v };
  return undefined;
}

const sources = [];
for (const dir of [join(repo, 'packages'), join(repo, 'apps')]) {
  for (const e of readdirSync(dir, { recursive: true })) {
    const f = String(e);
    if (
      f.endsWith('.ts') &&
      !f.endsWith('.test.ts') &&
      !f.endsWith('.d.ts') &&
      /(^|\/)src\//.test(f) &&
      !f.includes('node_modules') &&
      !f.includes('generated')
    )
      sources.push(readFileSync(join(dir, f), 'utf8'));
  }
}
function codeDefault(name, raw) {
  const re = new RegExp(`\\b${name}\\s*\\?\\?\\s*['"]?${raw.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"]?(?![\\w.])`);
  return sources.some((src) => re.test(src));
}

function check(schema, d) {
  const want = candidates(d.name, d.value);
  if (!want) return { skipped: true };
  const def = schema.safeParse(undefined);
  if (want.required) return def.success ? { problem: `documented as required, the schema defaults to ${JSON.stringify(def.data)}` } : {};
  if (!def.success) return { problem: `documented default ${d.value}, the schema has none (required)` };
  if (want.unset)
    return def.data === undefined ? {} : { problem: `documented as unset, the schema defaults to ${JSON.stringify(def.data)}` };
  // An optional variable whose default the code applies where it reads it (`env.NAME ?? 1`).
  if (def.data === undefined && codeDefault(d.name, want.raw)) return {};
  const doc = schema.safeParse(want.raw);
  if (!doc.success) return { problem: `documented default ${d.value} is not a valid value (${doc.error.issues[0]?.message})` };
  return isDeepStrictEqual(doc.data, def.data)
    ? {}
    : { problem: `documented default ${d.value}, the schema's is ${JSON.stringify(def.data)}` };
}

let passed = 0;
let failed = 0;
const skipped = [];
const unknown = documented.filter((d) => ![...schemas.values()].some((sh) => d.name in sh));
for (const [service, shape] of schemas) {
  const mine = documented.filter((d) => d.name in shape);
  const problems = [];
  let checked = 0;
  for (const d of mine) {
    // A variable several services share (PORT, TARGET_ALLOWLIST, ...) with different defaults is
    // checked against each; it passes for this service if it matches here or matches another
    // service's schema (the doc then speaks of that one).
    const r = check(shape[d.name], d);
    if (r.skipped) {
      if (!skipped.some((x) => x.line === d.line && x.name === d.name)) skipped.push(d);
      continue;
    }
    checked++;
    if (r.problem) {
      const elsewhere = [...schemas].some(([s, sh]) => s !== service && d.name in sh && !check(sh[d.name], d).problem);
      if (!elsewhere) problems.push(`docs/operations.md:${d.line} \`${d.name}\`: ${r.problem}`);
    }
  }
  if (problems.length) {
    failed++;
    console.log(`FAIL ${service}: ${problems.length} of ${checked} documented defaults differ`);
    for (const p of problems) console.log(`     - ${p}`);
  } else {
    passed++;
    console.log(`ok   ${service}: ${checked} documented defaults match src/env.ts`);
  }
}
// Every variable a service reads (each key of its env schema) has a documented default, in one of
// the forms above: a new variable without a line in docs/operations.md fails.
const undocumented = new Map(); // name -> services
for (const [service, shape] of schemas)
  for (const name of Object.keys(shape))
    if (!documented.some((d) => d.name === name)) undocumented.set(name, [...(undocumented.get(name) ?? []), service]);
if (undocumented.size) {
  failed++;
  console.log(`FAIL variables read by a service with no documented default (${undocumented.size}):`);
  for (const [name, ss] of undocumented) console.log(`     - \`${name}\` (${ss.join(', ')})`);
} else {
  passed++;
  console.log(
    `ok   every variable the services read has a documented default (${new Set([...schemas.values()].flatMap((sh) => Object.keys(sh))).size} names)`,
  );
}
if (unknown.length) {
  failed++;
  console.log(`FAIL documented variables no env schema knows:`);
  for (const d of unknown) console.log(`     - docs/operations.md:${d.line} \`${d.name}\``);
} else {
  passed++;
  console.log(`ok   every documented variable is in an env schema (${new Set(documented.map((d) => d.name)).size} names)`);
}
if (skipped.length)
  console.log(`     not checkable (no value to compare): ${skipped.map((d) => `${d.name} "${d.value}" (line ${d.line})`).join('; ')}`);
console.log(`${passed} passed, ${failed} failed`);
if (resultsFile)
  writeFileSync(resultsFile, `${JSON.stringify({ name: 'docs-env-defaults', passed, failed, skipped: 0, suitesFailed: failed })}\n`);
process.exit(failed ? 1 : 0);
