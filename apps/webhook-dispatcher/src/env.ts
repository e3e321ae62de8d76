import { z } from 'zod';
import { baseEnv, databaseEnv, kafkaEnv, loadEnv } from '@wdr/kit/config';

export const envDispatcher = {
  ...baseEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8085),
};

export type DispatcherEnv = ReturnType<typeof loadDispatcherEnv>;

export function loadDispatcherEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(envDispatcher, source);
}
