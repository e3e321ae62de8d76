import { describe, expect, it } from '@jest/globals';
import { CredentialCache, type VerifiedCredential } from './credential-cache.js';

const tenant = (tenantId: string) => ({ tenant: { tenantId, credential: 'api_key' as const, limits: {} } });

/** A loader that counts its calls. */
function loader(answer: () => VerifiedCredential) {
  const calls = { n: 0 };
  return { calls, load: async () => (calls.n++, answer()) };
}

describe('CredentialCache', () => {
  it('answers a verified credential from memory until its TTL, then asks again', async () => {
    let now = 1_000;
    const cache = new CredentialCache({ ttlMs: 500, maxEntries: 10, now: () => now });
    cache.trust(true);
    const { calls, load } = loader(() => tenant('t1'));
    await cache.resolve('d1', load);
    await cache.resolve('d1', load);
    expect(calls.n).toBe(1);
    now += 501;
    expect((await cache.resolve('d1', load)).tenantId).toBe('t1');
    expect(calls.n).toBe(2);
  });

  it('serves nothing from memory unless trusted (no change notifications)', async () => {
    const cache = new CredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    const { calls, load } = loader(() => tenant('t1'));
    await cache.resolve('d1', load);
    await cache.resolve('d1', load);
    expect(calls.n).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('AUTH_CACHE_TTL_MS=0 turns it off: every lookup is asked', async () => {
    const cache = new CredentialCache({ ttlMs: 0, maxEntries: 10 });
    cache.trust(true);
    const { calls, load } = loader(() => tenant('t1'));
    await cache.resolve('d1', load);
    await cache.resolve('d1', load);
    expect(calls.n).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('never stores a refusal', async () => {
    const cache = new CredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    cache.trust(true);
    let calls = 0;
    const refuse = async (): Promise<VerifiedCredential> => {
      calls++;
      throw new Error('bad key');
    };
    await expect(cache.resolve('d1', refuse)).rejects.toThrow('bad key');
    await expect(cache.resolve('d1', refuse)).rejects.toThrow('bad key');
    expect(calls).toBe(2);
  });

  it("drops only the changed tenant's entries, and an emptied cache on lost trust", async () => {
    const cache = new CredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    cache.trust(true);
    await cache.resolve('a', async () => tenant('t1'));
    await cache.resolve('b', async () => tenant('t1'));
    await cache.resolve('c', async () => tenant('t2'));
    cache.invalidateTenant('t1');
    expect(cache.size).toBe(1);
    cache.trust(false);
    expect(cache.size).toBe(0);
  });

  it('does not store a lookup that raced a change (read before it, finished after it)', async () => {
    const cache = new CredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    cache.trust(true);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const pending = cache.resolve('d1', async () => {
      await gate;
      return tenant('t1');
    });
    cache.invalidateTenant('t1');
    release();
    await pending;
    expect(cache.size).toBe(0);
  });

  it('keeps at most maxEntries, dropping the oldest', async () => {
    const cache = new CredentialCache({ ttlMs: 60_000, maxEntries: 2 });
    cache.trust(true);
    for (const d of ['a', 'b', 'c']) await cache.resolve(d, async () => tenant(d));
    expect(cache.size).toBe(2);
    const { calls, load } = loader(() => tenant('a'));
    await cache.resolve('a', load);
    expect(calls.n).toBe(1);
  });

  it('keeps a credential no longer than it is valid', async () => {
    let now = 1_000;
    const cache = new CredentialCache({ ttlMs: 60_000, maxEntries: 10, now: () => now });
    cache.trust(true);
    const { calls, load } = loader(() => ({ ...tenant('t1'), credentialExpiresAt: new Date(1_100) }));
    await cache.resolve('d1', load);
    now = 1_099;
    await cache.resolve('d1', load);
    expect(calls.n).toBe(1);
    now = 1_100;
    await cache.resolve('d1', load);
    expect(calls.n).toBe(2);
  });
});
