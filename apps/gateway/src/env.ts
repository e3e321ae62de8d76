import { z } from 'zod';
import { baseEnv, databaseEnv, internalUrl, loadEnv } from '@wdr/kit/config';

export const gatewayEnv = {
  ...baseEnv,
  ...databaseEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  ORCHESTRATOR_URL: internalUrl('http://127.0.0.1:8081'),
  LEDGER_URL: internalUrl('http://127.0.0.1:8082'),
  /** Secret mixed into API key hashes, so a leaked table alone cannot be brute-forced offline. */
  API_KEY_PEPPER: z.string().min(16),
};

export type GatewayEnv = ReturnType<typeof loadGatewayEnv>;

export function loadGatewayEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(gatewayEnv, source);
}
