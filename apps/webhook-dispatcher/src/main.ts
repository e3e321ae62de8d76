import { metricsPortOf, serve } from '@wdr/kit/service';
import { createDispatcherDeps, createDispatcherService } from './app.js';
import { loadDispatcherEnv } from './env.js';

const env = loadDispatcherEnv();
const deps = createDispatcherDeps(env);
await serve({
  name: 'webhook-dispatcher',
  log: deps.log,
  graceMs: env.SHUTDOWN_GRACE_MS,
  port: env.PORT,
  metricsPort: metricsPortOf(env),
  host: env.HOST,
  service: createDispatcherService(deps),
});
