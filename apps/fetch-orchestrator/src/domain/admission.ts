import type { ConcurrencyCeiling } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../generated/prisma/client.js';

/**
 * Statuses a request holds before it ends: DataVisibleStatus minus the terminal three. Listed
 * positively (not `NOT IN terminal`) so the count is a few range scans of the
 * (tenant_id, status, ...) index instead of a walk over the tenant's whole history.
 */
export const NON_TERMINAL_STATUSES = ['pending', 'running', 'solving_captcha', 'waiting_for_page', 'queued'] as const;

/** Deprecated with its route (api/admission-routes.ts): the previous release's gateway asks for this count. */
export async function countActiveRequests(db: PrismaClient, tenantId: string, limit: number): Promise<number> {
  return db.dataRequest.count({ where: { tenantId, status: { in: [...NON_TERMINAL_STATUSES] } }, take: limit });
}

/** How long a tenant refused for concurrency is told to wait before trying again. */
const CONCURRENCY_RETRY_AFTER_S = 1;

/**
 * What admission reads before it reserves, in one round trip: whether the request id exists (a
 * replay, answered from the stored request and never refused) and, when the gateway passed the
 * tenant's ceiling, how many of the tenant's requests have not ended, counted up to the ceiling.
 */
export async function admissionSnapshot(db: PrismaClient, requestId: string, tenantId: string, ceiling: ConcurrencyCeiling | undefined): Promise<{ exists: boolean; active: number }> {
  const [row] = await db.$queryRawUnsafe<{ exists: boolean; active: number }[]>(
    `SELECT EXISTS (SELECT 1 FROM data_requests WHERE id = $1::uuid) AS exists,
            CASE WHEN $3::int IS NULL THEN 0 ELSE
              (SELECT count(*)::int FROM (SELECT 1 FROM data_requests WHERE tenant_id = $2::uuid AND status = ANY($4::text[]) LIMIT $3::int) a)
            END AS active`,
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
