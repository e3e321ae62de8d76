import pg from 'pg';
import { preparedStatementName, type RawSql, type TxCapable } from './db.js';
import { pgPoolFor } from './pg-listen.js';

/**
 * A service's hottest statements on node-postgres directly, beside its Prisma client: the same
 * `RawSql` shape (`$queryRawUnsafe`, `$executeRawUnsafe`), lazy statements that run alone when
 * awaited or together in one transaction (`transaction`), prepared per connection under the
 * names Prisma's adapter gives them (kit/db.ts `preparedStatementName`).
 *
 * Why: Prisma's raw-query path costs more CPU than the statement it carries. Measured on the
 * 2-core development machine, client side only, a one-row `SELECT` by key: 210-280 us through
 * `$queryRawUnsafe`, 54-114 us on node-postgres with a named statement; two `INSERT`s in the array
 * form of `$transaction`: 660-810 us. The HTTP stage runs several such statements per page, and
 * admission two per submission.
 *
 * Values are read as Prisma's raw queries answer them, so code typed for `RawSql` gets the same
 * values from either: `int8` as BigInt, `timestamp` (without zone) as UTC; `timestamptz` as Date,
 * `int4`/`float8` as number, `jsonb` parsed, arrays as arrays. Parameters go as node-postgres
 * prepares them (Date as a timestamp with its offset, arrays as array literals, Buffer and
 * Uint8Array as bytea, other objects as JSON).
 */
export class PgSql implements TxCapable<RawSql> {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string, opts: { max?: number; onError?: (err: Error) => void } = {}) {
    this.pool = pgPoolFor(databaseUrl, {
      max: opts.max ?? 4,
      types: PRISMA_LIKE_TYPES,
      ...(opts.onError ? { onError: opts.onError } : {}),
    });
  }

  /** A statement answering its rows; runs when awaited, or in `transaction`. */
  rows<T>(text: string, values: unknown[]): PgStatement<T[]> {
    return new PgStatement<T[]>(this.pool, text, values, (r) => r.rows as T[]);
  }

  /** A statement answering how many rows it wrote (or read). */
  count(text: string, values: unknown[]): PgStatement<number> {
    return new PgStatement<number>(this.pool, text, values, (r) => r.rowCount ?? 0);
  }

  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T> {
    return this.rows(query, values).then((rows) => rows as T);
  }

  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> {
    return Promise.resolve(this.count(query, values));
  }

  /**
   * Run statements of this PgSql in one transaction, in order, on one connection: their answers in
   * order once it committed; the first failure rolls all of them back and is thrown. A statement
   * already run (awaited) is refused, as Prisma refuses it.
   */
  async transaction(statements: readonly PgStatement<unknown>[]): Promise<unknown[]> {
    for (const s of statements) if (s.started) throw new Error('a statement given to a transaction has already run');
    const client = await this.connect(10_000);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const answers: unknown[] = [];
      try {
        for (const s of statements) answers.push(await s.runOn(client));
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e as Error; // the connection is unusable: dropped below, not returned to the pool
        });
        throw err;
      }
      return answers;
    } finally {
      client.release(broken);
    }
  }

  /**
   * An interactive transaction on one connection: `fn` gets the connection as a RawSql; COMMIT when
   * it resolves, ROLLBACK when it throws (and the error is thrown). `timeout` bounds each statement
   * in it (`statement_timeout`, default 20 s), `maxWait` the wait for a connection (default 10 s).
   * kit/db.ts `transactionWithHooks` runs on it as on Prisma's client.
   */
  async $transaction<R>(fn: (tx: RawSql) => Promise<R>, opts: { timeout?: number; maxWait?: number } = {}): Promise<R> {
    const client = await this.connect(opts.maxWait ?? 10_000);
    let broken: Error | undefined;
    try {
      await client.query(`BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(opts.timeout ?? 20_000))}`);
      try {
        const result = await fn({
          $queryRawUnsafe: <T>(query: string, ...values: unknown[]) => this.rows(query, values).runOn(client) as Promise<T>,
          $executeRawUnsafe: (query: string, ...values: unknown[]) => this.count(query, values).runOn(client),
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e as Error;
        });
        throw err;
      }
    } finally {
      client.release(broken);
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }

  /** A connection of the pool, waited for at most `ms`. */
  private async connect(ms: number): Promise<pg.PoolClient> {
    let timer: NodeJS.Timeout | undefined;
    const pending = this.pool.connect();
    try {
      return await Promise.race([
        pending,
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no database connection free within ${ms} ms`)), ms);
        }),
      ]);
    } catch (err) {
      // A connection that arrives after the wait was given up goes straight back.
      void pending.then(
        (c) => c.release(),
        () => undefined,
      );
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Whether a lazy statement is one of PgSql's (kit consumers run those in a PgSql transaction). */
export const isPgStatement = (s: unknown): s is PgStatement<unknown> => s instanceof PgStatement;

/**
 * One statement, not yet run: awaiting it runs it alone on the pool (once; awaited again, the same
 * answer); `PgSql.transaction` runs it on the transaction's connection instead.
 */
export class PgStatement<T> implements PromiseLike<T> {
  private run: Promise<T> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    readonly text: string,
    readonly values: unknown[],
    private readonly answer: (r: pg.QueryResult) => T,
  ) {}

  get started(): boolean {
    return this.run !== undefined;
  }

  runOn(client: pg.Pool | pg.PoolClient): Promise<T> {
    if (this.run) return this.run;
    const name = preparedStatementName({ sql: this.text });
    this.run = client.query({ ...(name ? { name } : {}), text: this.text, values: this.values }).then(this.answer);
    return this.run;
  }

  then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.runOn(this.pool).then(onfulfilled, onrejected);
  }
}

const INT8 = 20;
const TIMESTAMP = 1114;
/** node-postgres's parsers, but for the two types Prisma's raw queries read otherwise (see PgSql). */
const PRISMA_LIKE_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (format !== 'binary') {
      if (oid === INT8) return (v: string) => BigInt(v);
      if (oid === TIMESTAMP) return (v: string) => new Date(`${v.replace(' ', 'T')}Z`);
    }
    return (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format);
  },
} as unknown as pg.CustomTypesConfig;
