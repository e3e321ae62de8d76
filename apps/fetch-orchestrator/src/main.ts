import { metricsPortOf, serve } from '@wdr/kit/service';
import { createOrchestratorService } from './app.js';
import { createOrchestratorDeps } from './deps.js';
import { loadOrchestratorEnv } from './env.js';

const env = loadOrchestratorEnv();
const deps = createOrchestratorDeps(env);
await serve({
  name: 'fetch-orchestrator',
  log: deps.log,
  graceMs: env.SHUTDOWN_GRACE_MS,
  port: env.PORT,
  metricsPort: metricsPortOf(env),
  host: env.HOST,
  service: createOrchestratorService(deps),
});
