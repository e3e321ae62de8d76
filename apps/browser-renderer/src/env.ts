import { z } from 'zod';
import { baseEnv, databaseEnv, kafkaEnv, loadEnv } from '@wdr/kit/config';

export const envRenderer = {
  ...baseEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8083),
  CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
};

export type RendererEnv = ReturnType<typeof loadRendererEnv>;

export function loadRendererEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(envRenderer, source);
}
