import type { PrismaClient } from '../generated/prisma/client.js';

/**
 * Statuses a request holds before it ends: DataVisibleStatus minus the terminal three. Listed
 * positively (not `NOT IN terminal`) so the count is a few range scans of the
 * (tenant_id, status, ...) index instead of a walk over the tenant's whole history.
 */
export const NON_TERMINAL_STATUSES = ['pending', 'running', 'solving_captcha', 'waiting_for_page', 'queued'] as const;

/**
 * How many of the tenant's requests have not ended, counted up to `limit` (the gateway only
 * needs to know whether the tenant is at its concurrency ceiling).
 */
export async function countActiveRequests(db: PrismaClient, tenantId: string, limit: number): Promise<number> {
  return db.dataRequest.count({ where: { tenantId, status: { in: [...NON_TERMINAL_STATUSES] } }, take: limit });
}
