// A stand-in for Prisma's native `schema-engine` binary, driving the WebAssembly build of the
// schema engine through @prisma/adapter-pg. It speaks the same protocol as the binary as far
// as the Prisma CLI uses it:
//
//   schema-engine --version
//   schema-engine [--datamodels <file>]... [--datasource <json>] [--enabled-preview-features a,b]
//                 [--extension-types <json>]            -> JSON-RPC 2.0, one message per line,
//                                                           on stdin/stdout; exits when stdin closes
//   schema-engine --datasource <json> cli <command>     -> one-shot commands:
//                 can-connect-to-database | create-database | drop-database
//
// stdout carries only protocol data; all logging goes to stderr as JSON lines in the shape the
// CLI parses ({ level, fields: { message, error_code? }, target }).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

import pg from 'pg';

import { buildPoolConfig, createPgMigrationAdapterFactory, lastScriptError, loadDriverAdapterUtils } from './pg-adapter.mjs';
import { displayLocation, parsePostgresUrl, quoteIdent, withDatabase } from './url.mjs';
import { loadSchemaEngineWasm } from './wasm.mjs';

const DEBUG = /(^|,)\s*(wdr:prisma-engine|wdr:\*|\*)\s*(,|$)/.test(process.env.DEBUG ?? '') || process.env.WDR_PRISMA_ENGINE_DEBUG === '1';

// ---------------------------------------------------------------------------------------------
// logging (stderr only)

const LOG_FILE = process.env.WDR_PRISMA_ENGINE_LOG_FILE;

/** Synchronous, complete write to a file descriptor (handles partial writes and EAGAIN). */
function writeAll(fd, text) {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // pipe full: let the reader drain
    }
  }
}

function writeLog(level, message, fields = {}, target = 'wdr_prisma_engine', { stderr = true } = {}) {
  const line = JSON.stringify({
    timestamp: new Date().toISOString(),
    pid: process.pid,
    level,
    fields: { message, ...fields },
    target,
  });
  if (LOG_FILE) {
    try {
      fs.appendFileSync(LOG_FILE, line + '\n');
    } catch {
      // ignore
    }
  }
  if (!stderr) return;
  try {
    writeAll(2, line + '\n');
  } catch {
    // stderr gone: nothing we can do
  }
}
/** Log to stderr (JSON line). DEBUG lines only go out with DEBUG=wdr:prisma-engine; they always go to the log file. */
export const log = (level, message, fields) => {
  writeLog(level, message, fields, undefined, { stderr: level !== 'DEBUG' || DEBUG });
};

function guardStdout() {
  // Libraries must never write to stdout: it is the JSON-RPC channel.
  const fmt = (args) => args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.stack : JSON.stringify(a))).join(' ');
  console.log = (...a) => log('INFO', fmt(a));
  console.info = (...a) => log('INFO', fmt(a));
  console.debug = (...a) => log('DEBUG', fmt(a));
  console.warn = (...a) => log('WARN', fmt(a));
  console.error = (...a) => log('ERROR', fmt(a));
  // Node prints process warnings as plain text on stderr, which the CLI may try to parse as
  // JSON in `cli` mode; turn them into JSON log lines instead.
  process.removeAllListeners('warning');
  process.on('warning', (w) => log('WARN', `${w.name}: ${w.message}`));
}

// ---------------------------------------------------------------------------------------------
// argv

