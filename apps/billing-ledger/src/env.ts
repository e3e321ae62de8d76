import { z } from 'zod';
import { baseEnv, databaseEnv, kafkaEnv, loadEnv } from '@wdr/kit/config';
import { identityEnv } from '@wdr/kit/service-identity';

export const ledgerEnv = {
  ...baseEnv,
  ...identityEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8082),
  /** Pricing version applied to new reservations. */
  PRICING_VERSION: z.coerce.number().int().min(1).default(2),
  /** A reservation still unresolved this long after admission is released (refunded). */
  RESERVATION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(86_400),
  /** How often stale reservations are looked for. */
  RESERVATION_SWEEP_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** Credit leases (issue 24): how long a lease admits, from its first grant. */
  LEASE_TTL_S: z.coerce.number().int().min(1).max(3_600).default(60),
  /**
   * Then how long before what is left of it returns to the tenant: above any request's life
   * (timeout_ms is at most 5 minutes) plus the settlement command's way to the ledger.
   */
  LEASE_RETURN_GRACE_S: z.coerce.number().int().min(1).max(86_400).default(900),
  /**
   * The most of a tenant's available balance one grant (or top-up) takes, in percent, so leases
   * never lock a small balance away: with 4 slots a replica's leases hold at most about a fifth of
   * it (each grant takes 5 % of what is left). A grant whose share would not cover the prompting
   * request is declined, and that tenant's requests are reserved one by one.
   */
  LEASE_MAX_BALANCE_PERCENT: z.coerce.number().min(0.01).max(100).default(5),
  /** How often leases due for return are looked for. */
  LEASE_SWEEP_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
};

export type LedgerEnv = ReturnType<typeof loadLedgerEnv>;

export function loadLedgerEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(ledgerEnv, source);
}
