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
    { connectionString: url.toString(), max: opts.max ?? 10, connectionTimeoutMillis: 5_000, options: `-c search_path=${schema}` },
    { schema },
  );
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
  if (e.name !== 'PrismaClientKnownRequestError') return false;
  if (e.code === 'P2002') return true;
  const meta = JSON.stringify(e.meta ?? {});
  return meta.includes('23505') || meta.includes('UniqueConstraintViolation') || (typeof e.message === 'string' && /unique constraint/i.test(e.message));
}
