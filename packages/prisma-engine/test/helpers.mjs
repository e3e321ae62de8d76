// Shared helpers for the tests. They need a reachable PostgreSQL server where the user may
// CREATE/DROP DATABASE: WDR_TEST_DATABASE_URL, else WDR_PG_ADMIN_URL (the repo's admin URL),
// else postgresql://postgres@127.0.0.1:5432/postgres.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import pg from 'pg';

import { findPrismaCli } from '../src/index.mjs';

export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SHIM = path.join(PACKAGE_DIR, 'bin', 'schema-engine.mjs');
export const WRAPPER = path.join(PACKAGE_DIR, 'bin', 'prisma.mjs');
export const ADMIN_URL =
  process.env.WDR_TEST_DATABASE_URL ?? process.env.WDR_PG_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function dbUrl(database, params = '') {
  const u = new URL(ADMIN_URL);
  u.pathname = '/' + database;
  u.search = params;
  return u.toString();
}

export function uniqueName(prefix) {
  return `${prefix}_${process.pid}_${randomBytes(3).toString('hex')}`;
}

export async function sql(database, text, values) {
  const client = new pg.Client({ connectionString: dbUrl(database) });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

export async function databaseExists(name) {
  const r = await sql('postgres', 'SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return r.rowCount === 1;
}

export async function dropDatabases(names) {
  for (const name of names) {
    await sql('postgres', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
  }
}

/** Clean environment for the Prisma CLI: no inherited engine overrides, no telemetry. */
export function cliEnv(extra = {}) {
  const env = { ...process.env };
  // Keep WDR_PRISMA_ENGINE_WASM_SOURCE / WDR_PRISMA_SCHEMA_ENGINE_WASM: they select the .wasm under test.
  const strip = /^(PRISMA_|WDR_PRISMA_ENGINE$|WDR_PRISMA_ENGINE_LOG_FILE$|WDR_PRISMA_CLI_DIR$)/;
  for (const k of Object.keys(env)) if (strip.test(k) || k === 'DEBUG') delete env[k];
  return { ...env, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1', ...extra };
}

/**
 * Run a command; resolves when the process has EXITED (not just closed its pipes), rejects
 * if it is still alive after `timeoutMs` (the process is then killed).
 */
export function run(cmd, args, { cwd, env, input, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`${path.basename(cmd)} ${args.join(' ')} did not exit within ${timeoutMs}ms\nstdout:\n${stdout}\nstderr:\n${stderr}`),
      );
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // give the pipes a moment to flush
      setImmediate(() => resolve({ code, signal, stdout, stderr, ms: Math.round(performance.now() - started) }));
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/** `wdr-prisma <args>` in `cwd`, always through the Wasm shim. */
export function prisma(args, { cwd, logFile, env = {}, timeoutMs } = {}) {
  return run(process.execPath, [WRAPPER, ...args], {
    cwd,
    timeoutMs,
    env: cliEnv({ WDR_PRISMA_ENGINE: 'wasm', ...(logFile ? { WDR_PRISMA_ENGINE_LOG_FILE: logFile } : {}), ...env }),
  });
}

export function readLog(logFile) {
  if (!fs.existsSync(logFile)) return [];
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Every shim process that ever logged to `logFile` must be gone (polls up to `ms`). */
export async function assertShimsExited(logFile, ms = 5000) {
  const pids = [...new Set(readLog(logFile).map((l) => l.pid))];
  const deadline = Date.now() + ms;
  for (;;) {
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    if (alive.length === 0) return pids.length;
    if (Date.now() > deadline) throw new Error(`schema engine shim process(es) still running: ${alive.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A throwaway Prisma project under os.tmpdir() that can resolve the installed prisma. */
export function scratchProject({ url, shadowDatabaseUrl, schema }) {
  const cli = findPrismaCli({ from: [PACKAGE_DIR] });
  if (!cli) throw new Error('prisma is not installed (devDependency / peer dependency of @wdr/prisma-engine)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wdr-prisma-engine-'));
  fs.symlinkSync(path.dirname(cli.dir), path.join(dir, 'node_modules'), 'dir');
  fs.mkdirSync(path.join(dir, 'prisma'));
  fs.writeFileSync(path.join(dir, 'prisma', 'schema.prisma'), schema);
  writeConfig(dir, 'prisma.config.ts', { url, shadowDatabaseUrl });
  return { dir, cli, logFile: path.join(dir, 'engine.log') };
}

export function writeConfig(dir, file, { url, shadowDatabaseUrl }) {
  const ds = { url, ...(shadowDatabaseUrl ? { shadowDatabaseUrl } : {}) };
  fs.writeFileSync(
    path.join(dir, file),
    `import { defineConfig } from 'prisma/config'\n\nexport default defineConfig({\n  schema: 'prisma/schema.prisma',\n  datasource: ${JSON.stringify(ds)},\n})\n`,
  );
}
