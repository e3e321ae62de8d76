/**
 * Credit leases in the benches. The benches run the production default (leases on); `BENCH_LEASES=false`
 * measures every admission reserving with the ledger. With leases a tenant's balance moves by the
 * blocks its leases take, and their unused rest shows as reserved, so a bench checks the charge as
 * the drop of balance + reserved, and "nothing held" as nothing reserved beyond the open leases' rest.
 */
import { withDatabase } from '@wdr/testkit';

export const BENCH_LEASES = process.env.BENCH_LEASES !== 'false';

/** The orchestrator's lease setting for a bench fleet (`BENCH_LEASE_BLOCK_TOKENS`: its block, else the default). */
export const leaseEnv = () => ({
  LEASE_ENABLED: String(BENCH_LEASES),
  ...(process.env.BENCH_LEASE_BLOCK_TOKENS ? { LEASE_BLOCK_TOKENS: process.env.BENCH_LEASE_BLOCK_TOKENS } : {}),
});

/** What the tenants' open leases still have at the ledger (shown as reserved, not held by any request). */
export async function leaseRestOf(fleet, tenantIds) {
  const { rows } = await withDatabase(fleet.databases['billing-ledger'].url, (c) =>
    c.query(
      `SELECT coalesce(sum(granted - used - returned), 0)::bigint AS rest FROM leases WHERE tenant_id = ANY($1::uuid[]) AND state = 'open'`,
      [tenantIds],
    ),
  );
  return Number(rows[0].rest);
}