export function parseArgs(argv) {
  const out = {
    datamodels: [],
    datasource: undefined,
    previewFeatures: [],
    extensionTypes: undefined,
    cli: undefined,
    version: false,
    help: false,
    unknown: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`missing value for ${a}`);
      return argv[++i];
    };
    const eq = a.indexOf('=');
    const [flag, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    const value = () => (inline !== undefined ? inline : next());
    switch (flag) {
      case '--version':
      case '-V':
        out.version = true;
        break;
      case '--help':
      case '-h':
        out.help = true;
        break;
      case '--datamodels':
      case '-d':
        out.datamodels.push(value());
        break;
      case '--datasource':
        out.datasource = JSON.parse(value());
        break;
      case '--enabled-preview-features':
        out.previewFeatures.push(...value().split(',').filter(Boolean));
        break;
      case '--extension-types':
        out.extensionTypes = JSON.parse(value());
        break;
      case 'cli':
        out.cli = argv.slice(i + 1);
        i = argv.length;
        break;
      default:
        out.unknown.push(a);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// errors in the shapes the CLI understands

const KNOWN_ERROR = 'An error happened. Check the data field for details.';

function errorPayload(err, errorRegistry) {
  // Errors raised in our JS adapter code travel through the engine as { kind: 'GenericJs', id }.
  const genericId = err?.cause?.kind === 'GenericJs' ? err.cause.id : err?.kind === 'GenericJs' ? err.id : undefined;
  if (genericId !== undefined && errorRegistry) {
    const original = errorRegistry.consumeError(genericId)?.error;
    if (original) err = original;
  }
  if (isWasmPanic(err)) {
    // The CLI shows `error.data.error.message ?? error.message` for panics.
    const message = globalThis.PRISMA_WASM_PANIC_REGISTRY?.get?.() || String(err?.message ?? err);
    return {
      code: 4466,
      message,
      data: { is_panic: true, message, backtrace: err?.stack ?? null, error: { message } },
    };
  }
  const message = String(err?.message ?? err);
  const data = { is_panic: false, message };
  if (typeof err?.code === 'string' && /^P\d{4}$/.test(err.code)) {
    data.error_code = err.code;
    if (err.meta !== undefined) data.meta = err.meta;
  } else {
    data.backtrace = null;
  }
  return { code: 4466, message: KNOWN_ERROR, data };
}

function isWasmPanic(err) {
  return err?.name === 'RuntimeError' || err instanceof WebAssembly.RuntimeError;
}

/**
 * The Wasm engine reports a failing migration script as a bare SchemaConnectorError ("external
 * connector error ... apply_script with migration_name=..."); the native engine reports P3018
 * with the database error code. Rebuild the native shape so CI logs look the same.
 */
function migrationFailedError(e) {
  const message = String(e?.message ?? '');
  const m = /apply_script\s+with migration_name="([^"]+)"/.exec(message);
  if (!m || e?.code) return e;
  const dbErr = lastScriptError.error;
  const detail = message
    .replace(/^external connector error\s*/, '')
    .replace(/\n\s+0: [\s\S]*$/, '')
    .replace(/^Error querying the database: /, '');
  const lines = [
    'A migration failed to apply. New migrations cannot be applied before the error is recovered from. Read more about how to resolve migration issues in a production database: https://pris.ly/d/migrate-resolve',
    '',
    `Migration name: ${m[1]}`,
    '',
  ];
  if (dbErr?.code) lines.push(`Database error code: ${dbErr.code}`, '');
  lines.push('Database error:', dbErr?.message ? `ERROR: ${dbErr.message}` : detail);
  if (dbErr?.position) lines.push(`Position: ${dbErr.position}`);
  return new UserFacingError('P3018', lines.join('\n'), {
    migration_name: m[1],
    database_error_code: dbErr?.code ?? null,
    database_error: detail,
  });
}

class UserFacingError extends Error {
  constructor(code, message, meta) {
    super(message);
    this.code = code;
    this.meta = meta;
  }
}

/** Map connection errors to the P1xxx errors the native engine reports. */
function connectionError(e, parsed) {
  const loc = displayLocation(parsed);
  switch (e?.code) {
    case '3D000':
      return new UserFacingError('P1003', `Database \`${parsed.database}\` does not exist on the database server at \`${loc}\`.`, {
        database_name: parsed.database,
        database_host: parsed.host,
        database_port: parsed.port,
      });
    case '28P01':
    case '28000':
      return new UserFacingError(
        'P1000',
        `Authentication failed against database server at \`${parsed.host}\`, the provided database credentials for \`${parsed.user}\` are not valid.\n\nPlease make sure to provide valid database credentials for the database server at \`${parsed.host}\`.`,
        { database_user: parsed.user, database_host: parsed.host },
      );
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'ETIMEDOUT':
    case 'EAI_AGAIN':
      return new UserFacingError(
        'P1001',
        `Can't reach database server at \`${loc}\`\n\nPlease make sure your database server is running at \`${loc}\`.`,
        {
          database_host: parsed.host,
          database_port: parsed.port,
        },
      );
    default:
      if (/timeout/i.test(e?.message ?? '')) {
        return new UserFacingError('P1002', `The database server at \`${loc}\` was reached but timed out.\n\nPlease try again.`, {
          database_host: parsed.host,
          database_port: parsed.port,
        });
      }
      return e;
  }
}

function dbError(e) {
  if (!e?.code || !/^[0-9A-Z]{5}$/.test(e.code)) return e;
  const lines = [`Database error code: ${e.code}`, '', 'Database error:', `ERROR: ${e.message}`];
  if (e.position) lines.push(`Position: ${e.position}`);
  if (e.detail) lines.push(`DETAIL: ${e.detail}`);
  return new Error(lines.join('\n'));
}

