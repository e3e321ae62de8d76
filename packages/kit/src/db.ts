import { createHash } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';

/**
 * Build the driver adapter for a service's database URL. The adapter ignores `?schema=` in the URL,
 * so the Postgres schema is read here and passed explicitly.
 */
export function pgAdapterFor(databaseUrl: string, opts: { max?: number } = {}): PrismaPg {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema') ?? 'public';
  url.searchParams.delete('schema');
  return new PrismaPg(
    // search_path makes the kit's raw SQL (outbox, processed_messages) land in the service's schema.
    {
      connectionString: url.toString(),
      max: opts.max ?? 10,
      connectionTimeoutMillis: 5_000,
      // Kept a minute rather than node-postgres's 10 s: background passes every 10-15 s (lease
      // sweeps, the webhook backlog gauge) otherwise opened a connection each time in an idle
      // service (a backend forked, its prepared statements made again).
      idleTimeoutMillis: 60_000,
      options: `-c search_path=${schema}`,
    },
    // An empty name is node-postgres's unnamed statement (parsed on every call).
    { schema, statementNameGenerator: (query) => preparedStatementName(query) ?? '' },
  );
}

/**
 * Statements the service runs again and again are prepared once per connection (a named statement:
 * Postgres parses it once and can keep its plan) instead of parsed on every call. A statement is
 * named from its third use on, by a hash of its text, so one-off texts (a multi-row insert of an
 * unusual size) never become prepared statements; at most MAX_PREPARED texts get a name per process,
 * which bounds what each connection keeps on the server. Raw SQL therefore names its columns
 * rather than `SELECT *`: a prepared statement whose result columns change under it (a migration
 * while an older pod still runs) fails instead of adapting.
 */
const MAX_PREPARED = 500;
const SEEN_BEFORE_PREPARING = 2;
const statementNames = new Map<string, string>();
const statementUses = new Map<string, number>();

export function preparedStatementName(query: { sql: string }): string | undefined {
  const known = statementNames.get(query.sql);
  if (known !== undefined || statementNames.size >= MAX_PREPARED) return known;
  const uses = (statementUses.get(query.sql) ?? 0) + 1;
  if (uses <= SEEN_BEFORE_PREPARING) {
    if (statementUses.size >= 10 * MAX_PREPARED) statementUses.clear();
    statementUses.set(query.sql, uses);
    return undefined;
  }
  statementUses.delete(query.sql);
  const name = `wdr_${createHash('sha256').update(query.sql).digest('hex').slice(0, 24)}`;
  statementNames.set(query.sql, name);
  return name;
}

/**
 * A node-postgres query of `text`, named by preparedStatementName once it is a statement run again
 * and again (unnamed before): what PgSql sends, for code that queries a pg client of its own.
 */
export function preparedQuery(text: string, values: unknown[]): { name?: string; text: string; values: unknown[] } {
  const name = preparedStatementName({ sql: text });
  return name ? { name, text, values } : { text, values };
}

/**
 * Interactive transactions wait for a pooled connection up to `maxWait`. Prisma's 2 s default turns
 * a burst (200 concurrent admissions on a 10-connection pool, on a busy machine) into 500s; queueing
 * longer is right for short transactions, and a wait that still times out is a 503, not a 500.
 */
export const TRANSACTION_DEFAULTS = { maxWait: 10_000, timeout: 20_000 } as const;

export interface PrismaClientOptions {
  adapter: PrismaPg;
  transactionOptions: { maxWait: number; timeout: number };
}

/** What every service passes to its generated PrismaClient constructor. */
export function prismaClientOptions(databaseUrl: string, opts: { max?: number } = {}): PrismaClientOptions {
  return { adapter: pgAdapterFor(databaseUrl, opts), transactionOptions: { ...TRANSACTION_DEFAULTS } };
}

/** The part of a Prisma client the kit needs: raw SQL and interactive transactions. */
export interface RawSql {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

/** A Prisma client seen through the kit: `Tx` is the service's own transaction client type. */
export interface TxCapable<Tx extends RawSql = RawSql> extends RawSql {
  $transaction<R>(fn: (tx: Tx) => Promise<R>, opts?: { timeout?: number; maxWait?: number }): Promise<R>;
}

const commitHooks = new WeakMap<object, (() => void)[]>();

/**
 * Run `fn` once the transaction `tx` has committed: for effects outside the database that must not
 * happen for a transaction that rolls back and is retried (a metric counted twice). Only a
 * transaction opened by `transactionWithHooks` knows its commit; in any other, `fn` runs at once
 * (as if the caller had run it inline).
 */
export function afterCommit(tx: object, fn: () => void): void {
  const hooks = commitHooks.get(tx);
  if (hooks) hooks.push(fn);
  else fn();
}

/** `db.$transaction(fn)` whose `afterCommit` hooks run after the commit, and never after a rollback. */
export async function transactionWithHooks<Tx extends RawSql, R>(
  db: TxCapable<Tx>,
  fn: (tx: Tx) => Promise<R>,
  opts?: { timeout?: number; maxWait?: number },
): Promise<R> {
  const hooks: (() => void)[] = [];
  const result = await db.$transaction(async (tx) => {
    hooks.length = 0; // a transaction retried by its client starts its hooks over
    commitHooks.set(tx as object, hooks);
    return fn(tx);
  }, opts);
  for (const hook of hooks) hook();
  return result;
}

/**
 * A purge in bounded statements: `deleteBatch(limit)` deletes at most `limit` rows (oldest first,
 * on an index) and answers how many; it runs again until a statement deletes fewer, so a large
 * backlog never holds one long transaction or many locks. Returns the total deleted.
 */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch(batch);
    total += deleted;
    if (deleted < batch) return total;
  }
}

export async function databaseReachable(db: RawSql): Promise<boolean> {
  await db.$queryRawUnsafe('SELECT 1');
  return true;
}

/**
 * A duplicate key: Prisma's model API says P2002; raw SQL through the driver adapter fails with
 * the adapter's UniqueConstraintViolation or SQLSTATE 23505 somewhere in the error's metadata.
 */
export function isUniqueViolation(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const e = err as { name?: unknown; code?: unknown; meta?: unknown; message?: unknown };
  // node-postgres (kit/pg-sql.ts): the server's SQLSTATE itself.
  if (e.code === '23505' && typeof (e as { severity?: unknown }).severity === 'string') return true;
  if (e.name !== 'PrismaClientKnownRequestError') return false;
  if (e.code === 'P2002') return true;
  const meta = JSON.stringify(e.meta ?? {});
  return (
    meta.includes('23505') ||
    meta.includes('UniqueConstraintViolation') ||
    (typeof e.message === 'string' && /unique constraint/i.test(e.message))
  );
}
