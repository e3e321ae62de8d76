import pg from 'pg';

/** What the kit's outbox and consumer need from a database client (the Prisma client's raw-SQL surface). */
export interface RawSqlClient {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

/**
 * The kit's raw-SQL surface over node-postgres, for testing the kit itself against the real
 * Postgres without a service's generated Prisma client. Services always pass their Prisma client.
 */
export function pgRawSql(url: string) {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? 'public';
  u.searchParams.delete('schema');
  const pool = new pg.Pool({ connectionString: u.toString(), options: `-c search_path=${schema}`, max: 8 });
  // An idle connection ended by the server (a suite's database dropped WITH (FORCE) as it ends) is
  // reported on the pool; without a listener that event is an uncaught error failing the suite
  // (seen once under load in kit's commit-hooks test). A query on a dead connection still fails.
  pool.on('error', () => undefined);
  const on = (q: pg.Pool | pg.PoolClient): RawSqlClient => ({
    $executeRawUnsafe: async (query, ...values) => (await q.query(query, values)).rowCount ?? 0,
    $queryRawUnsafe: async <T>(query: string, ...values: unknown[]) => (await q.query(query, values)).rows as T,
  });
  return {
    ...on(pool),
    $transaction: async <R>(fn: (tx: RawSqlClient) => Promise<R>): Promise<R> => {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const r = await fn(on(c));
        await c.query('COMMIT');
        return r;
      } catch (err) {
        await c.query('ROLLBACK');
        throw err;
      } finally {
        c.release();
      }
    },
    $connect: async () => undefined,
    $disconnect: () => pool.end(),
  };
}
