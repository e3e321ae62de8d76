import { Redis } from 'ioredis';
import { prismaClientOptions } from '@wdr/kit/db';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { createLogger, type Logger } from '@wdr/kit/log';
import { createMetrics, type ServiceMetrics } from '@wdr/kit/metrics';
import { serviceIdentityFrom } from '@wdr/kit/service-identity';
import type { KafkaBus } from '@wdr/kit/kafka';
import { PgListener, pgConnectionFor } from '@wdr/kit/pg-listen';
import { PrismaClient } from './generated/prisma/client.js';
import { CREDENTIALS_CHANNEL, CredentialCache } from './domain/auth/credential-cache.js';
import { withLimiterScripts, type LimiterRedis } from './domain/limits/redis-scripts.js';
import type { GatewayEnv } from './env.js';
import { LiveRequestEvents } from './sse/live-request-events.js';
import { StreamListeners } from './sse/stream-listeners.js';

export interface GatewayDeps {
  env: GatewayEnv;
  db: PrismaClient;
  orchestrator: ServiceClient;
  ledger: ServiceClient;
  /** browser-renderer: debug artifacts of failed requests. */
  renderer: ServiceClient;
  /** recipe-extractor: recipes, their capabilities, and the extraction runs of requests. */
  extractor: ServiceClient;
  /** webhook-dispatcher: webhook endpoints and their delivery attempts (browser workflows). */
  webhooks: ServiceClient;
  /** Rate-limit and admission counters only; nothing durable lives in Redis. */
  redis: LimiterRedis;
  log: Logger;
  metrics: ServiceMetrics;
  /** request.lifecycle events from Kafka, fanned out to the open event streams. */
  liveEvents: LiveRequestEvents;
  /** This instance's registration as a listener of the lifecycles it streams (the orchestrator mirrors only those). */
  streamListeners: StreamListeners;
  /** Recently verified credentials, dropped per tenant when the database says they changed. */
  credentials: CredentialCache;
  /** Keeps `credentials` told of changes (LISTEN wdr_credentials). */
  credentialChanges: PgListener;
}

/** Wire the real dependencies from configuration (tests and main.ts both use this). */
export function createGatewayDeps(env: GatewayEnv): GatewayDeps {
  const log = createLogger('gateway', env.LOG_LEVEL);
  // Short command timeout and one retry: admission limits fail open rather than wait on Redis.
  const redis = withLimiterScripts(
    new Redis(env.REDIS_URL, { lazyConnect: true, commandTimeout: 500, maxRetriesPerRequest: 1, connectTimeout: 2_000 }),
  );
  redis.on('error', (err: unknown) => log.warn({ err }, 'redis connection error'));
  const metrics = createMetrics('gateway');
  // The gateway serves no internal route; its calls to the others carry its identity.
  const identity = serviceIdentityFrom('gateway', env).signer;
  // Kafka serves only the live event streams: the client (and kafkajs) is loaded when the first opens.
  let bus: Promise<KafkaBus> | undefined;
  const busOnce = () => (bus ??= import('@wdr/kit/kafka').then(({ KafkaBus }) => KafkaBus.fromEnv('gateway', env, log)));
  const credentials = new CredentialCache({ ttlMs: env.AUTH_CACHE_TTL_MS, maxEntries: env.AUTH_CACHE_MAX_ENTRIES });
  const credentialChanges = new PgListener({
    connection: pgConnectionFor(env.DATABASE_URL).config,
    channel: CREDENTIALS_CHANNEL,
    log,
    onNotify: (tenantId) => credentials.invalidateTenant(tenantId),
    onListening: () => credentials.trust(true),
    onLost: () => credentials.trust(false),
    heartbeatMs: env.AUTH_LISTEN_HEARTBEAT_MS,
    heartbeatTimeoutMs: Math.min(2_000, Math.ceil(env.AUTH_LISTEN_HEARTBEAT_MS / 2)),
  });
  const orchestrator = createServiceClient({
    name: 'fetch-orchestrator',
    baseUrl: env.ORCHESTRATOR_URL,
    timeoutMs: 10_000,
    metrics,
    identity,
  });
  return {
    env,
    credentials,
    credentialChanges,
    liveEvents: new LiveRequestEvents({ bus: busOnce, log, metrics }),
    db: new PrismaClient(prismaClientOptions(env.DATABASE_URL)),
    orchestrator,
    streamListeners: new StreamListeners({ orchestrator, log }),
    ledger: createServiceClient({ name: 'billing-ledger', baseUrl: env.LEDGER_URL, metrics, identity }),
    renderer: createServiceClient({ name: 'browser-renderer', baseUrl: env.RENDERER_URL, metrics, identity }),
    extractor: createServiceClient({ name: 'recipe-extractor', baseUrl: env.EXTRACTOR_URL, metrics, identity }),
    webhooks: createServiceClient({ name: 'webhook-dispatcher', baseUrl: env.WEBHOOKS_URL, metrics, identity }),
    redis,
    log,
    metrics,
  };
}
