import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { BrowserPool } from './domain/browser-pool.js';
import type { RendererEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';

export interface RendererDeps extends KafkaServiceDeps<RendererEnv, PrismaClient> {
  orchestrator: ServiceClient;
  pool: BrowserPool;
  policy: TargetPolicy;
  artifactSealer: Sealer;
}

export function createRendererDeps(env: RendererEnv): RendererDeps {
  const base = kafkaServiceDeps('browser-renderer', env, (options) => new PrismaClient(options));
  return {
    ...base,
    orchestrator: createServiceClient({ name: 'fetch-orchestrator', baseUrl: env.ORCHESTRATOR_URL }),
    pool: new BrowserPool({
      chromiumPath: env.CHROMIUM_PATH,
      size: env.BROWSER_POOL_SIZE,
      pagesPerBrowser: env.BROWSER_PAGES_PER_BROWSER,
      maxPages: env.BROWSER_MAX_PAGES,
      maxRssBytes: env.BROWSER_MAX_RSS_MB * 1024 * 1024,
      healthIntervalMs: env.BROWSER_HEALTH_INTERVAL_MS,
      log: base.log,
      metrics: base.metrics,
    }),
    policy: new TargetPolicy(env.TARGET_ALLOWLIST),
    artifactSealer: Sealer.fromBase64(env.DEBUG_ARTIFACT_KEY),
  };
}
