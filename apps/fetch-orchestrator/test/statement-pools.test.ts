import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from '@jest/globals';
import { identityEnvOf } from '@wdr/testkit';
import { createOrchestratorDeps, type OrchestratorDeps } from '../src/deps.js';
import { loadOrchestratorEnv } from '../src/env.js';
import { orchestratorDatabase } from './database.js';

/**
 * Which node-postgres pool plans how (kit/pg-sql.ts customPlans): the billing consumer's batches,
 * statements over arrays of request ids, are planned at each execution (a plan kept from a fresh
 * deployment's first minutes scanned all of `data_requests` for each batch); admission's and the
 * stage's statements, one row by its id, keep Postgres's plan cache (planning them each time cost
 * more pages/s than it saved: bench/README.md).
 */
const testDb = orchestratorDatabase();
let deps: OrchestratorDeps | undefined;

afterAll(async () => {
  await deps?.sql.end();
  await deps?.batchSql.end();
  await deps?.db.$disconnect();
});

it('plans the billing batches at each execution and keeps the plan cache for the hot single-row statements', async () => {
  deps = createOrchestratorDeps(
    loadOrchestratorEnv({
      ...identityEnvOf('fetch-orchestrator'),
      DATABASE_URL: testDb.url,
      TARGET_URL_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'silent',
    }),
  );
  const mode = async (sql: OrchestratorDeps['sql']) =>
    (await sql.$queryRawUnsafe<{ plan_cache_mode: string }[]>('SHOW plan_cache_mode'))[0]!.plan_cache_mode;
  expect(await mode(deps.batchSql)).toBe('force_custom_plan');
  expect(await mode(deps.sql)).toBe('auto');
});
