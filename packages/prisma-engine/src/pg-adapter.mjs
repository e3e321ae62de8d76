// A migration-aware driver adapter factory for the Wasm schema engine, built on
// @prisma/adapter-pg + node-postgres, with the fixes the schema engine needs:
//
//  1. Postgres catalog types that @prisma/adapter-pg rejects with UnsupportedNativeDataType
//     (prisma/orm#27403): `"char"` (pg_class.relkind, pg_constraint.contype, ...) comes back as
//     ColumnTypeEnum.Character, like the native engine sees it; `name[]`, regproc, regclass, ...
//     as `text` / `text[]`. Done in a pg.Client subclass plus a queryRaw wrapper, for pool
//     queries and transactions alike.
//  2. `executeScript` sends the whole script as ONE simple-protocol query on ONE connection,
//     like the native engine (`simple_query`): `$$` bodies survive, and Postgres runs the
//     multi-statement string as one implicit transaction (all-or-nothing), exactly the
//     semantics the native schema engine has when it applies a migration. The stock adapter
//     splits on `;` and runs each piece on whatever pool connection is free.
//  3. Every session gets `search_path` = the URL's `schema` (the native engine does
//     `SET search_path` too), and the adapter is told the schema (`new PrismaPg(cfg, { schema })`).
//  4. The shadow database is a real, separate database: either `shadowDatabaseUrl`
//     (reset before use), or a temporary `prisma_migrate_shadow_db_<uuid>` database that is
//     dropped afterwards. The stock `connectToShadowDb` builds the shadow pool from
//     `{ ...config, database }`, which pg overrides with the database in `connectionString`,
//     so it silently used the main database.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';

import { parsePostgresUrl, quoteIdent, searchPathOption, withDatabase } from './url.mjs';

const require = createRequire(import.meta.url);

/**
 * @prisma/driver-adapter-utils exactly as @prisma/adapter-pg sees it (no separate pin to keep
 * in sync). Used for `bindMigrationAwareSqlAdapterFactory` (what the Wasm engine expects).
 */
export function loadDriverAdapterUtils() {
  const adapterPgEntry = require.resolve('@prisma/adapter-pg');
  return createRequire(adapterPgEntry)('@prisma/driver-adapter-utils');
}

// Type OIDs @prisma/adapter-pg 7.10.x maps to a column type (fieldToColumnType). Every other
// built-in OID (< 16384) makes it throw UnsupportedNativeDataType; we rewrite those to text.
const ADAPTER_SUPPORTED_OIDS = new Set([
  16, 17, 19, 20, 21, 23, 25, 26, 114, 142, 650, 700, 701, 790, 869, 1042, 1043, 1082, 1083, 1114, 1184, 1266, 1560, 1562, 1700, 2950, 3802,
  // arrays
  143, 199, 651, 791, 1000, 1001, 1002, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1028, 1041, 1115, 1182, 1183, 1185, 1231, 1561,
  1563, 2951, 3807,
]);
const FIRST_NORMAL_OBJECT_ID = 16384;
const TEXT_OID = 25;
const TEXT_ARRAY_OID = 1009;
// Arrays of text-like catalog types: name[], int2vector[], regproc[], oidvector[], aclitem[],
// regclass[], regtype[], regprocedure[], regoper[], regoperator[], regnamespace[], regrole[].
const TEXT_LIKE_ARRAY_OIDS = new Set([1003, 1006, 1008, 1013, 1034, 2210, 2211, 2207, 2208, 2209, 4090, 4097]);
const parseTextArray = pg.types.getTypeParser(TEXT_ARRAY_OID, 'text');

function toText(value) {
  if (value === null || value === undefined || typeof value === 'string') return value;
  if (typeof value.toPostgres === 'function') return String(value.toPostgres());
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

// `"char"` (OID 18) must reach the engine as ColumnTypeEnum.Character, as the native engine
// reads it (sql-schema-describer does `row.get_char("constraint_type")` and panics on text).
// No pg OID maps to Character in the adapter, so: the client reports it as text (so the adapter
// accepts it) and remembers the column positions per result, keyed by the `rows` array, which
// the adapter's queryRaw returns as is; queryRaw is then wrapped to restore Character.
const CHAR_OID = 18;
const charColumns = new WeakMap();

function patchResult(result) {
  if (Array.isArray(result)) {
    for (const r of result) patchResult(r);
    return result;
  }
  if (!result || !Array.isArray(result.fields) || !Array.isArray(result.rows)) return result;
  const chars = [];
  result.fields.forEach((field, idx) => {
    const oid = field.dataTypeID;
    if (oid === CHAR_OID) {
      chars.push(idx);
      field.dataTypeID = TEXT_OID;
      return;
    }
    if (oid >= FIRST_NORMAL_OBJECT_ID || ADAPTER_SUPPORTED_OIDS.has(oid)) return;
    const key = result.rowAsArray ? idx : field.name;
    if (TEXT_LIKE_ARRAY_OIDS.has(oid)) {
      field.dataTypeID = TEXT_ARRAY_OID;
      for (const row of result.rows) {
        const v = row[key];
        if (typeof v === 'string') row[key] = parseTextArray(v);
        else if (Array.isArray(v)) row[key] = v.map(toText);
      }
    } else {
      field.dataTypeID = TEXT_OID;
      for (const row of result.rows) row[key] = toText(row[key]);
    }
  });
  if (chars.length > 0) charColumns.set(result.rows, chars);
  return result;
}

function restoreCharColumns(queryable, ColumnTypeEnum) {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const res = await queryRaw(query);
    const chars = res && charColumns.get(res.rows);
    if (chars) for (const i of chars) res.columnTypes[i] = ColumnTypeEnum.Character;
    return res;
  };
  return queryable;
}

