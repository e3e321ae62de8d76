import pg from 'pg';
import { pgPoolFor } from '@wdr/kit/pg-listen';

/**
 * The delivery loop's few statements (claim, record, fan-out), run on `pg` directly: a small pool of
 * its own, each statement prepared once per connection under a fixed name. The rest of the service
 * (endpoints, reads, failure records, transactions) stays on Prisma; these statements are the ones
 * that run once or more per delivery, and Prisma's raw-query path (argument conversion, the
 * adapter's result mapping, the client's engine round) cost more CPU than the statement itself.
 *
 * Types as Prisma's raw queries answer them: timestamptz as Date, int4 as number, uuids cast to text
 * in the statements.
 */
export class HotSql {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string, max = 4) {
    // An idle client's error (the server restarted) is the pool's to drop; the next query reconnects.
    this.pool = pgPoolFor(databaseUrl, { max, idleTimeoutMillis: 30_000 });
  }

  async rows<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const r = await this.pool.query<T & pg.QueryResultRow>({ name, text, values });
    return r.rows;
  }

  async count(name: string, text: string, values: unknown[]): Promise<number> {
    const r = await this.pool.query({ name, text, values });
    return r.rowCount ?? 0;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
