import { z } from 'zod';
import { baseEnv, databaseEnv, kafkaEnv, loadEnv } from '@wdr/kit/config';

export const ledgerEnv = {
  ...baseEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8082),
  /** Pricing version applied to new reservations. */
  PRICING_VERSION: z.coerce.number().int().min(1).default(2),
};

export type LedgerEnv = ReturnType<typeof loadLedgerEnv>;

export function loadLedgerEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(ledgerEnv, source);
}
