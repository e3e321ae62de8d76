import type { RegisterLifecycleListenersBody, ReleaseLifecycleListenerBody } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { RawSql } from '@wdr/kit/db';

/** The registration that stands for every tenant (lifecycle_listeners' nil tenant). */
export const EVERY_TENANT = '00000000-0000-0000-0000-000000000000';

/** How long a registration waits for the tenant's event writes in flight before it gives up (503). */
const LOCK_TIMEOUT = '10s';

/**
 * Who listens to a tenant's request lifecycle. A request event is stored for every request, but
 * mirrored on `request.lifecycle` (outbox row, Kafka message, every consumer's fetch) only for a
 * tenant somebody listens to: webhook-dispatcher for tenants with endpoints, a gateway instance for
 * tenants it streams events of. The gate is the outbox's insert trigger (migration
 * 20261127140000_lifecycle_listeners), so every path that writes a mirror is covered by it.
 *
 * Registering is ordered with the tenant's event writes by an advisory lock: each writer holds it
 * shared from the moment it looks, and a new registration takes it exclusively around its insert,
 * so it is answered only after every event written without a mirror has been committed to the
 * stored history, where the listener's catch-up finds it; the first write after the answer
 * mirrors. A renewal of a registration still in force changes nothing about that and takes no lock.
 */
export async function registerLifecycleListeners(
  sql: RawSql,
  caller: string,
  cmd: RegisterLifecycleListenersBody,
): Promise<{ registered: number }> {
  assertHolderOf(caller, cmd.holder);
  const expiresAt = `CASE WHEN $3::int IS NULL THEN NULL ELSE now() + $3::int * interval '1 second' END`;
  const tenants = [...new Set(cmd.tenant_ids)];
  // Registrations still in force are renewed in one statement (a gateway's renewal, the
  // dispatcher's sync at start); only the others need the lock, one tenant at a time.
  const renewed = await sql.$queryRawUnsafe<{ tenant_id: string }[]>(
    `UPDATE lifecycle_listeners SET expires_at = ${expiresAt}, updated_at = now()
      WHERE tenant_id = ANY($1::uuid[]) AND holder = $2 AND (expires_at IS NULL OR expires_at > now())
      RETURNING tenant_id::text AS tenant_id`,
    tenants,
    cmd.holder,
    cmd.ttl_seconds,
  );
  const inForce = new Set(renewed.map((r) => r.tenant_id));
  for (const tenantId of tenants.filter((t) => !inForce.has(t))) {
    try {
      // One statement, so one transaction without a round trip of its own: the lock (bounded by
      // lock_timeout, set first), then the row; it commits, and lets the writers go, with the statement.
      await sql.$executeRawUnsafe(
        `WITH t AS MATERIALIZED (SELECT set_config('lock_timeout', '${LOCK_TIMEOUT}', true) AS v),
              l AS MATERIALIZED (SELECT pg_advisory_xact_lock(wdr_lifecycle_lock_key($1::uuid))::text AS locked FROM t)
         INSERT INTO lifecycle_listeners (tenant_id, holder, expires_at)
         SELECT $1::uuid, $2, ${expiresAt} FROM l
         ON CONFLICT (tenant_id, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at, updated_at = now()`,
        tenantId,
        cmd.holder,
        cmd.ttl_seconds,
      );
    } catch (err) {
      if (isLockTimeout(err)) {
        throw new PublicError('DEPENDENCY_UNAVAILABLE', 'The tenant has event writes in flight for too long; register again.');
      }
      throw err;
    }
  }
  if (cmd.complete) {
    // Every tenant this holder listens to is registered now: its "every tenant" registration ends.
    await sql.$executeRawUnsafe(`DELETE FROM lifecycle_listeners WHERE tenant_id = $1::uuid AND holder = $2`, EVERY_TENANT, cmd.holder);
  }
  // The holder's lapsed registrations (a gateway instance's tenants whose streams closed).
  await sql.$executeRawUnsafe(`DELETE FROM lifecycle_listeners WHERE holder = $1 AND expires_at < now()`, cmd.holder);
  return { registered: tenants.length };
}

/** The holder no longer listens to the tenant. Needs no lock: a write that still mirrors costs a message, nothing else. */
export async function releaseLifecycleListener(
  sql: RawSql,
  caller: string,
  cmd: ReleaseLifecycleListenerBody,
): Promise<{ released: boolean }> {
  assertHolderOf(caller, cmd.holder);
  const n = await sql.$executeRawUnsafe(
    `DELETE FROM lifecycle_listeners WHERE tenant_id = $1::uuid AND holder = $2`,
    cmd.tenant_id,
    cmd.holder,
  );
  return { released: n > 0 };
}

/** A service registers only under its own name (`gateway`, `gateway:<instance>`). */
function assertHolderOf(caller: string, holder: string): void {
  if (holder !== caller && !holder.startsWith(`${caller}:`)) {
    throw new PublicError('FORBIDDEN', `A listener registered by ${caller} must be named after it.`);
  }
}

function isLockTimeout(err: unknown): boolean {
  // 55P03: lock_not_available (lock_timeout).
  return (err as { code?: unknown } | null)?.code === '55P03' || /lock timeout/i.test(err instanceof Error ? err.message : String(err));
}
