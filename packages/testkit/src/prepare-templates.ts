#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { databaseUrl, PG_ADMIN_URL, SERVICE_NAMES, SERVICES, templateName } from './services.js';

/**
 * Create and migrate one template database per service (`wdr_tpl_<service>`). Suites clone them,
 * which is much faster than migrating a fresh database per suite. Safe to run repeatedly.
 */
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const client = new pg.Client({ connectionString: PG_ADMIN_URL });
await client.connect();
for (const service of SERVICE_NAMES) {
  const name = templateName(service);
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  const t0 = Date.now();
  const r = spawnSync('npx', ['--no-install', 'wdr-prisma', 'migrate', 'deploy'], {
    cwd: join(repo, 'apps', service),
    env: { ...process.env, DATABASE_URL: databaseUrl(name, SERVICES[service].schema) },
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    console.error(r.stdout, r.stderr);
    await client.end();
    throw new Error(`migrating template ${name} failed`);
  }
  console.log(`template ${name} migrated in ${Date.now() - t0} ms`);
}
await client.end();
