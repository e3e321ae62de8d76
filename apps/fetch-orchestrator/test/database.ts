import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from '@jest/globals';
import { pgAdapterFor } from '@wdr/kit/db';
import type { Sealer } from '@wdr/kit/sealing';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { PrismaClient, type Prisma } from '../src/generated/prisma/client.js';

/**
 * A database of the orchestrator's schema for one test file (from the migrated template), created
 * before its tests with a Prisma client on it, both gone after them. Read `db` and `url` inside tests.
 */
export function orchestratorDatabase(): { readonly db: PrismaClient; readonly url: string } {
  let database: TestDatabase | undefined;
  let client: PrismaClient | undefined;
  beforeAll(async () => {
    database = await createTestDatabase('fetch-orchestrator');
    client = new PrismaClient({ adapter: pgAdapterFor(database.url) });
  }, 60_000);
  afterAll(async () => {
    await client?.$disconnect();
    await database?.drop();
  }, 60_000);
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the test database is created in beforeAll: read it inside a test');
    return v;
  };
  return {
    get db() {
      return ready(client);
    },
    get url() {
      return ready(database).url;
    },
  };
}

/**
 * The columns of a stored request as admission leaves it (an HTTP page of `url`, its target sealed
 * under its id, reserved, pending), with `extra` over them: what a test writes with
 * `dataRequest.create({ data })` before it exercises what follows admission.
 */
export function requestRowOf(
  sealer: Sealer,
  tenantId: string,
  extra: Partial<Prisma.DataRequestUncheckedCreateInput> & { url?: string } = {},
): Prisma.DataRequestUncheckedCreateInput & { id: string } {
  const { url = 'https://example.com/a', ...columns } = extra;
  const id = columns.id ?? randomUUID();
  return {
    tenantId,
    urlOrigin: new URL(url).origin,
    targetSealed: sealer.seal(url, id),
    targetPurgeAt: new Date(Date.now() + 3600_000),
    status: 'pending',
    routeMode: 'http',
    proxyType: 'datacenter',
    pricingVersion: 2,
    baseTokens: 1,
    tokenState: 'reserved',
    options: {},
    ...columns,
    id,
  };
}