// ---------------------------------------------------------------------------------------------
// operations the shim implements itself with node-postgres

async function withClient(url, fn) {
  const parsed = parsePostgresUrl(url);
  const { config } = buildPoolConfig(url);
  const client = new pg.Client(config);
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    throw connectionError(e, parsed);
  }
  try {
    return await fn(client, parsed);
  } finally {
    await client.end().catch(() => {});
  }
}

async function canConnect(url) {
  await withClient(url, (c) => c.query('SELECT 1'));
}

async function adminUrls(url) {
  // The native engine connects to the `postgres` database (then `template1`) to create or drop.
  return [withDatabase(url, 'postgres'), withDatabase(url, 'template1')];
}

async function createDatabase(url) {
  const parsed = parsePostgresUrl(url);
  let lastError;
  for (const admin of await adminUrls(url)) {
    try {
      await withClient(admin, async (c) => {
        try {
          await c.query(`CREATE DATABASE ${quoteIdent(parsed.database)}`);
        } catch (e) {
          if (e.code !== '42P04') throw dbError(e); // 42P04: already exists
        }
      });
      lastError = undefined;
      break;
    } catch (e) {
      lastError = e;
    }
  }
  if (lastError) throw lastError;
  if (parsed.schema !== 'public') {
    await withClient(url, (c) => c.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(parsed.schema)}`));
  }
  return parsed.database;
}

async function dropDatabase(url) {
  const parsed = parsePostgresUrl(url);
  await withClient(withDatabase(url, 'postgres'), async (c) => {
    try {
      await c.query(`DROP DATABASE ${quoteIdent(parsed.database)}`);
    } catch (e) {
      throw dbError(e);
    }
  });
}

async function dbExecute(params, datasource) {
  const type = params?.datasourceType ?? {};
  const url = type.tag === 'url' ? type.url : datasource?.url;
  if (!url) throw new Error('dbExecute: no datasource URL available');
  await withClient(url, async (c) => {
    try {
      await c.query(params.script); // one simple-protocol query, like the native engine
    } catch (e) {
      throw dbError(e);
    }
  });
  return {};
}

// ---------------------------------------------------------------------------------------------
// `cli` mode

async function runCli(args, datasource) {
  const [command] = args;
  // The CLI drops the first stderr line before parsing the rest as JSON (the native binary
  // starts with a banner), so always emit one.
  log('INFO', `Starting schema engine CLI (wasm shim) ${command ?? ''}`.trim());
  const url = datasource?.url;
  try {
    switch (command) {
      case 'can-connect-to-database':
        await canConnect(url);
        log('INFO', 'Connection successful');
        return 0;
      case 'create-database': {
        const name = await createDatabase(url);
        log('INFO', `Database '${name}' was successfully created.`);
        return 0;
      }
      case 'drop-database':
        await dropDatabase(url);
        log('INFO', 'The database was successfully dropped.');
        return 0;
      default:
        throw new Error(`Unknown cli command: ${command}`);
    }
  } catch (e) {
    const fields = {};
    if (typeof e?.code === 'string' && /^P\d{4}$/.test(e.code)) fields.error_code = e.code;
    writeLog('ERROR', String(e?.message ?? e), fields, 'schema_engine::logger');
    return 1;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC mode

const ENGINE_METHODS = {
  applyMigrations: 'applyMigrations',
  createMigration: 'createMigration',
  debugPanic: 'debugPanic',
  devDiagnostic: 'devDiagnostic',
  diagnoseMigrationHistory: 'diagnoseMigrationHistory',
  diff: 'diff',
  ensureConnectionValidity: 'ensureConnectionValidity',
  evaluateDataLoss: 'evaluateDataLoss',
  getDatabaseVersion: 'version',
  introspect: 'introspect',
  introspectSql: 'introspectSql',
  markMigrationApplied: 'markMigrationApplied',
  markMigrationRolledBack: 'markMigrationRolledBack',
  reset: 'reset',
  schemaPush: 'schemaPush',
};

/** Diff sources the native engine handles without any database connection. */
function isOfflineDiffTarget(target) {
  return target?.tag === 'empty' || target?.tag === 'schemaDatamodel';
}

const NEEDS_SHADOW_CACHE = /shadow DB must be provided through an external factory/;

/**
 * In the Wasm engine, `evaluateDataLoss` and `createMigration` get no shadow-database factory:
 * they can only read the schema of the migration history from the engine's in-memory
 * MigrationSchemaCache, which `devDiagnostic` / `diagnoseMigrationHistory` fill for the
 * migrations applied to the database. When `migrate dev` has just applied new migrations the
 * cache misses and the engine fails with "PostgreSQL shadow DB must be provided through an
 * external factory". The native engine would spin up a shadow database there; we do the
 * equivalent: run diagnoseMigrationHistory (which replays the - now fully applied - history on a
 * shadow database and caches the result), then retry once.
 */
async function callWithWarmMigrationCache(engine, name, input) {
  try {
    return await engine[name](input);
  } catch (e) {
    const retriable = (name === 'evaluateDataLoss' || name === 'createMigration') && input?.migrationsList;
    if (!retriable || !NEEDS_SHADOW_CACHE.test(String(e?.message))) throw e;
    log('DEBUG', `${name}: migration schema cache miss, warming it through diagnoseMigrationHistory`);
    await engine.diagnoseMigrationHistory({
      migrationsList: input.migrationsList,
      optInToShadowDatabase: true,
      filters: input.filters ?? { externalTables: [], externalEnums: [] },
    });
    return await engine[name](input);
  }
}

function send(msg) {
  writeAll(1, JSON.stringify(msg) + '\n');
}

export async function runRpc(opts) {
  const { datamodels, datasource, previewFeatures } = opts;
  const utils = loadDriverAdapterUtils();
  const state = { offline: false };
  const rawFactory = createPgMigrationAdapterFactory({
    url: datasource?.url,
    shadowDatabaseUrl: datasource?.shadowDatabaseUrl,
    state,
    log,
  });
  const factory = utils.bindMigrationAwareSqlAdapterFactory(rawFactory);

  let enginePromise;
  const getEngine = () => {
    enginePromise ??= (async () => {
      const t0 = performance.now();
      const wasm = await loadSchemaEngineWasm({ log });
      const files = datamodels.map((p) => [p, fs.readFileSync(path.resolve(p), 'utf8')]);
      const engine = await wasm.SchemaEngine.new(
        { datamodels: files.length > 0 ? files : undefined },
        (line) => {
          if (DEBUG) writeAll(2, String(line).trimEnd() + '\n');
        },
        factory,
      );
      log(
        'DEBUG',
        `schema engine ${wasm.version} loaded from ${wasm.source} (${wasm.wasmPath}) in ${Math.round(performance.now() - t0)}ms`,
      );
      if (previewFeatures.length) log('DEBUG', `preview features (not forwarded to the wasm engine): ${previewFeatures.join(',')}`);
      return engine;
    })();
    return enginePromise;
  };

  // Requests we send to the CLI (`print`) and wait for.
  let outgoingId = 0;
  const pendingOutgoing = new Map();
  const askCli = (method, params) =>
    new Promise((resolve) => {
      const id = `wdr-${++outgoingId}`;
      pendingOutgoing.set(id, resolve);
      send({ jsonrpc: '2.0', id, method, params });
    });

  let panicked = false;
  let inFlight; // { id, method } of the request being handled
  const handle = async (msg) => {
    const { id, method } = msg;
    const params = msg.params ?? undefined;
    const t0 = performance.now();
    inFlight = { id, method };
    log('DEBUG', `-> ${method}`, { rpc_method: method });
    try {
      let result;
      if (method === 'dbExecute') {
        result = await dbExecute(params, datasource);
      } else if (method === 'createDatabase') {
        const url = params?.datasource?.tag === 'ConnectionString' ? params.datasource.url : datasource?.url;
        result = { databaseName: await createDatabase(url) };
      } else if (method === 'getDatabaseDescription') {
        throw new Error('getDatabaseDescription is not supported by the wasm schema engine');
      } else if (Object.hasOwn(ENGINE_METHODS, method)) {
        const name = ENGINE_METHODS[method];
        let input = params;
        if (method === 'introspect') input = { namespaces: null, ...params };
        // The engine probes the database when it is constructed and at the start of commands;
        // for offline diffs that probe is answered locally (see pg-adapter.mjs).
        state.offline = method === 'diff' && isOfflineDiffTarget(params?.from) && isOfflineDiffTarget(params?.to);
        try {
          const engine = await getEngine();
          result = await callWithWarmMigrationCache(engine, name, input);
        } finally {
          state.offline = false;
        }
        if (method === 'diff') {
          // The wasm engine returns the script; the binary prints it through a `print`
          // request to the CLI, which writes `content + "\n"` to its stdout.
          const { stdout, ...rest } = result ?? {};
          if (stdout) await askCli('print', { content: stdout.replace(/\n$/, '') });
          result = rest;
        } else if (method === 'getDatabaseVersion') {
          result = result ?? null;
        } else if (result === undefined || result === null) {
          result = {};
        }
      } else {
        if (id !== undefined) send({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
        return;
      }
      log('DEBUG', `<- ${method} ok in ${Math.round(performance.now() - t0)}ms`);
      if (id !== undefined) send({ jsonrpc: '2.0', id, result });
    } catch (e) {
      const error = errorPayload(method === 'applyMigrations' ? migrationFailedError(e) : e, factory.errorRegistry);
      log('DEBUG', `<- ${method} failed in ${Math.round(performance.now() - t0)}ms: ${error.data.message}`);
      if (error.data.is_panic) panicked = true;
      if (id !== undefined) send({ jsonrpc: '2.0', id, error });
    } finally {
      inFlight = undefined;
    }
  };

  let shuttingDown;
  const shutdown = (code) => {
    shuttingDown ??= (async () => {
      const timer = setTimeout(() => process.exit(code), 5000);
      timer.unref();
      await rawFactory.disposeAll().catch((e) => log('WARN', `cleanup failed: ${e.message}`));
      process.exit(code);
    })();
    return shuttingDown;
  };

  let queue = Promise.resolve();
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    if (msg.method === undefined && msg.id !== undefined) {
      // response to one of our requests
      const resolve = pendingOutgoing.get(msg.id);
      pendingOutgoing.delete(msg.id);
      resolve?.(msg);
      return;
    }
    queue = queue
      .then(() => handle(msg))
      .then(() => {
        if (panicked) return shutdown(101);
      });
  });
  rl.on('close', () => {
    // The CLI ends stdin when it is done (SchemaEngineCLI.stop()); the wasm engine and the
    // pg pools keep timers/sockets alive, so exit explicitly once in-flight work is done.
    for (const resolve of pendingOutgoing.values()) resolve(undefined);
    queue.then(() => shutdown(panicked ? 101 : 0)).catch((reason) => log('WARN', `unhandled rejection: ${reason?.stack ?? reason}`));
  });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => shutdown(0));

  // A Rust panic inside one of the engine's futures surfaces as an uncaught
  // `RuntimeError: unreachable` from a microtask, not as a rejection of the request's promise.
  // Answer the pending request like the native engine's panic response, clean up (shadow
  // databases), and exit 101 like the binary.
  process.on('uncaughtException', (err) => {
    if (panicked) return;
    panicked = true;
    const error = errorPayload(err, factory.errorRegistry);
    writeLog(
      'ERROR',
      `${isWasmPanic(err) ? 'schema engine panicked' : 'uncaught exception'}: ${error.data.message}`,
      {},
      'schema_engine::logger',
    );
    if (inFlight?.id !== undefined) {
      const message = error.data.message;
      send({
        jsonrpc: '2.0',
        id: inFlight.id,
        error: {
          code: 4466,
          message,
          data: { is_panic: true, message, backtrace: err?.stack ?? null, error: { message } },
        },
      });
    }
    shutdown(101);
  });
  process.on('unhandledRejection', (reason) => log('WARN', `unhandled rejection: ${reason?.stack ?? reason}`));
}

// ---------------------------------------------------------------------------------------------

export async function main(argv = process.argv.slice(2)) {
  guardStdout();
  globalThis.PRISMA_WASM_PANIC_REGISTRY ??= {
    message: '',
    get() {
      return this.message;
    },
    set_message(m) {
      this.message = `RuntimeError: ${m}`;
    },
  };
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    writeLog('ERROR', `invalid arguments: ${e.message}`, {}, 'schema_engine::logger');
    process.exit(1);
  }
  if (opts.unknown.length) log('WARN', `ignoring unknown arguments: ${opts.unknown.join(' ')}`);

  if (opts.help) {
    process.stdout.write(
      'schema-engine (wasm shim, @wdr/prisma-engine)\n\nUSAGE:\n  schema-engine [--datamodels <path>]... [--datasource <json>]\n  schema-engine --datasource <json> cli <can-connect-to-database|create-database|drop-database>\n  schema-engine --version\n',
    );
    process.exit(0);
  }
  if (opts.version) {
    try {
      const wasm = await loadSchemaEngineWasm({ log });
      process.stdout.write(`schema-engine-cli ${wasm.version}\n`);
      process.exit(0);
    } catch (e) {
      writeLog('ERROR', String(e.message), {}, 'schema_engine::logger');
      process.exit(1);
    }
  }
  if (opts.cli) {
    process.exit(await runCli(opts.cli, opts.datasource));
  }
  try {
    await runRpc(opts);
  } catch (e) {
    writeLog('ERROR', String(e?.stack ?? e), {}, 'schema_engine::logger');
    process.exit(1);
  }
}
