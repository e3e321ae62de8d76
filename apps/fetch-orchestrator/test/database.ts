import { afterAll, beforeAll } from '@jest/globals';
import { pgAdapterFor } from '@wdr/kit/db';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { PrismaClient } from '../src/generated/prisma/client.js';

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
