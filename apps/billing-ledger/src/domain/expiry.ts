import type { Logger } from '@wdr/kit/log';
import type { PrismaClient } from '../generated/prisma/client.js';
import { settle, type SettlementFlows } from './settlement.js';

/**
 * The oldest reservations still open past the TTL ($1 seconds), at most $2. Raw SQL: the sweep runs
 * every RESERVATION_SWEEP_MS in an idle ledger too, and the model API compiled its query at each
 * call. It reads the partial index of open reservations, not the table (expiry.test.ts).
 */
export const STALE_RESERVATIONS_SQL = `SELECT request_id::text AS "requestId", route_mode AS "routeMode" FROM reservations
  WHERE state = 'reserved' AND created_at < now() - make_interval(secs => $1::float8)
  ORDER BY created_at LIMIT $2`;

/**
 * A reservation nobody settles is released after its time to live: the orchestrator died between
 * the ledger's answer and its own commit (the request was never stored), or a settlement command
 * was lost. Expiry is a refund through the ordinary settlement path, so it resolves exactly once
 * and announces `refunded`; a settlement arriving later finds it resolved and changes nothing (the
 * request is then free, the tenant's gain, never its loss). The TTL is far above any request's
 * lifetime (timeout_ms is at most 5 minutes).
 */
export async function expireStaleReservations(
  db: PrismaClient,
  ttlSeconds: number,
  log: Logger,
  limit = 100,
  onRefunded?: (flows: SettlementFlows) => void,
): Promise<number> {
  const stale = await db.$queryRawUnsafe<{ requestId: string; routeMode: string }[]>(STALE_RESERVATIONS_SQL, ttlSeconds, limit);
  let expired = 0;
  for (const r of stale) {
    const flows: SettlementFlows = { charged: 0, released: 0 };
    const outcome = await db.$transaction((tx) =>
      settle(tx, { request_id: r.requestId, outcome: 'cancelled', route_mode: r.routeMode, captcha_tokens: 0 }, flows),
    );
    if (outcome === 'refunded') {
      expired++;
      onRefunded?.(flows); // after commit
    }
  }
  if (expired > 0) log.warn({ expired }, 'stale reservations released');
  return expired;
}
