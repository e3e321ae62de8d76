import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { closeAdminCommands } from './admin-command.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { identityEnvOf } from './identity.js';
import { freePort, releasePort } from './ports.js';
import { KAFKA_BROKERS, SERVICE_NAMES, SERVICE_NODE_ARGS, SERVICE_PROCESS_ENV, type ServiceName } from './services.js';
import { signalTree } from './process-tree.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** A prefix that gives a suite its own topics and consumer groups on the shared broker. */
export function uniqueTopicPrefix(): string {
  return `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}.`;
}

interface Member {
  service: ServiceName;
  port: number;
  metricsPort: number;
  env: Record<string, string>;
  proc: ChildProcess | undefined;
  output: string[];
  taps: Set<(chunk: string) => void>;
}

export interface Fleet {
  url: (service: ServiceName) => string;
  /** Where a service serves /metrics (its METRICS_PORT). */
  metricsUrl: (service: ServiceName) => string;
  databases: Record<ServiceName, TestDatabase>;
  topicPrefix: string;
  /** Send a signal (SIGKILL for a crash) and wait until the process is gone. */
  kill: (service: ServiceName, signal?: NodeJS.Signals) => Promise<number | null>;
  /** Start a stopped service; with `env`, these variables over its environment from now on (a restart with another configuration). */
  start: (service: ServiceName, env?: Record<string, string>) => Promise<void>;
  /** The environment a service runs with. */
  envOf: (service: ServiceName) => Record<string, string>;
  /** Process id of a running service (to find its Chromium children, say). */
  pid: (service: ServiceName) => number | undefined;
  /** Last lines a service printed (for failure messages). */
  logs: (service: ServiceName) => string;
  /** Everything a service prints from now on (its pino lines), chunk by chunk, until the returned function is called. */
  tap: (service: ServiceName, listener: (chunk: string) => void) => () => void;
  /** SIGTERM to every service (SIGKILL after a short bound), then drop the databases. */
  stop: () => Promise<void>;
}

/**
 * How long a stopping test fleet waits for a service's graceful exit before SIGKILL (its data is
 * dropped right after). `WDR_FLEET_STOP_BOUND_MS`: longer, for a bench whose services write a CPU
 * profile at exit (`--cpu-prof`), which a SIGKILL loses.
 */
const stopBoundMs = () => Number(process.env['WDR_FLEET_STOP_BOUND_MS'] ?? 3_000);

/**
 * The whole fleet as real processes (`node apps/<service>/dist/main.js`) on free ports, each with
 * its own cloned database, sharing one topic prefix on the real broker.
 */