/** pg.Client whose results never contain column types @prisma/adapter-pg cannot map. */
export class TextCatalogClient extends pg.Client {
  query(config, values, callback) {
    if (config && typeof config.submit === 'function') return super.query(config, values, callback);
    if (typeof values === 'function') {
      callback = values;
      values = undefined;
    }
    if (typeof callback === 'function') {
      return super.query(config, values, (err, res) => callback(err, err ? res : patchResult(res)));
    }
    return super.query(config, values).then(patchResult);
  }
}

/** Pool config for @prisma/adapter-pg: catalog-safe client + search_path. */
export function buildPoolConfig(url) {
  const parsed = parsePostgresUrl(url);
  const u = new URL(parsed.connectionString);
  // pg lets parameters of the connection string override explicit config, so fold a user
  // `options=` parameter into ours instead of passing both.
  const userOptions = u.searchParams.get('options');
  u.searchParams.delete('options');
  const options = [userOptions, searchPathOption(parsed.schema)].filter(Boolean).join(' ');
  return {
    parsed,
    config: { ...parsed.poolConfig, connectionString: u.toString(), options, Client: TextCatalogClient },
  };
}

/** Run one (possibly multi-statement) SQL string on a short-lived connection. */
export async function runAdminSql(url, sql) {
  const { config } = buildPoolConfig(url);
  const client = new pg.Client(config);
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The last error a migration script raised (pg error with `code`, `position`, ...). */
export const lastScriptError = { error: undefined };

function instrumentAdapter(adapter) {
  const { ColumnTypeEnum } = loadDriverAdapterUtils();
  restoreCharColumns(adapter, ColumnTypeEnum);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (...args) => restoreCharColumns(await startTransaction(...args), ColumnTypeEnum);
  const fail = (error) => {
    // Converts pg errors to DriverAdapterError (the engine maps those to Prisma errors).
    if (typeof adapter.onError === 'function') adapter.onError(error);
    throw error;
  };
  adapter.executeScript = async (script) => {
    const pool = adapter.underlyingDriver();
    let client;
    try {
      client = await pool.connect();
    } catch (e) {
      fail(e);
    }
    let error;
    try {
      // No parameters => simple query protocol => multiple statements in one round trip,
      // executed by Postgres as a single implicit transaction.
      await client.query(script);
    } catch (e) {
      error = e;
      lastScriptError.error = e;
      fail(e);
    } finally {
      // On error, discard the connection: an explicit BEGIN in the script may have left it
      // inside an aborted transaction.
      client.release(error);
    }
  };
  return adapter;
}

// The first query the Wasm engine sends on a connection: schema existence + server version.
// The native engine does not connect at all for diffs between offline sources
// (`--from-empty`, `--to-schema`, ...); the Wasm engine always runs this probe. While
// `state.offline` is set the probe is answered locally, so such diffs work without a database.
const PROBE_RE =
  /^\s*SELECT EXISTS\(SELECT 1 FROM pg_namespace WHERE nspname = \$1\), version\(\), current_setting\('server_version_num'\)/i;
const OFFLINE_SERVER_VERSION = 'PostgreSQL 15.0 (no database: offline diff via @wdr/prisma-engine)';
const OFFLINE_SERVER_VERSION_NUM = 150000;

function offlineProbeResult(ColumnTypeEnum) {
  return {
    columnNames: ['exists', 'version', 'numeric_version'],
    columnTypes: [ColumnTypeEnum.Boolean, ColumnTypeEnum.Text, ColumnTypeEnum.Int32],
    rows: [[true, OFFLINE_SERVER_VERSION, OFFLINE_SERVER_VERSION_NUM]],
  };
}

function offlineAdapter(ColumnTypeEnum, schema) {
  const refuse = async () => {
    throw new Error('No datasource URL is configured (set `datasource.url` in prisma.config.ts); this command needs a database.');
  };
  return {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    async queryRaw(query) {
      if (PROBE_RE.test(query.sql)) return offlineProbeResult(ColumnTypeEnum);
      return refuse();
    },
    executeRaw: refuse,
    executeScript: refuse,
    startTransaction: refuse,
    getConnectionInfo: () => ({ schemaName: schema, supportsRelationJoins: true }),
    async dispose() {},
  };
}

/**
 * @param {{
 *   url?: string,
 *   shadowDatabaseUrl?: string,
 *   state?: { offline: boolean },
 *   log?: (level: string, msg: string) => void,
 * }} opts
 */
export function createPgMigrationAdapterFactory({ url, shadowDatabaseUrl, state = { offline: false }, log = () => {} }) {
  const { ColumnTypeEnum } = loadDriverAdapterUtils();
  const live = new Set(); // adapters not yet disposed
  const shadowDatabases = new Set(); // temp databases not yet dropped

  const track = (adapter, onDispose) => {
    const dispose = adapter.dispose.bind(adapter);
    let disposed;
    adapter.dispose = () => {
      disposed ??= (async () => {
        live.delete(adapter);
        try {
          await dispose();
        } finally {
          if (onDispose) await onDispose();
        }
      })();
      return disposed;
    };
    live.add(adapter);
    return adapter;
  };

  const connectTo = async (connectionUrl, schemaOverride) => {
    const { parsed, config } = buildPoolConfig(connectionUrl);
    const schema = schemaOverride ?? parsed.schema;
    if (schemaOverride && schemaOverride !== parsed.schema) {
      config.options = config.options.replace(searchPathOption(parsed.schema), searchPathOption(schema));
    }
    const factory = new PrismaPg(config, { schema });
    return { adapter: instrumentAdapter(await factory.connect()), parsed, schema };
  };

  const dropDatabase = async (name) => {
    const sql = `DROP DATABASE IF EXISTS ${quoteIdent(name)}`;
    try {
      await runAdminSql(url, `${sql} WITH (FORCE)`);
    } catch {
      await runAdminSql(url, sql); // Postgres < 13
    }
    shadowDatabases.delete(name);
    log('INFO', `dropped shadow database ${name}`);
  };

  return {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',

    async connect() {
      if (!url) return offlineAdapter(ColumnTypeEnum, 'public');
      const { adapter } = await connectTo(url);
      const queryRaw = adapter.queryRaw.bind(adapter);
      adapter.queryRaw = async (query) => {
        if (state.offline && PROBE_RE.test(query.sql)) return offlineProbeResult(ColumnTypeEnum);
        return queryRaw(query);
      };
      return track(adapter);
    },

    async connectToShadowDb() {
      const main = parsePostgresUrl(url); // throws a clear error when no URL is configured
      if (shadowDatabaseUrl) {
        const shadow = parsePostgresUrl(shadowDatabaseUrl);
        const explicitSchema = new URL(shadowDatabaseUrl).searchParams.get('schema');
        const schema = explicitSchema || main.schema;
        if (shadow.host === main.host && shadow.port === main.port && shadow.database === main.database) {
          throw new Error(
            'The shadow database you configured appears to be the same as the main database. Please specify another shadow database.',
          );
        }
        const { adapter } = await connectTo(shadowDatabaseUrl, schema);
        track(adapter);
        // Like the native engine: reset the configured shadow database before using it.
        await adapter.executeScript(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE; CREATE SCHEMA ${quoteIdent(schema)};`);
        log('INFO', `using shadow database ${shadow.database} (schema ${schema}), reset`);
        return adapter;
      }
      const name = `prisma_migrate_shadow_db_${randomUUID()}`;
      await runAdminSql(url, `CREATE DATABASE ${quoteIdent(name)}`);
      shadowDatabases.add(name);
      log('INFO', `created shadow database ${name}`);
      try {
        const { adapter, schema } = await connectTo(withDatabase(url, name));
        // A dispose failure must not fail the command; disposeAll() retries the drop at exit.
        track(adapter, () => dropDatabase(name).catch((e) => log('WARN', `could not drop ${name}: ${e.message}`)));
        // Migrations written before Prisma emitted `CREATE SCHEMA IF NOT EXISTS` rely on the
        // schema existing (search_path points at it), as the native engine guarantees.
        if (schema !== 'public') await adapter.executeScript(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
        return adapter;
      } catch (e) {
        await dropDatabase(name).catch(() => {});
        throw e;
      }
    },

    /** Dispose everything still open and drop leftover temporary shadow databases. */
    async disposeAll() {
      for (const adapter of [...live]) await adapter.dispose().catch(() => {});
      for (const name of [...shadowDatabases]) await dropDatabase(name).catch((e) => log('WARN', `could not drop ${name}: ${e.message}`));
    },
  };
}
