// Public entry of @wdr/prisma-engine: decides which schema engine the Prisma CLI should use.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Absolute path of the Wasm-backed stand-in for the native `schema-engine` binary. */
export const SHIM_PATH = path.resolve(here, '..', 'bin', 'schema-engine.mjs');
export const PACKAGE_DIR = path.resolve(here, '..');

const ENV_VARS = ['PRISMA_SCHEMA_ENGINE_BINARY', 'PRISMA_MIGRATION_ENGINE_BINARY'];
const BINARY_RE = /^schema-engine-[A-Za-z0-9._-]+?(\.exe)?$/;
const NOT_BINARY_RE = /\.(gz|sha256|sig|lock|tmp|part)$/;

function isFile(p) {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Locate the installed `prisma` CLI package. Looks from each of `from` (directories), then the
 * current directory, then this package. Returns `{ dir, bin, version }` or undefined.
 */
export function findPrismaCli({ from = [], cwd = process.cwd(), env = process.env } = {}) {
  const starts = [...from, cwd, PACKAGE_DIR];
  if (env.WDR_PRISMA_CLI_DIR) starts.unshift(null);
  for (const start of starts) {
    try {
      const pkgJson =
        start === null
          ? path.join(env.WDR_PRISMA_CLI_DIR, 'package.json')
          : createRequire(path.join(path.resolve(cwd, start), 'noop.js')).resolve('prisma/package.json');
      const pkg = JSON.parse(fs.readFileSync(pkgJson, 'utf8'));
      const dir = path.dirname(pkgJson);
      const binRel = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.prisma;
      if (!binRel) continue;
      return { dir, bin: path.join(dir, binRel), version: pkg.version };
    } catch {
      // not resolvable from there
    }
  }
  return undefined;
}

/** The engines commit hash the given prisma CLI expects (from @prisma/engines-version). */
export function expectedEnginesHash(prismaDir) {
  try {
    const req = createRequire(path.join(prismaDir, 'package.json'));
    let enginesReq = req;
    try {
      enginesReq = createRequire(req.resolve('@prisma/engines/package.json'));
    } catch {
      // fall back to resolving from prisma itself
    }
    const pkg = JSON.parse(fs.readFileSync(enginesReq.resolve('@prisma/engines-version/package.json'), 'utf8'));
    return pkg.prisma?.enginesVersion;
  } catch {
    return undefined;
  }
}

/** Where the CLI looks for a downloaded engine (same order as the CLI's own lookup). */
export function nativeEngineCandidates(prismaDir) {
  const dirs = [];
  try {
    const req = createRequire(path.join(prismaDir, 'package.json'));
    dirs.push(path.dirname(req.resolve('@prisma/engines/package.json')));
  } catch {
    // @prisma/engines not installed
  }
  dirs.push(prismaDir, path.dirname(prismaDir), path.join(prismaDir, 'runtime'));
  const out = [];
  for (const dir of dirs) {
    let names = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      if (BINARY_RE.test(name) && !NOT_BINARY_RE.test(name) && isFile(path.join(dir, name))) out.push(path.join(dir, name));
    }
  }
  return out;
}

function nativeVersion(binary) {
  try {
    return execFileSync(binary, ['--version'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

function ensureExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    try {
      fs.chmodSync(file, 0o755);
    } catch {
      // read-only install: the CLI will report a spawn error
    }
  }
  return file;
}

/**
 * Pick the schema engine for the Prisma CLI.
 *
 * 1. `PRISMA_SCHEMA_ENGINE_BINARY` (or the deprecated `PRISMA_MIGRATION_ENGINE_BINARY`) already
 *    points to an existing file -> that (kind "native", source "env").
 * 2. The native binary that @prisma/engines' postinstall would have downloaded exists where the
 *    CLI looks for it and answers `--version` with the engines hash this CLI expects ->
 *    that (kind "native", source "download").
 * 3. Otherwise the Wasm shim (kind "wasm", source "shim").
 *
 * `WDR_PRISMA_ENGINE=wasm` (or `{ prefer: 'wasm' }`) forces the shim; `=native` makes a
 * missing native engine an error.
 *
 * @param {{ env?: NodeJS.ProcessEnv, cwd?: string, prismaDir?: string, prefer?: 'auto'|'wasm'|'native' }} [options]
 * @returns {{ kind: 'native'|'wasm', source: 'env'|'download'|'shim', path: string, reason: string }}
 */
export function resolveSchemaEngine({ env = process.env, cwd = process.cwd(), prismaDir, prefer } = {}) {
  prefer ??= env.WDR_PRISMA_ENGINE || 'auto';
  if (!['auto', 'wasm', 'native'].includes(prefer)) throw new Error(`WDR_PRISMA_ENGINE must be auto, wasm or native (got "${prefer}")`);
  const notes = [];
  if (prefer !== 'wasm') {
    for (const name of ENV_VARS) {
      const value = env[name];
      if (!value) continue;
      const p = path.resolve(cwd, value);
      if (isFile(p)) return { kind: 'native', source: 'env', path: p, reason: `${name} points to an existing file` };
      notes.push(`${name}=${value} does not exist`);
    }
    const dir = prismaDir ?? findPrismaCli({ cwd, env })?.dir;
    if (dir) {
      const expected = expectedEnginesHash(dir);
      for (const candidate of nativeEngineCandidates(dir)) {
        const version = nativeVersion(candidate);
        if (version === undefined) {
          notes.push(`${candidate} does not run`);
          continue;
        }
        if (expected && !version.includes(expected)) {
          notes.push(`${candidate} is "${version}", expected ${expected}`);
          continue;
        }
        return { kind: 'native', source: 'download', path: candidate, reason: `downloaded engine (${version})` };
      }
    } else {
      notes.push('prisma CLI not found');
    }
    if (prefer === 'native') throw new Error(`No native schema engine available: ${notes.join('; ') || 'none downloaded'}`);
  }
  return {
    kind: 'wasm',
    source: 'shim',
    path: ensureExecutable(SHIM_PATH),
    reason: prefer === 'wasm' ? 'WDR_PRISMA_ENGINE=wasm' : `no native engine (${notes.join('; ') || 'none downloaded'})`,
  };
}

/** Just the path from resolveSchemaEngine(). */
export function resolveSchemaEnginePath(options) {
  return resolveSchemaEngine(options).path;
}

/**
 * Environment for running the Prisma CLI with the resolved engine.
 * @param {{ env?: NodeJS.ProcessEnv, cwd?: string, prismaDir?: string, prefer?: 'auto'|'wasm'|'native' }} [options]
 */
export function prismaEnv(options = {}) {
  const env = { ...(options.env ?? process.env) };
  const engine = resolveSchemaEngine({ ...options, env });
  env.PRISMA_SCHEMA_ENGINE_BINARY = engine.path;
  delete env.PRISMA_MIGRATION_ENGINE_BINARY; // avoids the CLI's deprecation warning
  if (options.prismaDir) env.WDR_PRISMA_CLI_DIR = options.prismaDir;
  // The shim's shebang is `#!/usr/bin/env node`: make that the node running us.
  env.PATH = [path.dirname(process.execPath), env.PATH].filter(Boolean).join(path.delimiter);
  return { env, engine };
}
