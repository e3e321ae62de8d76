#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { databaseUrl, PG_ADMIN_URL, SERVICE_NAMES, SERVICES, templateName } from './services.js';

/**
 * Create and migrate one template database per service and migration set
 * (`wdr_tpl_<service>_<migrations hash>`). Suites clone them, which is much faster than migrating a
 * fresh database per suite. Safe to run repeatedly and from several checkouts at once.
 */
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const client = new pg.Client({ connectionString: PG_ADMIN_URL });
await client.connect();
for (const service of SERVICE_NAMES) {
  const name = templateName(service);
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 1) {
    console.log(`template ${name} is current`);
    continue;
  }
  // Migrate under a temporary name and rename at the end: a half-migrated template is never visible.
  const building = `${name}_building_${process.pid}`;
  await client.query(`CREATE DATABASE "${building}"`);
  const t0 = Date.now();
  const r = spawnSync('npx', ['--no-install', 'wdr-prisma', 'migrate', 'deploy'], {
    cwd: join(repo, 'apps', service),
    env: { ...process.env, DATABASE_URL: databaseUrl(building, SERVICES[service].schema) },
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    console.error(r.stdout, r.stderr);
    await client.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
    await client.end();
    throw new Error(`migrating template ${name} failed`);
  }
  try {
    await client.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
  } catch (err) {
    // Another run built the same template meanwhile: keep theirs.
    await client.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
    if ((err as { code?: string }).code !== '42P04') throw err;
  }
  console.log(`template ${name} migrated in ${Date.now() - t0} ms`);
}
await client.end();
