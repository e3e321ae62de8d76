import pg from 'pg';
import { preparedQuery, type RawSql, type TxCapable } from './db.js';
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

  constructor(
    databaseUrl: string,
    opts: {
      max?: number;
      idleTimeoutMillis?: number;
      onError?: (err: Error) => void;
      /**
       * Plan every execution of a prepared statement with its parameters and the tables' sizes now
       * (`plan_cache_mode = force_custom_plan`), instead of the generic plan Postgres may keep after
       * five executions. For statements over tables that grow from nothing within seconds (a burst
       * into a fresh queue): a generic plan chosen while the table was empty stays (until the next
       * ANALYZE) when it has become a scan of every row. Costs a plan per execution.
       */
      customPlans?: boolean;
      /**
       * Price bitmap scans, sorts and hash joins out of the plans of this pool's statements
       * (`enable_bitmapscan`, `enable_sort`, `enable_hashjoin` off: still used where no other plan
       * exists). For statements that take a few rows of a queue through its indexes, whose
       * statistics are stale in every burst (taken while the queue was empty, or while nothing in it
       * was pending): believing it nearly empty, the planner otherwise read every pending row
       * through a bitmap and sorted them to take the first few, and scanned the whole table in a
       * nested loop to update the rows a claim picked. JIT compilation is off on these
       * connections too: a plan that keeps a priced-out step (an in-memory sort of a few hundred
       * rows, where no other plan exists) costs more than `jit_above_cost` by the penalty alone, and
       * Postgres then compiled it at every execution (0.55 s for a 256-message fan-out).
       */
      indexPlans?: boolean;
    } = {},
  ) {
    this.pool = pgPoolFor(databaseUrl, {
      max: opts.max ?? 4,
      // `transaction` writes its statements without waiting for each answer (see there); a
      // statement run alone, or one at a time in `$transaction`, goes as before.
      pipeline: true,
      ...(opts.idleTimeoutMillis !== undefined ? { idleTimeoutMillis: opts.idleTimeoutMillis } : {}),
      settings: {
        ...(opts.customPlans ? { plan_cache_mode: 'force_custom_plan' } : {}),
        ...(opts.indexPlans ? { enable_bitmapscan: 'off', enable_sort: 'off', enable_hashjoin: 'off', jit: 'off' } : {}),
      },
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
   *
   * Two round trips, not two more than the statements: BEGIN and the statements are written
   * together (node-postgres's pipeline mode; the server runs them in order, each answered in turn),
   * and COMMIT follows once every one of them succeeded. A statement that fails aborts the
   * transaction there (the ones behind it fail with it); a failure on this side (a value that does
   * not serialise, an answer that does not parse) leaves the server's transaction open without it:
   * in both cases ROLLBACK is sent instead of COMMIT, so nothing of the transaction is kept.
   */
  async transaction(statements: readonly PgStatement<unknown>[]): Promise<unknown[]> {
    for (const s of statements) if (s.started) throw new Error('a statement given to a transaction has already run');
    return this.onOneConnection('BEGIN', async (client) => {
      const settled = await Promise.allSettled(statements.map((s) => s.runOn(client)));
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value);
    });
  }

  /**
   * An interactive transaction on one connection: `fn` gets the connection as a RawSql; COMMIT when
   * it resolves, ROLLBACK when it throws (and the error is thrown). `timeout` bounds each statement
   * in it (`statement_timeout`, default 20 s). The wait for a connection is the pool's (5 s,
   * kit/pg-listen.ts: node-postgres's "timeout exceeded when trying to connect", a dependency
   * failure for the consumers); `maxWait` is taken for Prisma's signature only. kit/db.ts
   * `transactionWithHooks` runs on it as on Prisma's client.
   */
  $transaction<R>(fn: (tx: RawSql) => Promise<R>, opts: { timeout?: number; maxWait?: number } = {}): Promise<R> {
    const begin = `BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(opts.timeout ?? 20_000))}`;
    return this.onOneConnection(begin, (client) =>
      fn({
        $queryRawUnsafe: <T>(query: string, ...values: unknown[]) => this.rows(query, values).runOn(client) as Promise<T>,
        $executeRawUnsafe: (query: string, ...values: unknown[]) => this.count(query, values).runOn(client),
      }),
    );
  }

  /**
   * `begin`, `work`, COMMIT on one connection of the pool; on any failure (BEGIN and COMMIT
   * included) ROLLBACK and the failure thrown. A connection whose ROLLBACK fails too is broken
   * (the server went away): the pool drops it instead of handing it out again.
   *
   * BEGIN is not waited for: it goes out with `work`'s first statement (pipeline mode), one round
   * trip fewer per transaction. On a connection the pool hands out (idle, never left inside a
   * transaction: every transaction here ends in COMMIT or ROLLBACK, or the connection is dropped)
   * BEGIN and SET LOCAL have nothing to fail on but the connection itself, and then every statement
   * behind them fails too. Should it fail all the same, the transaction fails: its statements may
   * have run outside it, which is why no answer of `work` is given.
   */
  private async onOneConnection<R>(begin: string, work: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const begun = client.query(begin);
      const result = await Promise.allSettled([begun, work(client)]);
      for (const r of result) if (r.status === 'rejected') throw r.reason;
      await client.query('COMMIT');
      return (result[1] as PromiseFulfilledResult<R>).value;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  end(): Promise<void> {
    return this.pool.end();
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
    this.run = client.query(preparedQuery(this.text, this.values)).then(this.answer);
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
