// End-to-end: the real Prisma CLI, driven through `wdr-prisma` with the Wasm shim forced,
// against a real PostgreSQL, in a throwaway project using a non-public schema (`?schema=`).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  assertShimsExited,
  databaseExists,
  dbUrl,
  dropDatabases,
  prisma,
  readLog,
  scratchProject,
  sql,
  uniqueName,
  writeConfig,
} from './helpers.mjs';

const SCHEMA = 'wdr_app';
const devDb = uniqueName('wdr_pe_dev');
const deployDb = uniqueName('wdr_pe_deploy');
const brokenDb = uniqueName('wdr_pe_broken');
const existingDb = uniqueName('wdr_pe_existing');

const PRISMA_SCHEMA = `generator client {
  provider = "prisma-client"
  output   = "../generated"
}

datasource db {
  provider = "postgresql"
}

enum Role {
  USER
  ADMIN
}

model User {
  id    Int     @id @default(autoincrement())
  email String  @unique
  role  Role    @default(USER)
  posts Post[]
}

model Post {
  id       Int    @id @default(autoincrement())
  title    String
  authorId Int
  author   User   @relation(fields: [authorId], references: [id])

  @@index([authorId])
}
`;

const TOUCH_SQL = `
-- Hand-written: a plpgsql function with a $$ body (and ; inside it) plus a trigger.
CREATE OR REPLACE FUNCTION "touch_updated_at"() RETURNS trigger AS $$
BEGIN
  NEW."updatedAt" := now();
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER "User_touch_updated_at" BEFORE UPDATE ON "User"
  FOR EACH ROW EXECUTE FUNCTION "touch_updated_at"();

-- A CHECK constraint: the schema describer reads pg_constraint.contype ("char") for it.
ALTER TABLE "User" ADD CONSTRAINT "User_email_not_blank" CHECK (email <> '');
`;

let project;

function ok(result, what) {
  assert.equal(
    result.code,
    0,
    `${what} exited with ${result.code} (${result.signal ?? 'no signal'})\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`,
  );
}

function migrationDirs() {
  return fs
    .readdirSync(path.join(project.dir, 'prisma', 'migrations'))
    .filter((n) => fs.statSync(path.join(project.dir, 'prisma', 'migrations', n)).isDirectory())
    .sort();
}

async function tablesIn(db, schema) {
  const r = await sql(db, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema]);
  return r.rows.map((x) => x.table_name);
}

