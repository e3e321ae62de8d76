import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createServiceClient } from './http-client.js';

afterEach(() => {
  jest.useRealTimers();
});

describe("internal clients' breakers", () => {
  it("move their failure windows on the process's one timer, not one per client", async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    // Port 1 refuses at once: each call is a failure the breaker counts.
    const clients = ['ledger', 'orchestrator', 'renderer'].map((name) =>
      createServiceClient({ name, baseUrl: 'http://127.0.0.1:1', timeoutMs: 1_000 }),
    );
    expect(jest.getTimerCount()).toBe(1);
    for (const client of clients) await expect(client.get('/internal/v1/nothing')).rejects.toThrow();
    expect(clients.map((c) => c.breaker.stats.failures)).toEqual([1, 1, 1]);
    // Two 5 s buckets make the window: one move keeps the failures in it, the second lets them go.
    jest.advanceTimersByTime(5_000);
    expect(clients.map((c) => c.breaker.stats.failures)).toEqual([1, 1, 1]);
    jest.advanceTimersByTime(5_000);
    expect(clients.map((c) => c.breaker.stats.failures)).toEqual([0, 0, 0]);
    for (const client of clients) client.breaker.shutdown();
  });
});
