import { metricsPortOf, serve } from '@wdr/kit/service';
import { createExtractorDeps, createExtractorService } from './app.js';
import { loadExtractorEnv } from './env.js';

const env = loadExtractorEnv();
const deps = createExtractorDeps(env);
await serve({
  name: 'recipe-extractor',
  log: deps.log,
  graceMs: env.SHUTDOWN_GRACE_MS,
  port: env.PORT,
  metricsPort: metricsPortOf(env),
  host: env.HOST,
  service: createExtractorService(deps),
});
