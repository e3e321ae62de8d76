import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrl, PG_ADMIN_URL, SERVICES, templateName, type ServiceName } from './services.js';

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop: () => Promise<void>;
}

/**
 * A clean, fully migrated database for one suite: a copy of the service's template database
 * (migrated once per test run by `wdr-test-templates`), so suites never see each other's rows.
 * `opts.template`: a copy of another template of the service (a bench measuring another build's
 * migrations).
 */
export async function createTestDatabase(service: ServiceName, opts: { template?: string } = {}): Promise<TestDatabase> {
  // The creation time is in the name, so a later run can tell leftovers of crashed runs from live ones.
  const name = `t_${service.replace(/-/g, '_')}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const template = opts.template ?? templateName(service);
  await admin(async (c) => {
    const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (exists.rowCount === 0) {
      throw new Error(`template database ${template} is missing: run \`./dev test\` (or \`npx wdr-test-templates\`) first`);
    }
    await c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  });
  return {
    name,
    url: databaseUrl(name, SERVICES[service].schema),
    drop: () => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}

/** Run SQL against a test database (assertions that look under the service's API). */
export async function withDatabase<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? 'public';
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString(), options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The rows of one query against a test database (withDatabase for the common case). */
export function queryRows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  return withDatabase(url, async (c) => (await c.query(sql, params)).rows as T[]);
}

/** Drop test databases left behind by crashed runs: those created more than `olderThanMs` ago. */
export async function dropStaleTestDatabases(olderThanMs = 3 * 3600_000): Promise<number> {
  return admin(async (c) => {
    const rows = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 't\\_%'");
    let n = 0;
    for (const { datname } of rows.rows) {
      const m = /^t_[a-z_]+_([0-9a-z]{6,10})_[0-9a-f]{8}$/.exec(datname);
      if (!m || Date.now() - parseInt(m[1]!, 36) < olderThanMs) continue;
      await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      n++;
    }
    return n;
  });
}
