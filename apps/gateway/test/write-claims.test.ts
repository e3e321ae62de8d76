import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { prismaClientOptions } from '@wdr/kit/db';
import type { GatewayDeps } from '../src/deps.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { idempotentWrite, purgeWriteClaims } from '../src/domain/browser/claims.js';
import { createTenant } from '../src/domain/tenants/tenants.js';

/** The idempotency claims of the cabinet's writes against the real database: replay, conflict, and the retention purge. */
let database: TestDatabase;
let db: PrismaClient;
/** idempotentWrite needs the database only. */
let deps: Pick<GatewayDeps, 'db'>;

beforeAll(async () => {
  database = await createTestDatabase('gateway');
  db = new PrismaClient(prismaClientOptions(database.url));
  deps = { db };
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const newTenant = async () => (await createTenant(db, `claims-${randomUUID()}`, 'test-pepper-not-secret-0123456789')).tenantId;

/** A write that counts its runs and answers which run it was. */
function counter() {
  let runs = 0;
  return { runs: () => runs, write: async () => ({ run: ++runs }) };
}

describe('write claims', () => {
  it('replay within the retention; after the purge the same key is a new write, and fresh claims are kept', async () => {
    const tenant = await newTenant();
    const c = counter();
    const first = await idempotentWrite(deps, tenant, 'key-aged-0001', 'projects.create', { name: 'a' }, c.write);
    const replay = await idempotentWrite(deps, tenant, 'key-aged-0001', 'projects.create', { name: 'a' }, c.write);
    expect([first, replay, c.runs()]).toEqual([{ run: 1 }, { run: 1 }, 1]);
    await expect(idempotentWrite(deps, tenant, 'key-aged-0001', 'projects.create', { name: 'b' }, c.write)).rejects.toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
    });

    const fresh = counter();
    await idempotentWrite(deps, tenant, 'key-fresh-0001', 'projects.create', { name: 'f' }, fresh.write);
    // Age the first claim past a 24-hour retention (the fresh one stays young).
    const fresher = await db.clientWriteClaim.findFirstOrThrow({ where: { tenantId: tenant }, orderBy: { createdAt: 'desc' } });
    await db.$executeRaw`UPDATE client_write_claims SET created_at = now() - interval '25 hours' WHERE tenant_id = ${tenant}::uuid AND key_id <> ${fresher.keyId}::uuid`;
    const agedBefore = await db.clientWriteClaim.count({ where: { createdAt: { lt: new Date(Date.now() - 24 * 3600_000) } } });
    expect(agedBefore).toBe(1);

    expect(await purgeWriteClaims(db, 24)).toBe(agedBefore);
    // The aged key is new again: another body is a new write, not a conflict.
    await expect(idempotentWrite(deps, tenant, 'key-aged-0001', 'projects.create', { name: 'b' }, c.write)).resolves.toEqual({ run: 2 });
    // The fresh one still replays and still refuses another body.
    await expect(idempotentWrite(deps, tenant, 'key-fresh-0001', 'projects.create', { name: 'f' }, fresh.write)).resolves.toEqual({
      run: 1,
    });
    await expect(idempotentWrite(deps, tenant, 'key-fresh-0001', 'projects.create', { name: 'g' }, fresh.write)).rejects.toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
    });
    expect(fresh.runs()).toBe(1);
  });

  it('purges a backlog larger than one statement', async () => {
    const tenant = await newTenant();
    await db.$executeRaw`
      INSERT INTO client_write_claims (key_id, tenant_id, input_hash, created_at)
      SELECT gen_random_uuid(), ${tenant}::uuid, 'h', now() - interval '48 hours' FROM generate_series(1, 25)`;
    expect(await purgeWriteClaims(db, 24, 10)).toBe(25);
    expect(await db.clientWriteClaim.count({ where: { tenantId: tenant } })).toBe(0);
  });
});
