import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase, pgRawSql, type TestDatabase } from '@wdr/testkit';
import { afterCommit, transactionWithHooks } from './db.js';

/** afterCommit against a real Postgres transaction: after the commit, never after a rollback, at once outside a hooked transaction. */
let database: TestDatabase;
let db: ReturnType<typeof pgRawSql>;

beforeAll(async () => {
  database = await createTestDatabase('browser-renderer');
  db = pgRawSql(database.url);
  await db.$executeRawUnsafe('CREATE TABLE hook_probe (n int)');
}, 60_000);

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

it('runs hooks once the transaction committed, and the committed row is visible to them', async () => {
  const seen: number[] = [];
  await transactionWithHooks(db, async (tx) => {
    await tx.$executeRawUnsafe('INSERT INTO hook_probe VALUES (1)');
    afterCommit(tx, () => seen.push(-1));
    // Not yet: the hook waits for the commit.
    expect(seen).toEqual([]);
  });
  expect(seen).toEqual([-1]);
  const rows = await db.$queryRawUnsafe<{ n: number }[]>('SELECT n FROM hook_probe');
  expect(rows.map((r) => r.n)).toEqual([1]);
});

it('never runs the hooks of a transaction that rolled back', async () => {
  const seen: string[] = [];
  await expect(
    transactionWithHooks(db, async (tx) => {
      await tx.$executeRawUnsafe('INSERT INTO hook_probe VALUES (2)');
      afterCommit(tx, () => seen.push('counted'));
      throw new Error('fails before the commit');
    }),
  ).rejects.toThrow('fails before the commit');
  expect(seen).toEqual([]);
  expect(await db.$queryRawUnsafe<unknown[]>('SELECT 1 FROM hook_probe WHERE n = 2')).toHaveLength(0);
});

it('runs at once in a transaction it was not told about', async () => {
  const seen: string[] = [];
  await db.$transaction(async (tx) => {
    afterCommit(tx, () => seen.push('inline'));
    expect(seen).toEqual(['inline']);
  });
});
