import { z } from 'zod';
import { baseEnv, databaseEnv, internalUrl, kafkaEnv, loadEnv } from '@wdr/kit/config';
import { identityEnv } from '@wdr/kit/service-identity';
import { previousSealingKeysEnv, sealingKeyEnv } from '@wdr/kit/sealing';

const int = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);
/** Unset and empty (how manifests often leave a secret out) mean the same: absent. */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export const envRenderer = {
  ...baseEnv,
  ...identityEnv,
  ...databaseEnv,
  ...kafkaEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8083),
  /** fetch-orchestrator: claims render jobs and takes their results. */
  ORCHESTRATOR_URL: internalUrl('http://127.0.0.1:8081'),
  CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
  /** Chromium processes per instance. */
  BROWSER_POOL_SIZE: int(1, 16, 2),
  /** Pages rendered at once per browser; the consumer takes at most pool size × this many jobs. */
  BROWSER_PAGES_PER_BROWSER: int(1, 16, 2),
  /** A browser is replaced after this many pages (leaks and fragmentation grow with use). */
  BROWSER_MAX_PAGES: int(1, 100_000, 100),
  /** A browser whose process tree (browser, renderers, GPU, utilities) passes this RSS is replaced. */
  BROWSER_MAX_RSS_MB: int(64, 65_536, 1024),
  /** How often each browser is probed; one that does not answer within the interval is killed and replaced. */
  BROWSER_HEALTH_INTERVAL_MS: int(500, 600_000, 10_000),
  /** How often a busy browser's memory is measured: past BROWSER_MAX_RSS_MB retired once idle, past twice that killed at once. */
  BROWSER_MEMORY_CHECK_MS: int(200, 600_000, 2_000),
  /**
   * When the service runs as root (a development machine), Chromium is started as this user (a
   * name, or `uid:gid`) so that its sandbox can run; ignored when the service is not root (the
   * container). Empty: a root service refuses to start unless CHROMIUM_ALLOW_NO_SANDBOX=true.
   */
  CHROMIUM_USER: z.string().default('nobody'),
  /**
   * Development only: start Chromium with --no-sandbox when its sandbox cannot start (instead of
   * refusing to start); /readyz then reports the sandbox as disabled. Never in production.
   */
  CHROMIUM_ALLOW_NO_SANDBOX: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * DNS servers (`ip` or `ip:port`, comma separated) the egress gate resolves target names with;
   * empty: the system resolver. Tests point it at a server they control.
   */
  TARGET_DNS_SERVERS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  /** Hosts or IPs pages may reach although private or loopback (comma separated); empty in production. */
  TARGET_ALLOWLIST: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  /** AES-256-GCM key sealing debug artifacts at rest: `<id>:<base64 of 32 bytes>`, or plain base64 (id k1). */
  DEBUG_ARTIFACT_KEY: sealingKeyEnv(),
  /** Earlier keys that still open what they sealed (`<id>:<base64>,...`): a rotation keeps the old key here. */
  DEBUG_ARTIFACT_KEY_PREVIOUS: previousSealingKeysEnv(),
  /** Debug artifacts of failed requests are purged after this long. */
  DEBUG_ARTIFACT_RETENTION_HOURS: int(1, 168, 24),
  /**
   * CAPTCHA solving provider speaking the createTask / getTaskResult API (2Captcha, CapSolver,
   * Anti-Captcha style): its base URL and client key. Both or neither; without them a CAPTCHA is
   * reported in result_meta and not solved.
   */
  CAPTCHA_SOLVER_URL: optionalText.pipe(z.url().optional()),
  CAPTCHA_SOLVER_KEY: optionalText,
  /** How often a task's result is polled. */
  CAPTCHA_SOLVER_POLL_MS: int(50, 60_000, 5_000),
  /** A solve gives up after this long (and always within the request's timeout_ms). */
  CAPTCHA_SOLVER_TIMEOUT_MS: int(1_000, 300_000, 120_000),
};

export type RendererEnv = ReturnType<typeof loadRendererEnv>;

export function loadRendererEnv(source: Record<string, string | undefined> = process.env) {
  return loadEnv(envRenderer, source);
}
