import { TERMINAL_REQUEST_STATUSES, VISIBLE_REQUEST_STATUSES, type ConcurrencyCeiling } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { RawSql } from '@wdr/kit/db';
import type { PrismaClient } from '../generated/prisma/client.js';

/**
 * Statuses a request holds before it ends: DataVisibleStatus minus the terminal three. Listed
 * positively (not `NOT IN terminal`) so the count is a few range scans of the
 * (tenant_id, status, ...) index instead of a walk over the tenant's whole history.
 */
export const NON_TERMINAL_STATUSES: readonly string[] = VISIBLE_REQUEST_STATUSES.filter(
  (s) => !(TERMINAL_REQUEST_STATUSES as readonly string[]).includes(s),
);

/** SQL of the tenant's non-terminal requests counted up to a limit, with the placeholders given. */
const activeCount = (tenantId: string, limit: string, statuses: string) =>
  `(SELECT count(*)::int FROM (SELECT 1 FROM data_requests WHERE tenant_id = ${tenantId}::uuid AND status = ANY(${statuses}::text[]) LIMIT ${limit}::int) a)`;

/** Deprecated with its route (api/admission-routes.ts): the previous release's gateway asks for this count. */
export async function countActiveRequests(db: PrismaClient, tenantId: string, limit: number): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ active: number }[]>(`SELECT ${activeCount('$1', '$2', '$3')} AS active`, tenantId, limit, [
    ...NON_TERMINAL_STATUSES,
  ]);
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
    `SELECT EXISTS (SELECT 1 FROM data_requests WHERE id = $1::uuid) AS exists,
            CASE WHEN $3::int IS NULL THEN 0 ELSE ${activeCount('$2', '$3', '$4')} END AS active`,
    requestId,
    tenantId,
    ceiling ? ceiling.limit : null,
    [...NON_TERMINAL_STATUSES],
  );
  return { exists: row?.exists === true, active: Number(row?.active ?? 0) };
}

/** Refuse a new request that would take the tenant past its ceiling. */
export function enforceCeiling(ceiling: ConcurrencyCeiling | undefined, active: number): void {
  if (!ceiling || active + ceiling.others_in_flight + 1 <= ceiling.limit) return;
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
