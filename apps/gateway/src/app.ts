import type { Express } from 'express';
import { databaseReachable, prismaClientOptions } from '@wdr/kit/db';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import { createHttpShell, type ServiceLifecycle } from '@wdr/kit/service';
import { PrismaClient } from './generated/prisma/client.js';
import type { GatewayEnv } from './env.js';
import { RegisterRoutes } from './routes/routes.js';

export interface GatewayDeps {
  env: GatewayEnv;
  db: PrismaClient;
  orchestrator: ServiceClient;
  ledger: ServiceClient;
  log: Logger;
  metrics: ServiceMetrics;
}

/** Wire the real dependencies from configuration (tests and main.ts both use this). */
export function createGatewayDeps(env: GatewayEnv): GatewayDeps {
  return {
    env,
    db: new PrismaClient(prismaClientOptions(env.DATABASE_URL)),
    orchestrator: createServiceClient({ name: 'fetch-orchestrator', baseUrl: env.ORCHESTRATOR_URL, timeoutMs: 10_000 }),
    ledger: createServiceClient({ name: 'billing-ledger', baseUrl: env.LEDGER_URL }),
    log: createLogger('gateway', env.LOG_LEVEL),
    metrics: createMetrics('gateway'),
  };
}

/** The gateway's lifecycle: no Kafka yet, only its database. */
export function createGatewayService(deps: GatewayDeps): ServiceLifecycle {
  return {
    app: createApp(deps),
    start: () => deps.db.$connect(),
    stop: () => deps.db.$disconnect(),
  };
}

export function createApp(deps: GatewayDeps): Express {
  const shell = createHttpShell({
    metrics: deps.metrics,
    log: deps.log,
    readiness: [{ name: 'database', check: () => databaseReachable(deps.db) }],
  });
  shell.app.locals['deps'] = deps;
  RegisterRoutes(shell.app);
  return shell.seal();
}
