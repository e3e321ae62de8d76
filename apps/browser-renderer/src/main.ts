import { metricsPortOf, serve } from '@wdr/kit/service';
import { createRendererDeps, createRendererService } from './app.js';
import { loadRendererEnv } from './env.js';

const env = loadRendererEnv();
const deps = createRendererDeps(env);
await serve({
  name: 'browser-renderer',
  log: deps.log,
  graceMs: env.SHUTDOWN_GRACE_MS,
  port: env.PORT,
  metricsPort: metricsPortOf(env),
  host: env.HOST,
  service: createRendererService(deps),
});
