// Parsing of Prisma-style PostgreSQL connection strings into node-postgres pool config.
//
// Prisma URLs carry parameters that node-postgres does not understand (or understands
// differently): `schema` (the Postgres schema Prisma works in; pg ignores it and
// @prisma/adapter-pg ignores it too, it only honours `new PrismaPg(pool, { schema })`),
// `connection_limit`, `pool_timeout`, `connect_timeout`, `socket_timeout`, `pgbouncer`,
// `statement_cache_size`. They are stripped from the connection string handed to pg and
// mapped where it makes sense.

const PRISMA_ONLY_PARAMS = [
  'schema',
  'connection_limit',
  'pool_timeout',
  'connect_timeout',
  'socket_timeout',
  'pgbouncer',
  'statement_cache_size',
  'max_connection_lifetime',
  'max_idle_connection_lifetime',
  'sslaccept',
  'sslidentity',
  'sslpassword',
];

/**
 * @param {string} url postgres:// or postgresql:// URL as written in prisma.config.ts
 * @returns {{
 *   schema: string,
 *   database: string,
 *   host: string,
 *   port: string,
 *   user: string,
 *   connectionString: string,
 *   poolConfig: import('pg').PoolConfig,
 * }}
 */
export function parsePostgresUrl(url) {
  if (typeof url !== 'string' || url.length === 0) {
    throw new Error('No datasource URL was provided (set `datasource.url` in prisma.config.ts).');
  }
  let u;
  try {
    u = new URL(url);
  } catch {
    throw new Error('The datasource URL is not a valid URL.');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new Error(`@wdr/prisma-engine only supports PostgreSQL datasources (got protocol "${u.protocol}").`);
  }
  const params = u.searchParams;
  const schema = params.get('schema') || 'public';
  const connectionLimit = intParam(params.get('connection_limit'));
  const connectTimeout = intParam(params.get('connect_timeout'));
  const socketTimeout = intParam(params.get('socket_timeout'));
  const poolTimeout = intParam(params.get('pool_timeout'));
  for (const p of PRISMA_ONLY_PARAMS) params.delete(p);

  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
  const host = params.get('host') || decodeURIComponent(u.hostname) || 'localhost';
  const port = u.port || '5432';
  const user = decodeURIComponent(u.username);

  /** @type {import('pg').PoolConfig} */
  const poolConfig = { connectionString: u.toString() };
  if (connectionLimit !== undefined && connectionLimit > 0) poolConfig.max = connectionLimit;
  // Prisma's timeouts are in seconds, 0 meaning "no timeout".
  if (connectTimeout !== undefined && connectTimeout > 0) poolConfig.connectionTimeoutMillis = connectTimeout * 1000;
  else if (poolTimeout !== undefined && poolTimeout > 0) poolConfig.connectionTimeoutMillis = poolTimeout * 1000;
  if (socketTimeout !== undefined && socketTimeout > 0) poolConfig.query_timeout = socketTimeout * 1000;

  return { schema, database, host, port, user, connectionString: poolConfig.connectionString, poolConfig };
}

/** Returns `url` with its database (path) replaced by `database`; everything else is kept. */
export function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = '/' + encodeURIComponent(database);
  return u.toString();
}

/** A libpq `options` startup value that sets search_path to `schema` for every session. */
export function searchPathOption(schema) {
  // libpq splits `options` on unescaped whitespace; backslash escapes.
  const value = `search_path=${quoteIdent(schema)}`.replace(/\\/g, '\\\\').replace(/ /g, '\\ ');
  return `-c ${value}`;
}

export function quoteIdent(name) {
  return '"' + String(name).replace(/"/g, '""') + '"';
}

/** host:port for messages, like the native engine prints it. */
export function displayLocation(parsed) {
  return `${parsed.host}:${parsed.port}`;
}

function intParam(v) {
  if (v === null || v === undefined || v === '') return undefined;
  const n = Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : undefined;
}
