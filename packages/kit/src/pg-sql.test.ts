import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { afterCommit, isUniqueViolation, transactionWithHooks } from './db.js';
import { isPgStatement, PgSql } from './pg-sql.js';

/** The hot statements' node-postgres path (kit/pg-sql.ts), against a real Postgres. */
let database: TestDatabase;
let sql: PgSql;

beforeAll(async () => {
  database = await createTestDatabase('webhook-dispatcher');
  sql = new PgSql(database.url, { max: 2 });
  await sql.$executeRawUnsafe('CREATE TABLE pg_sql_probe (id uuid PRIMARY KEY, n bigint NOT NULL, at timestamp, label text)');
}, 60_000);

afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

const count = async (id: string) =>
  Number((await sql.$queryRawUnsafe<{ n: bigint }[]>('SELECT count(*) AS n FROM pg_sql_probe WHERE id = $1::uuid', id))[0]!.n);

describe('PgSql', () => {
  it("reads values as Prisma's raw queries do: int8 as BigInt, timestamp as UTC, timestamptz as Date, jsonb parsed", async () => {
    const [row] = await sql.$queryRawUnsafe<
      { big: unknown; plain: unknown; zoned: unknown; small: unknown; doc: unknown; list: unknown }[]
    >(
      `SELECT 9007199254740993::bigint AS big, '2026-01-02 03:04:05.678'::timestamp AS plain,
              '2026-01-02 03:04:05+02'::timestamptz AS zoned, 7::int AS small, '{"a": [1]}'::jsonb AS doc, ARRAY['x', 'y"z'] AS list`,
    );
    expect(row).toEqual({
      big: 9007199254740993n,
      plain: new Date('2026-01-02T03:04:05.678Z'),
      zoned: new Date('2026-01-02T01:04:05Z'),
      small: 7,
      doc: { a: [1] },
      list: ['x', 'y"z'],
    });
  });

  it('sends parameters as the statements expect them: arrays, dates, bytes, JSON text', async () => {
    const at = new Date('2026-03-04T05:06:07.123Z');
    const [row] = await sql.$queryRawUnsafe<{ a: string[]; d: Date; b: Buffer; j: unknown }[]>(
      'SELECT $1::text[] AS a, $2::timestamptz AS d, $3::bytea AS b, $4::jsonb AS j',
      ['p,q', null, 'r"s'],
      at,
      Buffer.from([0, 1, 255]),
      JSON.stringify({ k: 'v' }),
    );
    expect(row).toEqual({ a: ['p,q', null, 'r"s'], d: at, b: Buffer.from([0, 1, 255]), j: { k: 'v' } });
  });

  it('runs a statement only when it is awaited, and once', async () => {
    const id = randomUUID();
    const insert = sql.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 1)', [id]);
    expect(isPgStatement(insert)).toBe(true);
    expect(await count(id)).toBe(0);
    expect(await insert).toBe(1);
    expect(await insert).toBe(1); // the same answer, not a second insert (which would fail on the key)
    expect(await count(id)).toBe(1);
    // Already run: a transaction refuses it rather than running it outside itself.
    await expect(sql.transaction([insert])).rejects.toThrow('already run');
  });

  it('commits a transaction as a whole, and rolls every statement back when one fails', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const answers = await sql.transaction([
      sql.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 2)', [a]),
      sql.rows<{ n: bigint }>('SELECT n FROM pg_sql_probe WHERE id = $1::uuid', [a]),
    ]);
    expect(answers).toEqual([1, [{ n: 2n }]]);

    const c = randomUUID();
    const failing = sql.transaction([
      sql.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 3)', [b]),
      sql.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 4)', [a]), // a's key exists
      // Already written behind the failing one (the statements go together): not kept either.
      sql.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 5)', [c]),
    ]);
    const err = await failing.catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
    expect(await count(b)).toBe(0);
    expect(await count(c)).toBe(0);

    // A statement that fails on this side (a value that does not serialise: never sent) rolls back
    // the statements the server ran around it.
    const d = randomUUID();
    const e = randomUUID();
    const unsendable = sql.transaction([
      sql.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 6)', [d]),
      sql.rows('SELECT $1::jsonb AS doc', [{ n: 1n }]),
      sql.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 7)', [e]),
    ]);
    await expect(unsendable).rejects.toThrow(/BigInt/);
    expect(await count(d)).toBe(0);
    expect(await count(e)).toBe(0);
    // The pool is still usable afterwards (the connection was rolled back and returned).
    expect(await sql.transaction([sql.rows('SELECT 1 AS one', [])])).toEqual([[{ one: 1 }]]);
  });

  it('sends a transaction of statements in two round trips: BEGIN with the statements, then COMMIT', async () => {
    const one = new PgSql(database.url, { max: 1 });
    // Turns of the conversation on the connection: a write after something was read starts one.
    let turns = 0;
    let read = true;
    (one as unknown as { pool: pg.Pool }).pool.on('connect', (client) => {
      const stream = (client as unknown as { connection: { stream: Socket } }).connection.stream;
      stream.on('data', () => (read = true));
      const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
      stream.write = ((...args: unknown[]) => {
        if (read) turns++;
        read = false;
        return write(...args);
      }) as Socket['write'];
    });
    try {
      await one.$queryRawUnsafe('SELECT 1'); // connected
      const id = randomUUID();
      const statements = () => [
        one.count('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 6)', [id]),
        one.count('UPDATE pg_sql_probe SET n = n + 1 WHERE id = $1::uuid', [id]),
        one.rows<{ n: bigint }>('SELECT n FROM pg_sql_probe WHERE id = $1::uuid', [id]),
      ];
      turns = 0;
      expect(await one.transaction(statements())).toEqual([1, 1, [{ n: 7n }]]);
      expect(turns).toBe(2);
      // Statements one at a time in an interactive transaction: a turn each and one for COMMIT
      // (BEGIN goes with the first statement).
      turns = 0;
      await one.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('UPDATE pg_sql_probe SET n = n + 1 WHERE id = $1::uuid', id);
        await tx.$executeRawUnsafe('UPDATE pg_sql_probe SET n = n + 1 WHERE id = $1::uuid', id);
      });
      expect(turns).toBe(3);
    } finally {
      await one.end();
    }
  });

  it('prepares a statement from its third run, on the connection that runs it', async () => {
    const one = new PgSql(database.url, { max: 1 }); // one connection: the catalog below is that connection's
    try {
      const id = randomUUID();
      await one.$executeRawUnsafe('INSERT INTO pg_sql_probe (id, n, label) VALUES ($1::uuid, 5, $2)', id, 'prepared');
      const text = `SELECT label FROM pg_sql_probe WHERE id = $1::uuid AND n = 5`;
      const preparedCount = async () =>
        Number(
          (await one.$queryRawUnsafe<{ n: bigint }[]>('SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1', text))[0]!.n,
        );
      for (let i = 0; i < 2; i++) expect(await one.$queryRawUnsafe(text, id)).toEqual([{ label: 'prepared' }]);
      expect(await preparedCount()).toBe(0);
      for (let i = 0; i < 2; i++) expect(await one.$queryRawUnsafe(text, id)).toEqual([{ label: 'prepared' }]);
      expect(await preparedCount()).toBe(1);
    } finally {
      await one.end();
    }
  });

  it('plans every execution anew with customPlans: no generic plan is kept, where a default pool keeps one', async () => {
    const text = `SELECT label FROM pg_sql_probe WHERE n = $1 AND label = $2`;
    const plansAfter = async (pool: PgSql) => {
      for (let i = 0; i < 12; i++) await pool.$queryRawUnsafe(text, i, 'planned');
      const [row] = await pool.$queryRawUnsafe<{ generic: bigint; custom: bigint }[]>(
        'SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE statement = $1',
        text,
      );
      return { generic: Number(row!.generic), custom: Number(row!.custom) };
    };
    const custom = new PgSql(database.url, { max: 1, customPlans: true });
    const plain = new PgSql(database.url, { max: 1 });
    try {
      // Prepared from the third run: ten executions of the prepared statement on each.
      expect(await plansAfter(custom)).toEqual({ generic: 0, custom: 10 });
      const kept = await plansAfter(plain);
      expect(kept.generic).toBeGreaterThan(0);
      // Set in the startup packet beside the schema's search_path, which still applies (the probe table was found).
      expect(await custom.$queryRawUnsafe('SHOW plan_cache_mode')).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
    } finally {
      await custom.end();
      await plain.end();
    }
  });

  it('runs an interactive transaction on one connection: committed when it resolves, rolled back when it throws, hooks after commit', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const committed: string[] = [];
    const answer = await transactionWithHooks(sql, async (tx) => {
      await tx.$executeRawUnsafe('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 6)', a);
      afterCommit(tx, () => committed.push('a'));
      // The transaction's own connection sees its write before the commit; the pool's others do not.
      const mine = await tx.$queryRawUnsafe<{ n: bigint }[]>('SELECT n FROM pg_sql_probe WHERE id = $1::uuid', a);
      expect(await count(a)).toBe(0);
      return mine;
    });
    expect(answer).toEqual([{ n: 6n }]);
    expect(committed).toEqual(['a']);
    expect(await count(a)).toBe(1);

    const err = await transactionWithHooks(sql, async (tx) => {
      await tx.$executeRawUnsafe('INSERT INTO pg_sql_probe (id, n) VALUES ($1::uuid, 7)', b);
      afterCommit(tx, () => committed.push('b'));
      throw new Error('changed my mind');
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('changed my mind');
    expect(committed).toEqual(['a']);
    expect(await count(b)).toBe(0);
  });

  it('bounds each statement of an interactive transaction by its timeout', async () => {
    const err = await sql.$transaction((tx) => tx.$queryRawUnsafe('SELECT pg_sleep(2)'), { timeout: 100 }).catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/statement timeout/);
    expect(await sql.$queryRawUnsafe('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  });
});
