import { metricsPortOf, serve } from '@wdr/kit/service';
import { createLedgerService } from './app.js';
import { createLedgerDeps } from './deps.js';
import { loadLedgerEnv } from './env.js';

const env = loadLedgerEnv();
const deps = createLedgerDeps(env);
await serve({
  name: 'billing-ledger',
  log: deps.log,
  graceMs: env.SHUTDOWN_GRACE_MS,
  port: env.PORT,
  metricsPort: metricsPortOf(env),
  host: env.HOST,
  service: createLedgerService(deps),
});
