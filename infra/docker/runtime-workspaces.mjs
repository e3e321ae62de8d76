#!/usr/bin/env node
// Which workspaces a service's image keeps at run time: the service, the workspaces in its
// `dependencies` (not devDependencies), transitively, and @wdr/prisma-engine, whose wdr-prisma
// command runs the migrations from the same image (the "migrate" initContainer). Everything else
// turbo prune brought along to build it (@wdr/testkit, ...) is dev-only.
//
//   node runtime-workspaces.mjs <service> [--root dir]            print the list (JSON)
//   node runtime-workspaces.mjs <service> [--root dir] --apply    also delete the other workspaces
//                                                                   and the links npm made to them
// Used by infra/docker/service.Dockerfile (after `npm prune --omit=dev`) and by
// infra/docker/check-prune.mjs.
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const MIGRATIONS_WORKSPACE = '@wdr/prisma-engine';

/** name -> directory (relative to root) of every workspace under apps/ and packages/ present in root. */
export function workspaces(root) {
  const out = new Map();
  for (const parent of ['apps', 'packages']) {
    const dir = join(root, parent);
    if (!existsSync(dir)) continue;
    for (const d of readdirSync(dir)) {
      const pkg = join(dir, d, 'package.json');
      if (existsSync(pkg)) out.set(JSON.parse(readFileSync(pkg, 'utf8')).name, `${parent}/${d}`);
    }
  }
  return out;
}

/** The workspaces the service needs at run time, sorted. */
export function runtimeWorkspaces(root, service) {
  const all = workspaces(root);
  const start = `@wdr/${service}`;
  if (!all.has(start)) throw new Error(`no workspace ${start} under ${root}`);
  const keep = new Set([start]);
  const queue = [start];
  while (queue.length) {
    const name = queue.shift();
    const pkg = JSON.parse(readFileSync(join(root, all.get(name), 'package.json'), 'utf8'));
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      if (all.has(dep) && !keep.has(dep)) {
        keep.add(dep);
        queue.push(dep);
      }
    }
  }
  if (all.has(MIGRATIONS_WORKSPACE)) keep.add(MIGRATIONS_WORKSPACE);
  return [...keep].sort();
}

function removeDanglingLinks(dir) {
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (!lstatSync(p).isSymbolicLink()) continue;
    try {
      statSync(p);
    } catch {
      rmSync(p, { force: true });
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const service = args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--root');
  const root = args.includes('--root') ? args[args.indexOf('--root') + 1] : process.cwd();
  if (!service) {
    console.error('usage: runtime-workspaces.mjs <service> [--root dir] [--apply]');
    process.exit(2);
  }
  const keep = runtimeWorkspaces(root, service);
  if (args.includes('--apply')) {
    for (const [name, dir] of workspaces(root)) {
      if (!keep.includes(name)) rmSync(join(root, dir), { recursive: true, force: true });
    }
    removeDanglingLinks(join(root, 'node_modules', '@wdr'));
    removeDanglingLinks(join(root, 'node_modules', '.bin'));
  }
  console.log(JSON.stringify(keep));
}
