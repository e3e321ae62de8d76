import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase, exerciseLifecycle, identityEnvOf, uniqueTopicPrefix, type TestDatabase } from '@wdr/testkit';
import { createExtractorDeps, createExtractorService } from '../src/app.js';
import { loadExtractorEnv } from '../src/env.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('recipe-extractor');
});
afterAll(() => database?.drop());

it('boots against the real Postgres and Kafka, reports ready with every check, exposes metrics, and stops', async () => {
  const env = loadExtractorEnv({
    ...identityEnvOf('recipe-extractor'),
    DATABASE_URL: database.url,
    KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
    LOG_LEVEL: 'silent',
  });
  const report = await exerciseLifecycle(createExtractorService(createExtractorDeps(env)));
  expect(report.readyBeforeStart).toBe(503);
  expect(report.readyAfterStart).toBe(200);
  expect(report.readyBody.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['database', 'kafka_consumers', 'outbox_relay']));
  expect(report.healthz).toBe(200);
  expect(report.metricsText).toMatch(/^wdr_http_requests_total\{[^}]*wdr_service="recipe-extractor"/m);
  expect(report.metricsText).toContain('nodejs_eventloop_lag_seconds');
}, 60_000);
