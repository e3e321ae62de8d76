// The shim as a process, speaking the native schema-engine protocol directly (no Prisma CLI).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';

import { dbUrl, dropDatabases, run, SHIM, sql, uniqueName } from './helpers.mjs';

const db = uniqueName('wdr_pe_shim');
const missingDb = uniqueName('wdr_pe_missing');

const shim = (args, opts) => run(process.execPath, [SHIM, ...args], { timeoutMs: 30_000, ...opts });

/** A JSON-RPC session with a live shim process. */
function session(args) {
  const child = spawn(process.execPath, [SHIM, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  const waiting = [];
  const lines = [];
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const msg = JSON.parse(line); // stdout must carry nothing but JSON-RPC
      lines.push(msg);
      waiting.shift()?.(msg);
    }
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let id = 0;
  return {
    child,
    exited,
    stderr: () => stderr,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    send(msg) {
      child.stdin.write(JSON.stringify(msg) + '\n');
    },
    request(method, params) {
      const p = this.next();
      this.send({ jsonrpc: '2.0', id: ++id, method, params });
      return p;
    },
  };
}

function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([
    promise,
    new Promise((_, rej) => (t = setTimeout(() => rej(new Error(`${what} did not happen within ${ms}ms`)), ms))),
  ]).finally(() => clearTimeout(t));
}

describe('schema-engine shim process', { concurrency: false }, () => {
  before(async () => {
    await dropDatabases([db, missingDb]);
    await sql('postgres', `CREATE DATABASE "${db}"`);
  });
  after(() => dropDatabases([db, missingDb]));

  test('--version prints the engine commit like the native binary', async () => {
    const r = await shim(['--version']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^schema-engine-cli [0-9a-f]{40}\n$/);
  });

  test('cli can-connect-to-database / create-database use the native exit codes and stderr format', async () => {
    const ds = JSON.stringify({ url: dbUrl(missingDb, '?schema=wdr_cli') });
    const missing = await shim(['--datasource', ds, 'cli', 'can-connect-to-database']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    // The CLI ignores the first stderr line and JSON-parses every other one.
    const lines = missing.stderr
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l));
    const err = lines.find((l) => l.level === 'ERROR' && l.target === 'schema_engine::logger');
    assert.equal(err.fields.error_code, 'P1003');
    assert.match(err.fields.message, new RegExp(`Database \`${missingDb}\` does not exist`));

    const created = await shim(['--datasource', ds, 'cli', 'create-database']);
    assert.equal(created.code, 0, created.stderr);
    const schema = await sql(missingDb, `SELECT 1 FROM pg_namespace WHERE nspname = 'wdr_cli'`);
    assert.equal(schema.rowCount, 1, 'schema from ?schema= created with the database');
    assert.equal((await shim(['--datasource', ds, 'cli', 'can-connect-to-database'])).code, 0);

    const unreachable = await shim([
      '--datasource',
      JSON.stringify({ url: 'postgresql://postgres@127.0.0.1:1/x' }),
      'cli',
      'can-connect-to-database',
    ]);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /"error_code":"P1001"/);
  });

  test(
    'JSON-RPC: requests are answered in order, errors use the native shape, and it exits when stdin closes',
    { timeout: 60_000 },
    async () => {
      const s = session(['--datasource', JSON.stringify({ url: dbUrl(db, '?schema=wdr_rpc') })]);
      const version = await s.request('getDatabaseVersion');
      assert.match(version.result, /^PostgreSQL \d+/);

      const valid = await s.request('ensureConnectionValidity', {
        datasource: { tag: 'ConnectionString', url: dbUrl(db) },
      });
      assert.deepEqual(valid.result, {});

      const exec = await s.request('dbExecute', {
        script:
          'CREATE SCHEMA IF NOT EXISTS wdr_rpc; CREATE FUNCTION wdr_rpc.f() RETURNS int AS $$ BEGIN RETURN 7; END; $$ LANGUAGE plpgsql;',
        datasourceType: { tag: 'url', url: dbUrl(db, '?schema=wdr_rpc') },
      });
      assert.deepEqual(exec.result, {});
      assert.equal((await sql(db, 'SELECT wdr_rpc.f() AS v')).rows[0].v, 7);

      const unknown = await s.request('noSuchMethod', {});
      assert.equal(unknown.error.code, -32601);

      const failing = await s.request('applyMigrations', {
        migrationsList: {
          baseDir: '/nowhere',
          lockfile: { path: 'migration_lock.toml', content: null },
          shadowDbInitScript: '',
          migrationDirectories: [
            {
              path: '20990101000000_x',
              migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: 'SELECT * FROM nope;' } },
            },
          ],
        },
        filters: { externalTables: [], externalEnums: [] },
      });
      assert.equal(failing.error.code, 4466);
      assert.equal(failing.error.data.is_panic, false);
      assert.equal(failing.error.data.error_code, 'P3018');
      assert.match(failing.error.data.message, /relation "nope" does not exist/);

      // diff prints its script through a `print` request to the caller before answering
      const diffParams = {
        from: { tag: 'empty' },
        to: {
          tag: 'schemaDatamodel',
          files: [
            {
              path: 'schema.prisma',
              content: 'datasource db {\n  provider = "postgresql"\n}\nmodel A {\n  id Int @id\n}\n',
            },
          ],
        },
        script: true,
        exitCode: null,
        filters: { externalTables: [], externalEnums: [] },
      };
      const printed = s.request('diff', diffParams);
      const print = await printed;
      assert.equal(print.method, 'print');
      assert.match(print.params.content, /CREATE TABLE "A"/);
      const diffAnswer = s.next();
      s.send({ jsonrpc: '2.0', id: print.id, result: {} });
      assert.deepEqual((await diffAnswer).result, { exitCode: 0 });

      // No SIGTERM: closing stdin alone must end the process, promptly (left alone, the pg
      // pools' idle timers and the wasm engine keep it alive for 10s or more).
      s.child.stdin.end();
      const { code, signal } = await withTimeout(s.exited, 3_000, 'shim exit after stdin closed');
      assert.equal(signal, null);
      assert.equal(code, 0, s.stderr());
    },
  );

  test('a wasm panic is reported with is_panic and exit code 101', { timeout: 30_000 }, async () => {
    const s = session(['--datasource', JSON.stringify({ url: dbUrl(db) })]);
    const r = await s.request('debugPanic');
    assert.equal(r.error.data.is_panic, true);
    assert.match(r.error.data.message, /debugPanic artificial panic/);
    const { code } = await withTimeout(s.exited, 10_000, 'shim exit after panic');
    assert.equal(code, 101);
  });

  test('SIGTERM (what the CLI sends on stop) ends it promptly', { timeout: 30_000 }, async () => {
    const s = session(['--datasource', JSON.stringify({ url: dbUrl(db) })]);
    await s.request('getDatabaseVersion');
    s.child.kill('SIGTERM');
    const { code } = await withTimeout(s.exited, 10_000, 'shim exit after SIGTERM');
    assert.equal(code, 0);
  });
});
