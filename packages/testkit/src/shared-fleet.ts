import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TERMINAL_REQUEST_STATUSES } from '@wdr/contracts';
import { withDatabase } from './databases.js';
import { eventually, startFleet, type Fleet } from './fleet.js';
import { databaseUrl, SERVICE_NAMES, SERVICES, type ServiceName } from './services.js';

/**
 * One fleet for the ordinary end-to-end files: a jest global setup starts it once
 * (`@wdr/testkit/jest/shared-fleet-setup`), every file of the run uses it through `sharedFleet()`,
 * and the global teardown stops it. Each file (and each test that needs it) makes its own tenants,
 * keys and projects, so files stay independent of each other and of their order.
 *
 * A file that kills or restarts a service, cuts Kafka or Postgres, or needs an environment of its
 * own keeps its own `startFleet()`, and says why in its first lines.
 */

/** The variable that carries the shared fleet's description from the global setup to the test files. */
export const SHARED_FLEET_VAR = 'WDR_SHARED_FLEET';

/**
 * The shared fleet's environment over startFleet's defaults: what the ordinary files need, none of it
 * a behaviour another file asserts the default of (limits are per tenant; these are high so that
 * one file's bursts never throttle another's tenants).
 */
export const SHARED_FLEET_ENV: NonNullable<Parameters<typeof startFleet>[0]>['env'] = {
  gateway: {
    REDIS_KEY_PREFIX: `wdr:test:shared:${process.pid}:${Date.now().toString(36)}:`,
    RATE_LIMIT_SUBMISSIONS: '1000000',
    CONCURRENCY_LIMIT: '1000000',
    SSE_HEARTBEAT_MS: '300',
    // As behind the ingress: X-Forwarded-For's last address is the client's, so a file throttles
    // failed authentications of its own addresses without spending 127.0.0.1's budget.
    TRUSTED_PROXY_HOPS: '1',
    // The failure budget (AUTH_FAILURE_LIMIT, 60) comes back one every 10 s, not every second: the
    // abuse-bounds file spends 62 failures of one address in a row and expects the next throttled,
    // and on a loaded machine that loop took long enough for three to come back (401, not 429).
    // 127.0.0.1's budget, which the other files' wrong-key tests spend, still refills within a run.
    AUTH_FAILURE_WINDOW_SECONDS: '600',
  },
  'webhook-dispatcher': { WEBHOOK_POLL_MS: '200' },
};

interface Descriptor {
  urls: Record<ServiceName, string>;
  databases: Record<ServiceName, string>;
  topicPrefix: string;
  env: Record<ServiceName, Record<string, string>>;
  pids: Record<ServiceName, number | undefined>;
  logDir: string;
}

/** Start the shared fleet and publish its description to the test processes (jest global setup). */
export async function startSharedFleet(): Promise<Fleet> {
  const logDir = join(tmpdir(), `wdr-shared-fleet-${process.pid}-${Date.now().toString(36)}`);
  const fleet = await startFleet({ env: SHARED_FLEET_ENV, logDir });
  const descriptor: Descriptor = {
    urls: Object.fromEntries(SERVICE_NAMES.map((s) => [s, fleet.url(s)])) as Record<ServiceName, string>,
    databases: Object.fromEntries(SERVICE_NAMES.map((s) => [s, fleet.databases[s].name])) as Record<ServiceName, string>,
    topicPrefix: fleet.topicPrefix,
    env: Object.fromEntries(SERVICE_NAMES.map((s) => [s, fleet.envOf(s)])) as Record<ServiceName, Record<string, string>>,
    pids: Object.fromEntries(SERVICE_NAMES.map((s) => [s, fleet.pid(s)])) as Record<ServiceName, number | undefined>,
    logDir,
  };
  // Jest's workers are started after the global setup and inherit its environment.
  process.env[SHARED_FLEET_VAR] = JSON.stringify(descriptor);
  return fleet;
}

function tail(path: string, bytes: number): string {
  try {
    const size = statSync(path).size;
    const start = Math.max(0, size - bytes);
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      return buf.toString();
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

/**
 * The fleet the run's global setup started, as a `Fleet`. It cannot be killed, restarted or
 * stopped from a test file: a file that needs that has its own fleet.
 */
export function sharedFleet(): Fleet {
  const raw = process.env[SHARED_FLEET_VAR];
  if (!raw) {
    throw new Error(
      `no shared fleet: ${SHARED_FLEET_VAR} is unset. Run this file through its package's jest config ` +
        '(`./dev test <file>`), whose global setup starts the shared fleet for the files listed there',
    );
  }
  const d = JSON.parse(raw) as Descriptor;
  const notHere = (what: string) => () => {
    throw new Error(`the shared fleet cannot ${what}: give this file its own startFleet() and say why at its top`);
  };
  const logPath = (s: ServiceName) => join(d.logDir, `${s}.log`);
  // What a service printed before this file took the fleet belongs to earlier files: logs() starts here.
  const since = Object.fromEntries(SERVICE_NAMES.map((s) => [s, statSafe(logPath(s))])) as Record<ServiceName, number>;
  return {
    url: (s) => d.urls[s],
    metricsUrl: (s) => `http://127.0.0.1:${d.env[s]['METRICS_PORT']}`,
    databases: Object.fromEntries(
      SERVICE_NAMES.map((s) => [
        s,
        { name: d.databases[s], url: databaseUrl(d.databases[s], SERVICES[s].schema), drop: notHere('drop a database') },
      ]),
    ) as unknown as Fleet['databases'],
    topicPrefix: d.topicPrefix,
    kill: notHere('kill a service'),
    start: notHere('restart a service'),
    envOf: (s) => ({ ...d.env[s] }),
    pid: (s) => d.pids[s],
    logs: (s) => tail(logPath(s), Math.min(8000, Math.max(0, statSafe(logPath(s)) - since[s]))),
    tap: (s, listener) => {
      let offset = statSafe(logPath(s));
      const timer = setInterval(() => {
        const size = statSafe(logPath(s));
        if (size <= offset) return;
        const text = tail(logPath(s), size - offset);
        offset = size;
        listener(text);
      }, 50);
      return () => clearInterval(timer);
    },
    stop: async () => {
      // The global teardown stops it; a file's afterAll leaves it running for the next file.
    },
  };
}

function statSafe(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Wait until no request of the fleet is still in flight, so a file leaves the shared fleet as it
 * found it: a file that admitted a thousand jobs does not hand their queue to the next file.
 * Run after each shared file (./jest/shared-fleet-file.ts); fails if work is still open at the bound.
 */
export async function drainFleet(fleet: Fleet, timeoutMs = 150_000): Promise<void> {
  const open = () =>
    withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => {
      const r = await c.query<{ n: string }>('SELECT count(*) AS n FROM data_requests WHERE status <> ALL($1::text[])', [
        [...TERMINAL_REQUEST_STATUSES],
      ]);
      return Number(r.rows[0]!.n);
    });
  await eventually(open, (n) => n === 0, timeoutMs, 250);
}
