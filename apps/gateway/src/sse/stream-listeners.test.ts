import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createLogger } from '@wdr/kit/log';
import { StreamListeners } from './stream-listeners.js';

/**
 * The gateway's side of the lifecycle registration, over a recording stand-in for its orchestrator
 * client (what it sends, when): the registration itself, its ordering with event writes, is
 * tested on Postgres (fetch-orchestrator/test/lifecycle-listeners.test.ts) and through the fleet
 * (request-reads e2e).
 */
type Call = { path: string; body: { holder: string; tenant_ids: string[]; ttl_seconds: number | null } };

function recorder(fail: () => boolean = () => false) {
  const calls: Call[] = [];
  return {
    calls,
    client: {
      get: async () => {
        throw new Error('not used');
      },
      post: async <T>(path: string, body: unknown): Promise<T> => {
        calls.push({ path, body: body as Call['body'] });
        if (fail()) throw new Error('orchestrator unavailable');
        return { registered: (body as Call['body']).tenant_ids.length } as T;
      },
    },
  };
}

const log = createLogger('test', 'silent');
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

describe('StreamListeners', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('registers a tenant once for its streams, renews every third of the expiry while one is open, and stops after the last closes', async () => {
    const { calls, client } = recorder();
    const listeners = new StreamListeners({ orchestrator: client, log, instanceId: 'i-1', ttlSeconds: 30 });
    const first = await listeners.hold(A);
    const second = await listeners.hold(A);
    const other = await listeners.hold(B);
    expect(calls.map((c) => [c.path, c.body])).toEqual([
      ['/internal/v1/lifecycle-listeners', { holder: 'gateway:i-1', tenant_ids: [A], ttl_seconds: 30 }],
      ['/internal/v1/lifecycle-listeners', { holder: 'gateway:i-1', tenant_ids: [B], ttl_seconds: 30 }],
    ]);
    calls.length = 0;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls.map((c) => c.body.tenant_ids)).toEqual([[A, B]]);

    first();
    other();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls.map((c) => c.body.tenant_ids)).toEqual([[A, B], [A]]); // A still has a stream
    second();
    second(); // a second call of the same release changes nothing
    await jest.advanceTimersByTimeAsync(30_000);
    expect(calls).toHaveLength(2);
    expect(listeners.tenants()).toEqual([]);
    listeners.stop();
  });

  it('a failed registration fails the stream and is not kept: the next stream of the tenant registers again', async () => {
    let failing = true;
    const { calls, client } = recorder(() => failing);
    const listeners = new StreamListeners({ orchestrator: client, log, instanceId: 'i-2', ttlSeconds: 30 });
    await expect(listeners.hold(A)).rejects.toThrow('orchestrator unavailable');
    expect(listeners.tenants()).toEqual([]);
    failing = false;
    const release = await listeners.hold(A);
    expect(calls.map((c) => c.body.tenant_ids)).toEqual([[A], [A]]);
    release();
    listeners.stop();
  });
});
