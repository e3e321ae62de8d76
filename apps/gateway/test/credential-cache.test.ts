import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, startTcpProxy, type TestDatabase } from '@wdr/testkit';
import { PgListener, pgConnectionFor } from '@wdr/kit/pg-listen';
import { createLogger } from '@wdr/kit/log';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { prismaClientOptions } from '@wdr/kit/db';
import { CREDENTIALS_CHANNEL, CredentialCache } from '../src/domain/auth/credential-cache.js';
import { authenticateCabinetToken, issueCabinetToken } from '../src/domain/auth/cabinet-tokens.js';
import { authenticateApiKey, createTenant, issueKeyFor, setTenantLimits } from '../src/domain/tenants/tenants.js';

/**
 * The gateway's cache of verified credentials against the real database: changes reach every
 * replica at commit through the database's notifications (two caches here, as two replicas), and a
 * replica that stops hearing them stops answering from memory.
 */
const PEPPER = 'test-pepper-not-secret-0123456789';
let db: TestDatabase;
let prisma: PrismaClient;
const replicas: { cache: CredentialCache; listener: PgListener }[] = [];

function replica() {
  const cache = new CredentialCache({ ttlMs: 600_000, maxEntries: 100 });
  const listener = new PgListener({
    connection: pgConnectionFor(db.url).config,
    channel: CREDENTIALS_CHANNEL,
    log: createLogger('test', 'silent'),
    onNotify: (tenantId) => cache.invalidateTenant(tenantId),
    onListening: () => cache.trust(true),
    onLost: () => cache.trust(false),
  });
  listener.start();
  const r = { cache, listener };
  replicas.push(r);
  return r;
}

/** The Prisma client with its key lookups counted. */
function counted() {
  const calls = { n: 0 };
  const client = {
    apiKey: { findUnique: (args: Parameters<PrismaClient['apiKey']['findUnique']>[0]) => (calls.n++, prisma.apiKey.findUnique(args)) },
    cabinetToken: {
      findUnique: (args: Parameters<PrismaClient['cabinetToken']['findUnique']>[0]) => (calls.n++, prisma.cabinetToken.findUnique(args)),
    },
  } as unknown as PrismaClient;
  return { calls, client };
}

beforeAll(async () => {
  db = await createTestDatabase('gateway');
  prisma = new PrismaClient(prismaClientOptions(db.url));
}, 60_000);

afterAll(async () => {
  for (const r of replicas) await r.listener.stop();
  await prisma?.$disconnect();
  await db?.drop();
});

/** A statement outside the code under test (as an operator's psql would). */
const exec = (query: string, values: unknown[] = []) => prisma.$executeRawUnsafe(query, ...values);

async function listening(...rs: { listener: PgListener }[]) {
  await eventually(
    async () => rs.every((r) => r.listener.listening()),
    (ok) => ok,
    10_000,
    20,
  );
}

