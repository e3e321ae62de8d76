import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { BrowserPool } from './domain/browser-pool.js';
import { CaptchaSolver } from './domain/captcha-solver.js';
import { EgressGate } from './domain/egress-gate.js';
import type { RendererEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';

export interface RendererDeps extends KafkaServiceDeps<RendererEnv, PrismaClient> {
  orchestrator: ServiceClient;
  pool: BrowserPool;
  policy: TargetPolicy;
  artifactSealer: Sealer;
  /** Every connection of every render goes through it (the pool's browsers use it as their proxy); proxied traffic is counted there. */
  gate: EgressGate;
  /** Absent when no CAPTCHA provider is configured. */
  captchaSolver: CaptchaSolver | undefined;
}

export function createRendererDeps(env: RendererEnv): RendererDeps {
  const base = kafkaServiceDeps('browser-renderer', env, (options) => new PrismaClient(options));
  if ((env.CAPTCHA_SOLVER_URL === undefined) !== (env.CAPTCHA_SOLVER_KEY === undefined)) {
    throw new Error('CAPTCHA_SOLVER_URL and CAPTCHA_SOLVER_KEY are set together or not at all');
  }
  const policy = new TargetPolicy(env.TARGET_ALLOWLIST, { dnsServers: env.TARGET_DNS_SERVERS });
  const gate = new EgressGate({ log: base.log });
  return {
    ...base,
    orchestrator: createServiceClient({
      name: 'fetch-orchestrator',
      baseUrl: env.ORCHESTRATOR_URL,
      metrics: base.metrics,
      identity: base.identity.signer,
    }),
    pool: new BrowserPool({
      chromiumPath: env.CHROMIUM_PATH,
      size: env.BROWSER_POOL_SIZE,
      pagesPerBrowser: env.BROWSER_PAGES_PER_BROWSER,
      maxPages: env.BROWSER_MAX_PAGES,
      maxRssBytes: env.BROWSER_MAX_RSS_MB * 1024 * 1024,
      healthIntervalMs: env.BROWSER_HEALTH_INTERVAL_MS,
      memoryCheckMs: env.BROWSER_MEMORY_CHECK_MS,
      log: base.log,
      metrics: base.metrics,
      gate,
      chromiumUser: env.CHROMIUM_USER,
      allowNoSandbox: env.CHROMIUM_ALLOW_NO_SANDBOX,
    }),
    policy,
    artifactSealer: Sealer.fromKeys(env.DEBUG_ARTIFACT_KEY, env.DEBUG_ARTIFACT_KEY_PREVIOUS, 'DEBUG_ARTIFACT_KEY'),
    gate,
    captchaSolver:
      env.CAPTCHA_SOLVER_URL && env.CAPTCHA_SOLVER_KEY
        ? new CaptchaSolver({
            baseUrl: env.CAPTCHA_SOLVER_URL,
            clientKey: env.CAPTCHA_SOLVER_KEY,
            pollMs: env.CAPTCHA_SOLVER_POLL_MS,
            timeoutMs: env.CAPTCHA_SOLVER_TIMEOUT_MS,
          })
        : undefined,
  };
}
