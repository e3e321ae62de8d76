#!/usr/bin/env node
// Checks, without Docker, the part of infra/docker/service.Dockerfile that decides what an image
// carries. For every service under apps/:
//   1. `turbo prune @wdr/<service> --docker` keeps exactly the workspaces the service builds with
//      (itself and its workspace dependencies and devDependencies, transitively), and no other app;
//   2. the lockfile turbo cut lists no other app and every package in it has the version of the
//      committed package-lock.json (the same check the Dockerfile's prune stage runs);
//   3. the workspaces left at run time (runtime-workspaces.mjs, as the Dockerfile applies it) are
//      the service, its production workspace dependencies and @wdr/prisma-engine (migrations):
//      never @wdr/testkit or another app.
//   node infra/docker/check-prune.mjs [--results file.json] [service ...]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS_WORKSPACE, runtimeWorkspaces, workspaces } from './runtime-workspaces.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const resultsAt = args.indexOf('--results');
const resultsFile = resultsAt >= 0 ? args[resultsAt + 1] : undefined;
const named = args.filter((a, i) => !a.startsWith('--') && i !== resultsAt + 1);
const services = named.length
  ? named
  : readdirSync(join(repo, 'apps'))
      .filter((d) => existsSync(join(repo, 'apps', d, 'package.json')))
      .sort();
const all = workspaces(repo);
const committed = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')).packages;
const turbo = join(repo, 'node_modules', '.bin', 'turbo');

function buildClosure(service) {
  const keep = new Set([`@wdr/${service}`]);
  const queue = [...keep];
  while (queue.length) {
    const pkg = JSON.parse(readFileSync(join(repo, all.get(queue.shift()), 'package.json'), 'utf8'));
    for (const d of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
      if (all.has(d) && !keep.has(d)) {
        keep.add(d);
        queue.push(d);
      }
    }
  }
  return [...keep].sort();
}

let passed = 0;
let failed = 0;
for (const service of services) {
  const problems = [];
  const out = mkdtempSync(join(tmpdir(), `wdr-prune-${service}-`));
  try {
    execFileSync(turbo, ['prune', `@wdr/${service}`, '--docker', '--out-dir', out], {
      cwd: repo,
      stdio: 'pipe',
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
    });
    const kept = JSON.parse(readFileSync(join(out, 'json', 'package.json'), 'utf8'))
      .workspaces.map((dir) => JSON.parse(readFileSync(join(out, 'json', dir, 'package.json'), 'utf8')).name)
      .sort();
    const want = buildClosure(service);
    if (JSON.stringify(kept) !== JSON.stringify(want)) problems.push(`pruned workspaces ${kept.join(', ')}; expected ${want.join(', ')}`);
    const apps = readdirSync(join(out, 'full', 'apps'));
    if (apps.join() !== service) problems.push(`pruned tree has apps/${apps.join(', apps/')}`);
    const cut = JSON.parse(readFileSync(join(out, 'package-lock.json'), 'utf8')).packages;
    const otherApps = Object.keys(cut).filter((k) => k.startsWith('apps/') && k.split('/')[1] !== service);
    if (otherApps.length) problems.push(`pruned lockfile lists ${otherApps.join(', ')}`);
    // Workspace entries (apps/x, packages/x) carry no version; everything else must match.
    const drift = Object.keys(cut).filter(
      (k) => k !== '' && !/^(apps|packages)\/[^/]+$/.test(k) && cut[k].version !== committed[k]?.version,
    );
    if (drift.length)
      problems.push(
        `pruned lockfile differs from package-lock.json: ${drift.slice(0, 5).join(', ')}${drift.length > 5 ? ` (+${drift.length - 5})` : ''}`,
      );
    const runtime = runtimeWorkspaces(join(out, 'full'), service);
    const prodOnly = runtime.filter((n) => n !== `@wdr/${service}` && n !== MIGRATIONS_WORKSPACE);
    for (const n of runtime) {
      if (n === '@wdr/testkit' || (n.startsWith('@wdr/') && all.get(n)?.startsWith('apps/') && n !== `@wdr/${service}`))
        problems.push(`runtime keeps ${n}`);
    }
    const dropped = kept.filter((n) => !runtime.includes(n));
    const lockSize = Object.keys(cut).length;
    if (problems.length === 0) {
      passed++;
      console.log(
        `ok   ${service}: builds with ${kept.length} workspaces, ships ${runtime.length} (${prodOnly.join(', ')} + ${MIGRATIONS_WORKSPACE}; drops ${dropped.join(', ') || 'none'}); lockfile ${lockSize} of ${Object.keys(committed).length} entries`,
      );
    } else {
      failed++;
      console.log(`FAIL ${service}`);
      for (const p of problems) console.log(`     - ${p}`);
    }
  } catch (e) {
    failed++;
    console.log(`FAIL ${service}: ${(e.stderr?.toString() || e.message).trim().split('\n').slice(-3).join(' | ')}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
console.log(`${passed} passed, ${failed} failed`);
if (resultsFile)
  writeFileSync(
    resultsFile,
    `${JSON.stringify({ name: 'service-images (turbo prune)', passed, failed, skipped: 0, suitesFailed: failed })}\n`,
  );
process.exit(failed ? 1 : 0);
