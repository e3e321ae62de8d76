// The driver-adapter traps, each shown on the stock @prisma/adapter-pg (characterisation: if one
// of these starts failing after a version bump, upstream fixed it and the workaround may go)
// and fixed in ours.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PrismaPg } from '@prisma/adapter-pg';

import { createPgMigrationAdapterFactory, loadDriverAdapterUtils } from '../src/pg-adapter.mjs';
import { parsePostgresUrl, searchPathOption } from '../src/url.mjs';
import { databaseExists, dbUrl, dropDatabases, sql, uniqueName } from './helpers.mjs';

const db = uniqueName('wdr_pe_adapter');
const url = dbUrl(db, '?schema=wdr_adapter&connection_limit=3');
const q = (text, args = []) => ({
  sql: text,
  args,
  argTypes: args.map(() => ({ scalarType: 'string', arity: 'scalar' })),
});
const FUNCTION_SQL = `CREATE OR REPLACE FUNCTION add_one(i int) RETURNS int AS $$
BEGIN
  RETURN i + 1;
END;
$$ LANGUAGE plpgsql;
CREATE TABLE t (id int);`;

describe('pg adapter for the wasm schema engine', { concurrency: false }, () => {
  before(async () => {
    await dropDatabases([db]);
    await sql('postgres', `CREATE DATABASE "${db}"`);
    await sql(db, 'CREATE SCHEMA wdr_adapter');
  });
  after(() => dropDatabases([db]));

  test('url parsing strips Prisma-only parameters and keeps the schema', () => {
    const p = parsePostgresUrl(url);
    assert.equal(p.schema, 'wdr_adapter');
    assert.equal(p.database, db);
    assert.equal(p.poolConfig.max, 3);
    assert.doesNotMatch(p.poolConfig.connectionString, /schema=|connection_limit/);
    assert.equal(parsePostgresUrl(dbUrl(db)).schema, 'public');
    assert.equal(searchPathOption('my schema'), '-c search_path="my\\ schema"');
  });

  test('"char" catalog columns: stock adapter rejects them, ours returns Character (like native)', async () => {
    const stock = await new PrismaPg({ connectionString: dbUrl(db) }).connect();
    try {
      await assert.rejects(
        stock.queryRaw(q(`SELECT relkind FROM pg_class WHERE relname = 'pg_class'`)),
        (e) => e.cause?.kind === 'UnsupportedNativeDataType',
      );
    } finally {
      await stock.dispose();
    }
    const factory = createPgMigrationAdapterFactory({ url });
    const ours = await factory.connect();
    try {
      const { ColumnTypeEnum } = loadDriverAdapterUtils();
      const r = await ours.queryRaw(
        q(
          `SELECT c.relkind, c.relname, ARRAY[c.relname, 'x'::name] AS names, c.relnamespace::regnamespace AS ns FROM pg_class c WHERE c.relname = $1`,
          ['pg_class'],
        ),
      );
      // "char" -> Character (the schema describer reads it with get_char and panics on Text),
      // name -> Text, name[] -> TextArray, regnamespace -> Text
      assert.deepEqual(r.columnTypes, [ColumnTypeEnum.Character, ColumnTypeEnum.Text, ColumnTypeEnum.TextArray, ColumnTypeEnum.Text]);
      assert.deepEqual(r.rows, [['r', 'pg_class', ['pg_class', 'x'], 'pg_catalog']]);
      // also inside transactions (a PoolClient, not the Pool)
      const tx = await ours.startTransaction();
      const r2 = await tx.queryRaw(q(`SELECT contype, conname FROM pg_constraint LIMIT 1`));
      assert.deepEqual(r2.columnTypes, [ColumnTypeEnum.Character, ColumnTypeEnum.Text]);
      await tx.executeRaw(q('COMMIT'));
      await tx.commit();
    } finally {
      await factory.disposeAll();
    }
  });

  test('executeScript: stock adapter splits $$ bodies on ";", ours runs the script as one query', async () => {
    const stock = await new PrismaPg({ connectionString: dbUrl(db) }).connect();
    try {
      await assert.rejects(stock.executeScript(FUNCTION_SQL.replaceAll('add_one', 'stock_add_one')), /dollar-quoted|syntax/);
    } finally {
      await stock.dispose();
    }
    const factory = createPgMigrationAdapterFactory({ url });
    const ours = await factory.connect();
    try {
      await ours.executeScript(FUNCTION_SQL);
      const r = await sql(db, 'SELECT wdr_adapter.add_one(41) AS v');
      assert.equal(r.rows[0].v, 42);
      // search_path = the URL schema, so unqualified objects land there
      assert.equal((await sql(db, `SELECT to_regclass('wdr_adapter.t') IS NOT NULL AS ok`)).rows[0].ok, true);
      assert.equal((await sql(db, `SELECT to_regclass('public.t') IS NULL AS ok`)).rows[0].ok, true);
      // all-or-nothing, like a migration applied by the native engine
      await assert.rejects(
        ours.executeScript('CREATE TABLE partial (id int); CREATE TABLE broken (id no_such_type);'),
        (e) => e.cause?.code === '42704',
      );
      assert.equal((await sql(db, `SELECT to_regclass('wdr_adapter.partial') IS NULL AS ok`)).rows[0].ok, true);
    } finally {
      await factory.disposeAll();
    }
  });

  test('shadow database: stock adapter connects to the MAIN database, ours to a separate one it drops', async () => {
    const stockFactory = new PrismaPg({ connectionString: dbUrl(db) });
    const stockShadow = await stockFactory.connectToShadowDb();
    try {
      const r = await stockShadow.queryRaw(q('SELECT current_database()'));
      assert.equal(r.rows[0][0], db, 'stock adapter bug: its "shadow" connection is the main database');
    } finally {
      await stockShadow.dispose();
    }

    const factory = createPgMigrationAdapterFactory({ url });
    const shadow = await factory.connectToShadowDb();
    const r = await shadow.queryRaw(
      q(`SELECT current_database(), current_setting('search_path'), EXISTS(SELECT 1 FROM pg_namespace WHERE nspname = 'wdr_adapter')`),
    );
    const [name, searchPath, schemaExists] = r.rows[0];
    assert.notEqual(name, db);
    assert.match(name, /^prisma_migrate_shadow_db_/);
    assert.equal(searchPath, '"wdr_adapter"');
    assert.equal(schemaExists, true);
    assert.equal(shadow.getConnectionInfo().schemaName, 'wdr_adapter');
    assert.equal(await databaseExists(name), true);
    await shadow.dispose();
    assert.equal(await databaseExists(name), false, 'temporary shadow database dropped on dispose');
    await factory.disposeAll();
  });

  test('explicit shadowDatabaseUrl is reset before use and must differ from the main database', async () => {
    const shadowDb = uniqueName('wdr_pe_shadow');
    await sql('postgres', `CREATE DATABASE "${shadowDb}"`);
    try {
      await sql(shadowDb, 'CREATE SCHEMA wdr_adapter; CREATE TABLE wdr_adapter.leftover (id int)');
      const factory = createPgMigrationAdapterFactory({ url, shadowDatabaseUrl: dbUrl(shadowDb) });
      const shadow = await factory.connectToShadowDb();
      const r = await shadow.queryRaw(q(`SELECT current_database(), to_regclass('wdr_adapter.leftover') IS NULL`));
      assert.deepEqual(r.rows[0], [shadowDb, true]);
      await shadow.dispose();
      assert.equal(await databaseExists(shadowDb), true, 'a configured shadow database is kept');
      await factory.disposeAll();

      const same = createPgMigrationAdapterFactory({ url, shadowDatabaseUrl: url });
      await assert.rejects(same.connectToShadowDb(), /same as the main database/);
    } finally {
      await dropDatabases([shadowDb]);
    }
  });
});
