import { metricsPortOf, serve } from '@wdr/kit/service';
import { createGatewayService } from './app.js';
import { createGatewayDeps } from './deps.js';
import { loadGatewayEnv } from './env.js';

const env = loadGatewayEnv();
const deps = createGatewayDeps(env);
await serve({
  name: 'gateway',
  log: deps.log,
  graceMs: env.SHUTDOWN_GRACE_MS,
  port: env.PORT,
  metricsPort: metricsPortOf(env),
  host: env.HOST,
  service: createGatewayService(deps),
});
