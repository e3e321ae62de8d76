import { type ConcurrencyCeiling } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { RawSql } from '@wdr/kit/db';
import type { PrismaClient } from '../generated/prisma/client.js';

/**
 * A tenant's requests that have not ended, from `tenant_active` (8 stripes summed; kept by triggers
 * on data_requests in the writing transaction, migration 20261127130000_tenant_active), capped at
 * `limit`: a handful of rows, however many of the tenant's requests are queued.
 */
const activeCount = (tenantId: string, limit: string) =>
  `(SELECT LEAST(coalesce(sum(n), 0), ${limit}::int)::int FROM tenant_active WHERE tenant_id = ${tenantId}::uuid)`;

/** Deprecated with its route (api/admission-routes.ts): the previous release's gateway asks for this count. */
export async function countActiveRequests(db: PrismaClient, tenantId: string, limit: number): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ active: number }[]>(`SELECT ${activeCount('$1', '$2')} AS active`, tenantId, limit);
  return Number(row?.active ?? 0);
}

/** How long a tenant refused for concurrency is told to wait before trying again. */
const CONCURRENCY_RETRY_AFTER_S = 1;

/**
 * What admission reads before it reserves, in one round trip: whether the request id exists (a
 * replay, answered from the stored request and never refused) and, when the gateway passed the
 * tenant's ceiling, how many of the tenant's requests have not ended, counted up to the ceiling.
 */
export async function admissionSnapshot(
  db: RawSql,
  requestId: string,
  tenantId: string,
  ceiling: ConcurrencyCeiling | undefined,
): Promise<{ exists: boolean; active: number }> {
  const [row] = await db.$queryRawUnsafe<{ exists: boolean; active: number }[]>(
    snapshotSelect('$1', '$2', '$3'),
    requestId,
    tenantId,
    ceiling ? ceiling.limit : null,
  );
  return { exists: row?.exists === true, active: Number(row?.active ?? 0) };
}

/**
 * The snapshot's SELECT (`exists`, `active`) with the placeholders given, for a statement that
 * takes it as a CTE (requests/create.ts: a leased admission checks and stores in one statement).
 */
export const snapshotSelect = (id: string, tenantId: string, limit: string) =>
  `SELECT EXISTS (SELECT 1 FROM data_requests WHERE id = ${id}::uuid) AS exists,
          CASE WHEN ${limit}::int IS NULL THEN 0 ELSE ${activeCount(tenantId, limit)} END AS active`;

/** Would a new request take the tenant past its ceiling? (The leased admission statement asks the same in SQL: ceilingOkSql.) */
export function overCeiling(ceiling: ConcurrencyCeiling | undefined, active: number): ceiling is ConcurrencyCeiling {
  return ceiling !== undefined && active + ceiling.others_in_flight + 1 > ceiling.limit;
}

/** overCeiling's negation in SQL, over the snapshot's `active`, with the ceiling's placeholders (limit, others in flight). */
export const ceilingOkSql = (active: string, limit: string, others: string) =>
  `(${limit}::int IS NULL OR ${active} + ${others}::int + 1 <= ${limit}::int)`;

/** Refuse a new request that would take the tenant past its ceiling. */
export function enforceCeiling(ceiling: ConcurrencyCeiling | undefined, active: number): void {
  if (!overCeiling(ceiling, active)) return;
  throw new PublicError('CONCURRENCY_LIMITED', `Too many requests in progress: at most ${ceiling.limit} non-terminal requests.`, {
    retryAfterSeconds: CONCURRENCY_RETRY_AFTER_S,
  });
}

/**
 * Whether the ledger holds a ceiling for this request: its own max_credits_per_request, or a
 * project run's budget room (reserved as the run's ceiling at admission). Paid steps past the base
 * (traffic, a CAPTCHA solve, auto's browser step) are asked for only then.
 */
export function hasCeiling(row: { options: unknown; projectId: string | null; budgetCommitted: number }): boolean {
  const own = (row.options as { max_credits_per_request?: number | null } | null)?.max_credits_per_request;
  return typeof own === 'number' || (row.projectId !== null && row.budgetCommitted > 0);
}