export async function startFleet(
  opts: {
    env?: Partial<Record<ServiceName | 'all', Record<string, string>>>;
    /** Reach Postgres through this local port (a TcpProxy the test can cut) instead of directly. */
    postgresPort?: number;
    /** Reach Kafka through this local port (a startKafkaProxy the test can cut) instead of directly. */
    kafkaPort?: number;
    /**
     * A service counts as started once /readyz answers 200, which needs only its database; by
     * default the fleet also waits for every reported check (Kafka connected, consumers joined).
     * false: HTTP readiness is enough (a fleet started while Kafka is unreachable).
     */
    waitForKafka?: boolean;
    /** Also append each service's output to `<logDir>/<service>.log` (a shared fleet's logs, read by other processes). */
    logDir?: string;
  } = {},
): Promise<Fleet> {
  const topicPrefix = uniqueTopicPrefix();
  const databases = {} as Record<ServiceName, TestDatabase>;
  const members = new Map<ServiceName, Member>();
  await Promise.all(
    SERVICE_NAMES.map(async (service) => {
      databases[service] = await createTestDatabase(service);
    }),
  );
  for (const service of SERVICE_NAMES) {
    members.set(service, {
      service,
      port: await freePort(),
      metricsPort: await freePort(),
      env: {},
      proc: undefined,
      output: [],
      taps: new Set(),
    });
  }
  if (opts.logDir) mkdirSync(opts.logDir, { recursive: true });
  const url = (s: ServiceName) => `http://127.0.0.1:${members.get(s)!.port}`;
  const shared = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env['WDR_TEST_LOG_LEVEL'] ?? 'warn',
    KAFKA_BROKERS: opts.kafkaPort !== undefined ? `127.0.0.1:${opts.kafkaPort}` : KAFKA_BROKERS.join(','),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    // The relays wake on their schema's NOTIFY at commit; the poll is only the safety net for a
    // notification lost while the listening connection was down (an outage test), and at 100 ms it
    // cost every idle fleet some 50 queries a second.
    OUTBOX_POLL_MS: '1000',
    // Short enough that a killed consumer's work resumes within seconds, long enough that a member
    // starved of CPU on a busy 2-core machine is not evicted (6 s caused rebalance stalls).
    KAFKA_SESSION_TIMEOUT_MS: '10000',
    // A stopping service waits for its consumers' fetches in flight: a second, not five.
    KAFKA_FETCH_WAIT_MS: '1000',
    // Credit leases are on in production (the orchestrator's default). Test fleets reserve every
    // request with the ledger unless a test turns leases on (credit-leases.e2e): most suites read a
    // request's own reservation and charge, and the balance moving by exactly it.
    LEASE_ENABLED: 'false',
    ORCHESTRATOR_URL: url('fetch-orchestrator'),
    LEDGER_URL: url('billing-ledger'),
    RENDERER_URL: url('browser-renderer'),
    EXTRACTOR_URL: url('recipe-extractor'),
    WEBHOOKS_URL: url('webhook-dispatcher'),
    API_KEY_PEPPER: 'test-pepper-not-secret-0123456789',
    TARGET_URL_KEY: Buffer.alloc(32, 7).toString('base64'),
    DEBUG_ARTIFACT_KEY: Buffer.alloc(32, 9).toString('base64'),
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 11).toString('base64'),
    // One browser with two pages per test fleet: enough to show concurrency, light on a 2-core machine.
    BROWSER_POOL_SIZE: '1',
    BROWSER_PAGES_PER_BROWSER: '2',
    TARGET_ALLOWLIST: '127.0.0.1',
    SHUTDOWN_GRACE_MS: '10000',
  };
  for (const m of members.values()) {
    const databaseUrl = new URL(databases[m.service].url);
    if (opts.postgresPort !== undefined) databaseUrl.port = String(opts.postgresPort);
    m.env = {
      ...shared,
      ...identityEnvOf(m.service),
      ...(opts.env?.all ?? {}),
      ...(opts.env?.[m.service] ?? {}),
      PORT: String(m.port),
      METRICS_PORT: String(m.metricsPort),
      DATABASE_URL: databaseUrl.toString(),
    };
  }

  const start = async (service: ServiceName, env?: Record<string, string>) => {
    const m = members.get(service)!;
    if (env) m.env = { ...m.env, ...env };
    const proc = spawn(process.execPath, [...SERVICE_NODE_ARGS, join(REPO, 'apps', service, 'dist', 'main.js')], {
      env: { ...SERVICE_PROCESS_ENV, ...process.env, ...m.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    m.proc = proc;
    const keep = (b: Buffer) => {
      for (const tap of m.taps) tap(b.toString());
      if (opts.logDir) appendFileSync(join(opts.logDir, `${service}.log`), b);
      m.output.push(b.toString());
      if (m.output.length > 200) m.output.splice(0, m.output.length - 200);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`${service} exited with ${proc.exitCode}:\n${m.output.join('')}`);
      try {
        const res = await fetch(`${url(service)}/readyz`);
        if (res.status === 200) {
          if (opts.waitForKafka === false) return;
          const body = (await res.json()) as { checks?: { ok: boolean }[] };
          if ((body.checks ?? []).every((c) => c.ok)) return;
        }
      } catch {
        // not listening yet
      }
      await sleep(200);
    }
    throw new Error(
      `${service} did not become ready (with every check passing unless waitForKafka is false) within 60 s:\n${m.output.join('')}`,
    );
  };

  // The ports stay this process's while the fleet runs (a killed service restarts on its own).
  const releasePorts = () => {
    for (const m of members.values()) {
      releasePort(m.port);
      releasePort(m.metricsPort);
    }
  };

  const kill = async (service: ServiceName, signal: NodeJS.Signals = 'SIGTERM', boundMs?: number) => {
    const proc = members.get(service)!.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return proc?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    signalTree(proc, signal);
    if (boundMs === undefined) return exited;
    const timer = setTimeout(() => signalTree(proc, 'SIGKILL'), boundMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  try {
    // All six at once: no service needs another to be up to become ready (calls between them go
    // through breakers and retries, Kafka consumers join on their own), so the start takes as long
    // as the slowest one rather than the sum.
    await Promise.all(SERVICE_NAMES.map((s) => start(s)));
  } catch (err) {
    await Promise.all(SERVICE_NAMES.map((s) => kill(s, 'SIGKILL')));
    releasePorts();
    await Promise.all(Object.values(databases).map((d) => d.drop()));
    throw err;
  }

  return {
    url,
    metricsUrl: (s) => `http://127.0.0.1:${members.get(s)!.metricsPort}`,
    databases,
    topicPrefix,
    kill,
    start,
    envOf: (s) => ({ ...members.get(s)!.env }),
    pid: (s) => members.get(s)!.proc?.pid,
    logs: (s) => members.get(s)!.output.join('').slice(-8000),
    tap: (s, listener) => {
      const taps = members.get(s)!.taps;
      taps.add(listener);
      return () => taps.delete(listener);
    },
    stop: async () => {
      await closeAdminCommands(topicPrefix);
      await Promise.all(SERVICE_NAMES.map((s) => kill(s, 'SIGTERM', stopBoundMs())));
      releasePorts();
      await Promise.all(Object.values(databases).map((d) => d.drop()));
    },
  };
}

/** Poll until `fn` returns a value that passes `until`, or fail with the last value seen. */
export async function eventually<T>(fn: () => Promise<T>, until: (v: T) => boolean, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await fn();
    if (until(last)) return last;
    await sleep(everyMs);
  }
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}
