import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { createLogger } from '../log.js';
import { createMetrics } from '../metrics.js';
import { KafkaBus } from './bus.js';
import { exportLag, LAG_QUERY_TIMEOUT_MS } from './lag.js';

// A "broker" that accepts connections and never answers: what a partitioned or overloaded Kafka
// looks like to kafkajs (connect succeeds at TCP, every request hangs until kafkajs gives up, ~24 s
// with the bus's retry settings). /metrics must still answer within the scrape timeout.
describe('consumer lag collection while the broker does not answer', () => {
  let server: Server;
  const sockets = new Set<Socket>();
  let port = 0;

  beforeAll(async () => {
    server = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('answers every scrape within its bound, connect included, with no lag series', async () => {
    const log = createLogger('test', 'silent');
    const metrics = createMetrics('lag-test');
    const bus = new KafkaBus({ clientId: 'lag-test', brokers: [`127.0.0.1:${port}`], prefix: 'lagtest.', log });
    const stop = exportLag(metrics, bus, 'g', ['fetchJobs'], log);
    try {
      for (let scrape = 0; scrape < 2; scrape++) {
        const started = Date.now();
        const text = await metrics.registry.metrics();
        const took = Date.now() - started;
        expect(took).toBeLessThan(LAG_QUERY_TIMEOUT_MS + 1_000);
        expect(text).toContain('# TYPE wdr_kafka_consumer_lag gauge');
        expect(text).not.toMatch(/^wdr_kafka_consumer_lag\{/m);
        // The shared gauge says why the series are missing: WdrKafkaUnreachable reads it.
        expect(text).toMatch(/^wdr_kafka_lag_query_success\{wdr_service="lag-test"\} 0$/m);
      }
    } finally {
      await Promise.race([stop(), new Promise((r) => setTimeout(r, 500))]);
    }
  }, 15_000);
});
