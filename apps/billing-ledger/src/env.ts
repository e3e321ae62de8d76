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
};

export type LedgerEnv = ReturnType<typeof loadLedgerEnv>;

export function loadLedgerEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(ledgerEnv, source);
}
