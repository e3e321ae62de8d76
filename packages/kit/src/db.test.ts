import { describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { isUniqueViolation, pgAdapterFor, preparedStatementName } from './db.js';

describe('pgAdapterFor', () => {
  it("keeps an idle connection longer than the services' background passes are apart (10-15 s)", async () => {
    // The pool is lazy: nothing connects here.
    const adapter = await pgAdapterFor('postgresql://wdr@127.0.0.1:5432/nowhere?schema=s').connect();
    const pool = (adapter as unknown as { client: pg.Pool }).client;
    expect(pool.options.idleTimeoutMillis).toBeGreaterThanOrEqual(30_000);
    expect(pool.options.max).toBe(10);
    await adapter.dispose();
  });
});

describe('preparedStatementName', () => {
  it('names a statement from its third use, the same name for the same text and another for another text', () => {
    const a = { sql: `SELECT 1 AS a_${Math.random()}` };
    const b = { sql: `SELECT 2 AS b_${Math.random()}` };
    expect(preparedStatementName(a)).toBeUndefined();
    expect(preparedStatementName(a)).toBeUndefined();
    const name = preparedStatementName(a);
    expect(name).toMatch(/^wdr_[0-9a-f]{24}$/);
    expect(preparedStatementName(a)).toBe(name);
    for (let i = 0; i < 2; i++) preparedStatementName(b);
    expect(preparedStatementName(b)).not.toBe(name);
  });

  it('stops naming new texts after 500, so a connection never keeps more prepared statements', () => {
    const named = new Set<string>();
    for (let i = 0; i < 700; i++) {
      const q = { sql: `SELECT ${i} AS cap_${Math.random()}` };
      for (let k = 0; k < 3; k++) {
        const n = preparedStatementName(q);
        if (n) named.add(n);
      }
    }
    expect(named.size).toBeLessThanOrEqual(500);
    expect(named.size).toBeGreaterThan(400);
  });
});

describe('isUniqueViolation', () => {
  it("recognises Prisma's P2002 and a raw statement's 23505, and nothing else", () => {
    const prismaError = (code: string, meta: unknown = {}) =>
      Object.assign(new Error('x'), { name: 'PrismaClientKnownRequestError', code, meta });
    expect(isUniqueViolation(prismaError('P2002'))).toBe(true);
    expect(isUniqueViolation(prismaError('P2010', { driverAdapterError: { cause: { kind: 'UniqueConstraintViolation' } } }))).toBe(true);
    expect(isUniqueViolation(prismaError('P2010', { code: '23505' }))).toBe(true);
    expect(isUniqueViolation(prismaError('P2010', { code: '23503' }))).toBe(false);
    expect(isUniqueViolation(Object.assign(new Error('duplicate'), { code: 'P2002' }))).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});
