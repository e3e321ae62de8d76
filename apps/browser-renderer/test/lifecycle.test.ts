import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase, exerciseLifecycle, identityEnvOf, uniqueTopicPrefix, type TestDatabase } from '@wdr/testkit';
import { createRendererDeps, createRendererService } from '../src/app.js';
import { loadRendererEnv } from '../src/env.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('browser-renderer');
});
afterAll(() => database?.drop());

it('boots against the real Postgres and Kafka, launches Chromium, reports ready with every check, exposes metrics, and stops', async () => {
  const env = loadRendererEnv({
    ...identityEnvOf('browser-renderer'),
    DATABASE_URL: database.url,
    KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
    LOG_LEVEL: 'silent',
    DEBUG_ARTIFACT_KEY: Buffer.alloc(32, 3).toString('base64'),
    BROWSER_POOL_SIZE: '1',
  });
  const report = await exerciseLifecycle(createRendererService(createRendererDeps(env)));
  expect(report.readyBeforeStart).toBe(503);
  expect(report.readyAfterStart).toBe(200);
  expect(report.readyBody.checks.map((c) => c.name)).toEqual(
    expect.arrayContaining(['database', 'kafka_consumers', 'outbox_relay', 'chromium']),
  );
  expect(report.healthz).toBe(200);
  expect(report.readyBody.checks.find((c) => c.name === 'chromium')).toMatchObject({ ok: true });
  expect(report.metricsText).toMatch(/^wdr_http_requests_total\{[^}]*wdr_service="browser-renderer"/m);
  expect(report.metricsText).toMatch(/browser_renderer_pool_browsers\{[^}]*\} 1/);
  expect(report.metricsText).toContain('nodejs_eventloop_lag_seconds');
}, 60_000);
