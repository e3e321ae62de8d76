import { z } from 'zod';
import { baseEnv, databaseEnv, kafkaEnv, loadEnv } from '@wdr/kit/config';

export const envExtractor = {
  ...baseEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8084),
};

export type ExtractorEnv = ReturnType<typeof loadExtractorEnv>;

export function loadExtractorEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(envExtractor, source);
}
