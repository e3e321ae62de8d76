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
 */
export async function createTestDatabase(service: ServiceName): Promise<TestDatabase> {
  const name = `t_${service.replace(/-/g, '_')}_${randomBytes(5).toString('hex')}`;
  const template = templateName(service);
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

/** Drop test databases left behind by crashed runs (older than an hour). */
export async function dropStaleTestDatabases(): Promise<number> {
  return admin(async (c) => {
    const rows = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 't\\_%'");
    let n = 0;
    for (const { datname } of rows.rows) {
      if (!/^t_[a-z_]+_[0-9a-f]{10}$/.test(datname)) continue;
      await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      n++;
    }
    return n;
  });
}
