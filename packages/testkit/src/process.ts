import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';
import { identityEnvOf } from './identity.js';
import { SERVICE_NODE_ARGS, SERVICE_PROCESS_ENV, type ServiceName } from './services.js';
import { signalTree } from './process-tree.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface ServiceProcess {
  url: string;
  /** Where it serves /metrics (a free METRICS_PORT of its own, whatever `env` says). */
  metricsUrl: string;
  port: number;
  /** The running child (undefined while stopped). */
  proc: () => ChildProcess | undefined;
  /** Send a signal (SIGKILL for a crash) and wait until the process is gone. */
  kill: (signal?: NodeJS.Signals) => Promise<void>;
  /** Start it again on the same port with the same environment; resolves when it is ready. */
  restart: () => Promise<void>;
  /** Last lines it printed (for failure messages). */
  logs: () => string;
}

/**
 * One service as a real process (`node apps/<service>/dist/main.js`) on a free port, started with
 * `env` on top of this process's environment; resolves once its /readyz answers 200. Its ports
 * (freePort) stay this test process's until it exits, for a restart on the same port.
 */
export async function startServiceProcess(
  service: ServiceName,
  env: Record<string, string>,
  opts: {
    readyTimeoutMs?: number;
    /** Another build of the service to run: its app directory (holding `dist/main.js`), e.g. another checkout's for a bench's before. */
    appDir?: string;
  } = {},
): Promise<ServiceProcess> {
  const port = env['PORT'] ? Number(env['PORT']) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const metricsPort = await freePort();
  const output: string[] = [];
  let child: ChildProcess | undefined;

  const start = async () => {
    const proc = spawn(process.execPath, [...SERVICE_NODE_ARGS, join(opts.appDir ?? join(REPO, 'apps', service), 'dist', 'main.js')], {
      // Its service identity (the test process's keys) unless `env` brings another.
      env: {
        ...SERVICE_PROCESS_ENV,
        ...process.env,
        NODE_ENV: 'test',
        ...identityEnvOf(service),
        ...env,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const keep = (b: Buffer) => {
      output.push(b.toString());
      if (output.length > 200) output.splice(0, output.length - 200);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`${service} exited with ${proc.exitCode}:\n${output.join('')}`);
      try {
        if ((await fetch(`${url}/readyz`)).status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`${service} did not become ready:\n${output.join('')}`);
  };

  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    signalTree(proc, signal);
    await exited;
  };

  try {
    await start();
  } catch (err) {
    await kill('SIGKILL');
    throw err;
  }
  return {
    url,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    port,
    proc: () => child,
    kill,
    restart: start,
    logs: () => output.join('').slice(-8000),
  };
}
