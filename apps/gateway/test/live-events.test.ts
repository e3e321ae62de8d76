import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KafkaBus, makeEnvelope } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import { createMetrics } from '@wdr/kit/metrics';
import { eventually, KAFKA_BROKERS, uniqueTopicPrefix } from '@wdr/testkit';
import type { StoredRequestEvent } from '../src/domain/reads/request-events.js';
import { LiveRequestEvents } from '../src/sse/live-request-events.js';

/**
 * The gateway's live-events consumer against the real broker: it runs only while a stream is open
 * on the instance (and a linger after the last one closed), so an instance nobody streams from
 * holds no Kafka client and fetches nothing.
 */
const log = createLogger('test', 'silent');
const prefix = uniqueTopicPrefix();
let producer: KafkaBus;

beforeAll(async () => {
  producer = new KafkaBus({ clientId: 'gateway-live-events-test', brokers: KAFKA_BROKERS, prefix, log });
  await producer.ensureTopics(['requestLifecycle']);
  await producer.connect();
}, 60_000);

afterAll(async () => {
  await producer?.disconnect();
}, 60_000);

const publish = (requestId: string, eventId: number) =>
  producer.send(producer.topic('requestLifecycle'), [
    {
      key: requestId,
      envelope: makeEnvelope('requestLifecycle', 'request.event_appended', randomUUID(), {
        request_id: requestId,
        event_id: eventId,
        kind: 'request.running',
        status: 'running',
        payload: {},
        created_at: new Date().toISOString(),
      }),
    },
  ]);

describe('LiveRequestEvents', () => {
  it('joins no group (and asks for no Kafka client) until a stream opens, delivers while one is open, and leaves its group once the last has been closed for the linger', async () => {
    let joins = 0;
    const live = new LiveRequestEvents({
      bus: async () => {
        joins++;
        return new KafkaBus({ clientId: 'gateway-live-events', brokers: KAFKA_BROKERS, prefix, log });
      },
      log,
      metrics: createMetrics('gateway_live_events_test'),
      lingerMs: 1_000,
    });
    live.start();
    try {
      // Started, nobody streaming: no client, no consumer, and readiness holds (nothing to deliver).
      await new Promise((r) => setTimeout(r, 500));
      expect([joins, live.consuming, live.ready()]).toEqual([0, false, true]);

      const requestId = randomUUID();
      const got: StoredRequestEvent[] = [];
      const unsubscribe = live.subscribe(requestId, {
        onEvent: (e) => got.push(e),
        onResync: () => undefined,
        onShutdown: () => undefined,
      });
      expect(live.consuming).toBe(true);
      await eventually(
        async () => live.ready(),
        (ok) => ok,
        30_000,
        100,
      );
      await publish(requestId, 2);
      await eventually(
        async () => got.map((e) => e.event_id),
        (ids: number[]) => ids.includes(2),
        10_000,
        50,
      );
      expect(joins).toBe(1);

      // The last stream closes: the consumer stays for the linger, then leaves.
      unsubscribe();
      expect(live.consuming).toBe(true);
      await eventually(
        async () => live.consuming,
        (c) => !c,
        15_000,
        100,
      );
      expect(live.ready()).toBe(true);

      // A new stream makes it join again; closed at once, the join stops itself when it completes.
      const again = live.subscribe(randomUUID(), { onEvent: () => undefined, onResync: () => undefined, onShutdown: () => undefined });
      expect(live.consuming).toBe(true);
      again();
      await eventually(
        async () => live.consuming,
        (c) => !c,
        30_000,
        100,
      );
      expect(joins).toBe(2);
    } finally {
      await live.stop();
    }
  }, 90_000);
});