describe('credential cache', () => {
  it('answers a verified key from memory: one database lookup for many submissions', async () => {
    const r = replica();
    await listening(r);
    const { apiKey, tenantId } = await createTenant(prisma, 'cache-hit', PEPPER);
    const { calls, client } = counted();
    for (let i = 0; i < 5; i++) expect((await authenticateApiKey(client, apiKey, PEPPER, r.cache)).tenantId).toBe(tenantId);
    expect(calls.n).toBe(1);
  });

  it('a revoked key, a suspended tenant and new limits take effect on every replica at once', async () => {
    const [a, b] = [replica(), replica()];
    await listening(a, b);
    const first = await createTenant(prisma, 'revoke', PEPPER);
    const second = await createTenant(prisma, 'suspend', PEPPER);
    for (const r of [a, b]) {
      await authenticateApiKey(prisma, first.apiKey, PEPPER, r.cache);
      await authenticateApiKey(prisma, second.apiKey, PEPPER, r.cache);
      expect(r.cache.size).toBe(2);
    }

    await exec('UPDATE api_keys SET revoked_at = now() WHERE tenant_id = $1::uuid', [first.tenantId]);
    await exec(`UPDATE tenants SET status = 'suspended' WHERE id = $1::uuid`, [second.tenantId]);
    await eventually(
      async () => a.cache.size + b.cache.size,
      (n) => n === 0,
      5_000,
      10,
    );
    for (const r of [a, b]) {
      await expect(authenticateApiKey(prisma, first.apiKey, PEPPER, r.cache)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      await expect(authenticateApiKey(prisma, second.apiKey, PEPPER, r.cache)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    }

    const third = await createTenant(prisma, 'limits', PEPPER);
    expect((await authenticateApiKey(prisma, third.apiKey, PEPPER, a.cache)).limits).toEqual({});
    await setTenantLimits(prisma, third.tenantId, { maxConcurrentRequests: 7 });
    await eventually(
      async () => (await authenticateApiKey(prisma, third.apiKey, PEPPER, a.cache)).limits,
      (l) => l.maxConcurrentRequests === 7,
      5_000,
      10,
    );
  });

  it('a revoked cabinet token stops working at once', async () => {
    const r = replica();
    await listening(r);
    const { tenantId } = await createTenant(prisma, 'cabinet', PEPPER);
    const issued = await issueCabinetToken(prisma, tenantId, PEPPER, { expiresInDays: 1 });
    const header = `Bearer ${issued.token}`;
    const { calls, client } = counted();
    await authenticateCabinetToken(client, header, PEPPER, r.cache);
    await authenticateCabinetToken(client, header, PEPPER, r.cache);
    expect(calls.n).toBe(1);
    await exec('UPDATE cabinet_tokens SET revoked_at = now() WHERE id = $1::uuid', [issued.id]);
    await eventually(
      async () => r.cache.size,
      (n) => n === 0,
      5_000,
      10,
    );
    await expect(authenticateCabinetToken(prisma, header, PEPPER, r.cache)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('a replica whose notification connection is cut answers from the database until it listens again', async () => {
    const r = replica();
    await listening(r);
    const { apiKey, tenantId } = await createTenant(prisma, 'cut', PEPPER);
    await authenticateApiKey(prisma, apiKey, PEPPER, r.cache);
    expect(r.cache.size).toBe(1);
    // Cut every listening connection of this database; the revocation below is then told to nobody.
    await prisma.$queryRawUnsafe(
      `SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
    );
    await eventually(
      async () => r.listener.listening(),
      (l) => !l,
      5_000,
      10,
    );
    await exec('UPDATE api_keys SET revoked_at = now() WHERE tenant_id = $1::uuid', [tenantId]);
    await expect(authenticateApiKey(prisma, apiKey, PEPPER, r.cache)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // Back to listening (a second later): still refused, and caching again for good keys.
    await listening(r);
    await expect(authenticateApiKey(prisma, apiKey, PEPPER, r.cache)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const other = await createTenant(prisma, 'cut-after', PEPPER);
    await authenticateApiKey(prisma, other.apiKey, PEPPER, r.cache);
    expect(r.cache.size).toBe(1);
  }, 30_000);

  it('a notification connection that died silently is noticed by its heartbeat: a revocation takes effect within seconds', async () => {
    // Postgres reached through a relay the test freezes: no byte either way, no error, no close.
    const direct = pgConnectionFor(db.url);
    const url = new URL(db.url);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const cache = new CredentialCache({ ttlMs: 600_000, maxEntries: 100 });
    const listener = new PgListener({
      connection: {
        ...direct.config,
        connectionString: direct.config.connectionString!.replace(`:${url.port || 5432}/`, `:${proxy.port}/`),
      },
      channel: CREDENTIALS_CHANNEL,
      log: createLogger('test', 'silent'),
      onNotify: (tenantId) => cache.invalidateTenant(tenantId),
      onListening: () => cache.trust(true),
      onLost: () => cache.trust(false),
      heartbeatMs: 500,
      heartbeatTimeoutMs: 500,
    });
    replicas.push({ cache, listener });
    listener.start();
    try {
      await eventually(
        async () => listener.listening(),
        (l) => l,
        10_000,
        20,
      );
      const { apiKey, tenantId } = await createTenant(prisma, 'frozen', PEPPER);
      await authenticateApiKey(prisma, apiKey, PEPPER, cache);
      expect(cache.size).toBe(1);
      proxy.freeze();
      const revokedAt = Date.now();
      await exec('UPDATE api_keys SET revoked_at = now() WHERE tenant_id = $1::uuid', [tenantId]);
      // The notification is lost in the frozen relay; the heartbeat misses its answer and the cache is dropped.
      await eventually(
        async () => {
          try {
            await authenticateApiKey(prisma, apiKey, PEPPER, cache);
            return false;
          } catch {
            return true;
          }
        },
        (refused) => refused,
        5_000,
        50,
      );
      expect(Date.now() - revokedAt).toBeLessThan(3_000);
      expect(listener.listening()).toBe(false);
      // Thawed: it listens again through a new connection and caches good keys again.
      proxy.restore();
      await eventually(
        async () => listener.listening(),
        (l) => l,
        10_000,
        50,
      );
    } finally {
      await listener.stop();
      await proxy.close();
    }
  }, 30_000);

  it('an API key past its expiry is refused, and is cached no longer than until then', async () => {
    const r = replica();
    await listening(r);
    const { tenantId } = await createTenant(prisma, 'expiring', PEPPER);
    const expired = await issueKeyFor(prisma, tenantId, PEPPER, 'old', new Date(Date.now() - 1_000));
    await expect(authenticateApiKey(prisma, expired, PEPPER, r.cache)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const soon = await issueKeyFor(prisma, tenantId, PEPPER, 'soon', new Date(Date.now() + 1_500));
    expect((await authenticateApiKey(prisma, soon, PEPPER, r.cache)).tenantId).toBe(tenantId);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    await expect(authenticateApiKey(prisma, soon, PEPPER, r.cache)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