describe('prisma CLI through the wasm schema engine shim', { concurrency: false }, () => {
  before(async () => {
    await dropDatabases([devDb, deployDb, brokenDb, existingDb]);
    project = scratchProject({ url: dbUrl(devDb, `?schema=${SCHEMA}`), schema: PRISMA_SCHEMA });
  });

  after(async () => {
    await dropDatabases([devDb, deployDb, brokenDb, existingDb]);
    if (project && !process.env.WDR_TEST_KEEP) fs.rmSync(project.dir, { recursive: true, force: true });
  });

  test('prisma generate', { timeout: 120_000 }, async () => {
    const r = await prisma(['generate'], { cwd: project.dir, logFile: project.logFile });
    ok(r, 'prisma generate');
    assert.ok(fs.existsSync(path.join(project.dir, 'generated', 'client.ts')), 'generated/client.ts exists');
  });

  test('migrate diff --from-empty --to-schema --script works without a database', { timeout: 120_000 }, async (t) => {
    assert.equal(await databaseExists(devDb), false);
    const r = await prisma(['migrate', 'diff', '--from-empty', '--to-schema', 'prisma/schema.prisma', '--script'], {
      cwd: project.dir,
      logFile: project.logFile,
    });
    ok(r, 'migrate diff');
    t.diagnostic(`migrate diff took ${r.ms}ms`);
    assert.match(r.stdout, /CREATE SCHEMA IF NOT EXISTS "wdr_app";/);
    assert.match(r.stdout, /CREATE TYPE "Role" AS ENUM \('USER', 'ADMIN'\);/);
    assert.match(r.stdout, /CREATE TABLE "User" \(/);
    assert.match(r.stdout, /ALTER TABLE "Post" ADD CONSTRAINT "Post_authorId_fkey" FOREIGN KEY/);
    assert.equal(await databaseExists(devDb), false, 'offline diff must not create the database');
    const loaded = readLog(project.logFile).find((l) => /^schema engine \S+ loaded from/.test(l.fields.message));
    t.diagnostic(loaded?.fields.message ?? 'no engine load logged');
    await assertShimsExited(project.logFile);
  });

  test('migrate dev --name init creates + applies a migration, using a separate shadow database', { timeout: 180_000 }, async (t) => {
    const r = await prisma(['migrate', 'dev', '--name', 'init'], { cwd: project.dir, logFile: project.logFile });
    ok(r, 'migrate dev --name init');
    t.diagnostic(`migrate dev --name init took ${r.ms}ms`);
    assert.match(r.stdout, /PostgreSQL database .* created/);
    const dirs = migrationDirs();
    assert.equal(dirs.length, 1);
    assert.match(dirs[0], /^\d{14}_init$/);
    const script = fs.readFileSync(path.join(project.dir, 'prisma', 'migrations', dirs[0], 'migration.sql'), 'utf8');
    assert.match(script, /CREATE TABLE "Post"/);

    assert.deepEqual(await tablesIn(devDb, SCHEMA), ['Post', 'User', '_prisma_migrations']);
    assert.deepEqual(await tablesIn(devDb, 'public'), [], 'nothing may land in public');

    const log = readLog(project.logFile);
    const created = log.map((l) => /created shadow database (\S+)/.exec(l.fields.message)?.[1]).filter(Boolean);
    const dropped = log.map((l) => /dropped shadow database (\S+)/.exec(l.fields.message)?.[1]).filter(Boolean);
    assert.ok(created.length > 0, 'a shadow database was used');
    for (const name of created) {
      assert.notEqual(name, devDb);
      assert.ok(dropped.includes(name), `shadow database ${name} was dropped`);
      assert.equal(await databaseExists(name), false);
    }
    await assertShimsExited(project.logFile);
  });

  test('second migration with a plpgsql $$ function, a trigger and a CHECK constraint', { timeout: 240_000 }, async (t) => {
    const schemaFile = path.join(project.dir, 'prisma', 'schema.prisma');
    fs.writeFileSync(
      schemaFile,
      fs
        .readFileSync(schemaFile, 'utf8')
        .replace('  role  Role    @default(USER)\n', '  role  Role    @default(USER)\n  updatedAt DateTime @default(now())\n'),
    );
    const created = await prisma(['migrate', 'dev', '--create-only', '--name', 'touch'], {
      cwd: project.dir,
      logFile: project.logFile,
    });
    ok(created, 'migrate dev --create-only');
    const touchDir = migrationDirs().find((d) => d.endsWith('_touch'));
    assert.ok(touchDir, 'touch migration created');
    fs.appendFileSync(path.join(project.dir, 'prisma', 'migrations', touchDir, 'migration.sql'), TOUCH_SQL);

    const applied = await prisma(['migrate', 'dev'], { cwd: project.dir, logFile: project.logFile });
    ok(applied, 'migrate dev (apply touch)');
    t.diagnostic(`migrate dev (apply) took ${applied.ms}ms`);
    assert.match(applied.stdout, /_touch/);

    const fn = await sql(
      devDb,
      `SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = 'touch_updated_at'`,
    );
    assert.deepEqual(fn.rows, [{ nspname: SCHEMA }]);
    // The trigger really works:
    await sql(devDb, `INSERT INTO ${SCHEMA}."User"(email, "updatedAt") VALUES ('a@example.com', '2000-01-01')`);
    await sql(devDb, `UPDATE ${SCHEMA}."User" SET email = 'b@example.com'`);
    const row = await sql(devDb, `SELECT "updatedAt" > '2001-01-01' AS touched FROM ${SCHEMA}."User"`);
    assert.equal(row.rows[0].touched, true);

    // Nothing left to do: no new migration, history consistent.
    const again = await prisma(['migrate', 'dev', '--name', 'noop'], { cwd: project.dir, logFile: project.logFile });
    ok(again, 'migrate dev (no changes)');
    assert.match(again.stdout, /Already in sync|in sync/);
    assert.equal(migrationDirs().length, 2);
    await assertShimsExited(project.logFile);
  });

  test('migrate diff --from-migrations (shadow database) matches the schema', { timeout: 120_000 }, async () => {
    const r = await prisma(
      ['migrate', 'diff', '--from-migrations', 'prisma/migrations', '--to-schema', 'prisma/schema.prisma', '--script'],
      {
        cwd: project.dir,
        logFile: project.logFile,
      },
    );
    ok(r, 'migrate diff --from-migrations');
    assert.match(r.stdout, /This is an empty migration/);
    await assertShimsExited(project.logFile);
  });

  test('db pull --print introspects the schema (catalog "char" columns)', { timeout: 120_000 }, async () => {
    const r = await prisma(['db', 'pull', '--print'], { cwd: project.dir, logFile: project.logFile });
    ok(r, 'db pull --print');
    assert.match(r.stdout, /model User \{/);
    assert.match(r.stdout, /role\s+Role\s+@default\(USER\)/);
    assert.match(r.stdout, /enum Role \{/);
  });

  test('migrate deploy on a fresh database, then migrate status', { timeout: 180_000 }, async (t) => {
    writeConfig(project.dir, 'deploy.config.ts', { url: dbUrl(deployDb, `?schema=${SCHEMA}`) });
    const r = await prisma(['migrate', 'deploy', '--config', 'deploy.config.ts'], {
      cwd: project.dir,
      logFile: project.logFile,
    });
    ok(r, 'migrate deploy');
    t.diagnostic(`migrate deploy (fresh database, 2 migrations) took ${r.ms}ms`);
    assert.match(r.stdout, /All migrations have been successfully applied/);
    assert.deepEqual(await tablesIn(deployDb, SCHEMA), ['Post', 'User', '_prisma_migrations']);
    const fn = await sql(
      deployDb,
      `SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = 'touch_updated_at' AND n.nspname = $1`,
      [SCHEMA],
    );
    assert.equal(fn.rows[0].n, 1);
    const trg = await sql(deployDb, `SELECT count(*)::int AS n FROM pg_trigger WHERE tgname = 'User_touch_updated_at'`);
    assert.equal(trg.rows[0].n, 1);
    await assert.rejects(sql(deployDb, `INSERT INTO ${SCHEMA}."User"(email) VALUES ('')`), /User_email_not_blank/);
    const hist = await sql(deployDb, `SELECT migration_name FROM ${SCHEMA}._prisma_migrations WHERE finished_at IS NOT NULL ORDER BY 1`);
    assert.deepEqual(
      hist.rows.map((x) => x.migration_name),
      migrationDirs(),
    );

    const noop = await prisma(['migrate', 'deploy', '--config', 'deploy.config.ts'], {
      cwd: project.dir,
      logFile: project.logFile,
    });
    ok(noop, 'migrate deploy (nothing pending)');
    t.diagnostic(`migrate deploy (nothing pending) took ${noop.ms}ms`);
    assert.match(noop.stdout, /No pending migrations to apply/);

    const status = await prisma(['migrate', 'status', '--config', 'deploy.config.ts'], {
      cwd: project.dir,
      logFile: project.logFile,
    });
    ok(status, 'migrate status');
    assert.match(status.stdout, /Database schema is up to date!/);
    await assertShimsExited(project.logFile);
  });

  test('migrate deploy into an existing empty database creates the schema', { timeout: 120_000 }, async () => {
    await sql('postgres', `CREATE DATABASE "${existingDb}"`);
    writeConfig(project.dir, 'existing.config.ts', { url: dbUrl(existingDb, `?schema=${SCHEMA}`) });
    const r = await prisma(['migrate', 'deploy', '--config', 'existing.config.ts'], {
      cwd: project.dir,
      logFile: project.logFile,
    });
    ok(r, 'migrate deploy (existing database)');
    assert.doesNotMatch(r.stdout, /database .* created/);
    assert.deepEqual(await tablesIn(existingDb, SCHEMA), ['Post', 'User', '_prisma_migrations']);
    await assertShimsExited(project.logFile);
  });

  test('a failing migration is atomic and reported as P3018; migrate status then fails', { timeout: 180_000 }, async () => {
    writeConfig(project.dir, 'broken.config.ts', { url: dbUrl(brokenDb, `?schema=${SCHEMA}`) });
    const bad = path.join(project.dir, 'prisma', 'migrations', '29990101000000_broken');
    fs.mkdirSync(bad);
    fs.writeFileSync(path.join(bad, 'migration.sql'), 'CREATE TABLE "half_done" (id int);\nCREATE TABLE "bad" (id no_such_type);\n');
    try {
      const r = await prisma(['migrate', 'deploy', '--config', 'broken.config.ts'], {
        cwd: project.dir,
        logFile: project.logFile,
      });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr + r.stdout, /P3018/);
      assert.match(r.stderr + r.stdout, /Migration name: 29990101000000_broken/);
      assert.match(r.stderr + r.stdout, /type "no_such_type" does not exist/);
      assert.deepEqual(
        await tablesIn(brokenDb, SCHEMA),
        ['Post', 'User', '_prisma_migrations'],
        'first statement rolled back with the failing one',
      );
      const status = await prisma(['migrate', 'status', '--config', 'broken.config.ts'], {
        cwd: project.dir,
        logFile: project.logFile,
      });
      assert.notEqual(status.code, 0);
      assert.match(status.stdout + status.stderr, /29990101000000_broken/);
    } finally {
      fs.rmSync(bad, { recursive: true, force: true });
    }
    await assertShimsExited(project.logFile);
  });

  test('the CLI only used RPC methods the shim implements', () => {
    const methods = new Set(
      readLog(project.logFile)
        .map((l) => l.fields.rpc_method)
        .filter(Boolean),
    );
    for (const m of [
      'applyMigrations',
      'createMigration',
      'devDiagnostic',
      'diagnoseMigrationHistory',
      'diff',
      'evaluateDataLoss',
      'introspect',
    ]) {
      assert.ok(methods.has(m), `${m} was exercised (${[...methods].join(', ')})`);
    }
  });
});
