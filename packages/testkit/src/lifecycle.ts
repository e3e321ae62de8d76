import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

type Listenable = { listen: (port: number, host: string, cb: () => void) => Server };

interface Lifecycle {
  app: Listenable;
  /** Its /metrics listener (served on METRICS_PORT in production). */
  metricsApp?: Listenable;
  start: () => Promise<void>;
  stop: () => Promise<void>;
}

export interface LifecycleReport {
  readyBeforeStart: number;
  readyAfterStart: number;
  readyBody: { status: string; checks: { name: string; ok: boolean }[] };
  metricsText: string;
  healthz: number;
}

/**
 * Drive a service through its real lifecycle (start against the real stack, become ready, expose
 * metrics, stop) and report what its HTTP shell said at each step. Tests assert on the report.
 */
export async function exerciseLifecycle(service: Lifecycle, readyTimeoutMs = 30_000): Promise<LifecycleReport> {
  const server = await new Promise<Server>((resolve) => {
    const s = service.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const metricsServer = service.metricsApp
    ? await new Promise<Server>((resolve) => {
        const s = service.metricsApp!.listen(0, '127.0.0.1', () => resolve(s));
      })
    : undefined;
  const metricsBase = metricsServer ? `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}` : base;
  try {
    const readyBeforeStart = (await fetch(`${base}/readyz`)).status;
    await service.start();
    let ready = await fetch(`${base}/readyz`);
    const deadline = Date.now() + readyTimeoutMs;
    while (ready.status !== 200 && Date.now() < deadline) {
      await sleep(200);
      ready = await fetch(`${base}/readyz`);
    }
    const readyBody = (await ready.json()) as LifecycleReport['readyBody'];
    const healthz = (await fetch(`${base}/healthz`)).status;
    const metricsText = await (await fetch(`${metricsBase}/metrics`)).text();
    return { readyBeforeStart, readyAfterStart: ready.status, readyBody, metricsText, healthz };
  } finally {
    await service.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (metricsServer) {
      metricsServer.closeAllConnections();
      await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
    }
  }
}
