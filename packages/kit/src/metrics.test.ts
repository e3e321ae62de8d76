import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import express from 'express';
import { createServiceClient } from './http-client.js';
import { createMetrics } from './metrics.js';

async function listen(app: express.Express) {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

describe('service metrics', () => {
  it('a gauge given a collect function reads its state at each scrape; asked again, the newest function reports', async () => {
    const metrics = createMetrics('kit-test-collect');
    let connected = false;
    metrics.shared.gauge('thing_connected', 'Connected (1) or not (0).', [] as const, function () {
      this.set(connected ? 1 : 0);
    });
    const value = async () => (await metrics.registry.getSingleMetricAsString('wdr_thing_connected')).split('\n').at(-1);
    expect(await value()).toBe('wdr_thing_connected{wdr_service="kit-test-collect"} 0');
    connected = true;
    expect(await value()).toBe('wdr_thing_connected{wdr_service="kit-test-collect"} 1');
    metrics.shared.gauge('thing_connected', 'Connected (1) or not (0).', [] as const, function () {
      this.set(7);
    });
    expect(await value()).toBe('wdr_thing_connected{wdr_service="kit-test-collect"} 7');
  });

  it("labels every series wdr_service (never `service`, the operator's target label), counts status classes, and keeps event streams out of the latency histogram", async () => {
    const metrics = createMetrics('kit-test-http');
    const app = express();
    app.use(metrics.httpMiddleware);
    app.get('/ok', (_req, res) => void res.json({}));
    app.get('/limited', (_req, res) => void res.status(429).json({}));
    app.get('/stream', (_req, res) => {
      res.setHeader('content-type', 'text/event-stream');
      res.end('data: x\n\n');
    });
    const s = await listen(app);
    try {
      for (const p of ['/ok', '/limited', '/stream']) await (await fetch(`${s.url}${p}`)).text();
    } finally {
      await s.close();
    }
    const text = await metrics.registry.metrics();
    expect(text).not.toMatch(/[{,]service="/);
    expect(text).toContain(
      'wdr_http_requests_total{method="GET",route="/limited",outcome="client_error",status_class="4xx",wdr_service="kit-test-http"} 1',
    );
    expect(text).toContain(
      'wdr_http_requests_total{method="GET",route="/ok",outcome="success",status_class="2xx",wdr_service="kit-test-http"} 1',
    );
    expect(text).toContain('route="/stream",outcome="success",status_class="2xx"');
    expect(text).toMatch(/wdr_http_request_duration_seconds_count\{[^}]*route="\/ok"/);
    expect(text).not.toMatch(/wdr_http_request_duration_seconds_count\{[^}]*route="\/stream"/);
  });

  it("exports an internal client's breaker: failures, rejects while open, and its state", async () => {
    const metrics = createMetrics('kit-test-breaker');
    const app = express();
    app.get('/fail', (_req, res) => void res.status(503).json({}));
    const s = await listen(app);
    const client = createServiceClient({ name: 'flaky', baseUrl: s.url, metrics, breaker: { volumeThreshold: 2, resetTimeout: 60_000 } });
    const state = async () => await metrics.registry.getSingleMetricAsString('wdr_breaker_state');
    let text: string;
    try {
      expect(await state()).toContain('wdr_breaker_state{dependency="flaky",wdr_service="kit-test-breaker"} 0');
      for (let i = 0; i < 4; i++) await client.get('/fail').catch(() => undefined);
      text = await metrics.registry.metrics();
    } finally {
      await s.close();
      client.breaker.shutdown();
    }
    expect(text).toContain('wdr_breaker_state{dependency="flaky",wdr_service="kit-test-breaker"} 2');
    expect(text).toMatch(/wdr_breaker_events_total\{dependency="flaky",event="failure",wdr_service="kit-test-breaker"\} [2-4]/);
    expect(text).toMatch(/wdr_breaker_events_total\{dependency="flaky",event="reject",wdr_service="kit-test-breaker"\} [1-2]/);
    expect(text).toContain('wdr_breaker_events_total{dependency="flaky",event="open",wdr_service="kit-test-breaker"} 1');
  });
});
