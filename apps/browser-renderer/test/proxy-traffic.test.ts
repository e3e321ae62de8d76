import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Server, type ConnectionStats } from 'proxy-chain';
import { startFixtureSite, type FixtureSite } from '@wdr/testkit';
import { createLogger } from '@wdr/kit/log';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { RenderOptions, type RenderJob } from '@wdr/contracts';
import { BrowserPool } from '../src/domain/browser-pool.js';
import { EgressGate } from '../src/domain/egress-gate.js';
import { renderJob } from '../src/domain/render-job.js';
import { testPool } from './pool.js';

/**
 * Proxy traffic measured at the socket: a render through a real upstream CONNECT/HTTP proxy (a
 * proxy-chain server on 127.0.0.2 that wants credentials and counts its own bytes) reports the
 * bytes the upstream itself saw, within a small margin; a render without a proxy reports none.
 */
const UPSTREAM_USER = 'exit-user';
const UPSTREAM_PASS = 'exit-p@ss:word';

interface Upstream {
  server: Server;
  url: string;
  /** Per closed connection: bytes it received from the meter (srcRx) and sent back (srcTx). */
  closed: ConnectionStats[];
  authorized: number;
  refused: number;
}

async function startUpstream(): Promise<Upstream> {
  const up: Upstream = { server: undefined as unknown as Server, url: '', closed: [], authorized: 0, refused: 0 };
  up.server = new Server({
    port: 0,
    host: '127.0.0.2',
    prepareRequestFunction: ({ username, password }) => {
      if (username !== UPSTREAM_USER || password !== UPSTREAM_PASS) {
        up.refused++;
        return { requestAuthentication: true };
      }
      up.authorized++;
      return {};
    },
  });
  up.server.on('connectionClosed', ({ stats }: { stats: ConnectionStats }) => up.closed.push(stats));
  await up.server.listen();
  up.url = `http://127.0.0.2:${up.server.port}`;
  return up;
}

const sum = (stats: ConnectionStats[], key: 'srcRxBytes' | 'srcTxBytes') => stats.reduce((n, s) => n + s[key], 0);

let site: FixtureSite;
let pool: BrowserPool;
let meter: EgressGate;
let upstream: Upstream;
const local = new TargetPolicy(['127.0.0.1']);

const job = (path: string, route: RenderJob['route']): RenderJob => ({
  request_id: randomUUID(),
  tenant_id: randomUUID(),
  attempt: 1,
  url: `${site.url}${path}`,
  route_mode: 'browser',
  reason: 'requested',
  options: RenderOptions.parse({ javascript: true, timeout_ms: 20_000, resource_policy: 'compatible', debug_artifacts: false }),
  route,
  max_result_bytes: 10 * 1024 * 1024,
});

async function until(pred: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  site = await startFixtureSite();
  upstream = await startUpstream();
  meter = new EgressGate({ log: createLogger('test', 'silent') });
  await meter.start();
  pool = testPool({ pagesPerBrowser: 2, healthIntervalMs: 2_000, gate: meter });
  await pool.start();
}, 60_000);

afterAll(async () => {
  await pool?.stop();
  await meter?.stop();
  await upstream?.server.close(true);
  await site?.close();
});

describe('proxy traffic at the socket', () => {
  it('reports the bytes the upstream proxy itself counted, within 1 %, for a page with images', async () => {
    const hitsBefore = site.hits.get('/images') ?? 0;
    const route = { proxy: { server: upstream.url, username: UPSTREAM_USER, password: UPSTREAM_PASS }, country: null };
    const out = await renderJob(pool, job('/images?n=12', route), local);
    expect(out.result.outcome).toBe('completed');
    expect(site.hits.get('/images')).toBe(hitsBefore + 1);
    const traffic = out.result.traffic!;
    expect(traffic.measured).toBe(true);
    // The upstream's own count, once its connections have closed: what it received from the
    // renderer is the request side, what it sent back the response side.
    await until(() => upstream.server.getConnectionIds().length === 0);
    const upReceived = sum(upstream.closed, 'srcRxBytes');
    const upSent = sum(upstream.closed, 'srcTxBytes');
    // Twelve images of 60 kB each came through the proxy: the count is real bytes, not a guess.
    expect(upSent).toBeGreaterThan(12 * 60_000);
    expect(upstream.authorized).toBeGreaterThan(0);
    expect(Math.abs(traffic.response_bytes - upSent)).toBeLessThanOrEqual(Math.max(2_000, upSent * 0.01));
    expect(Math.abs(traffic.request_bytes - upReceived)).toBeLessThanOrEqual(Math.max(2_000, upReceived * 0.01));
    // eslint-disable-next-line no-console
    console.log(`measured ${traffic.request_bytes}/${traffic.response_bytes} bytes, upstream counted ${upReceived}/${upSent}`);
  }, 60_000);

  it('reports no traffic for a render without a proxy, and the upstream sees nothing of it', async () => {
    const before = upstream.closed.length + upstream.server.getConnectionIds().length;
    const out = await renderJob(pool, job('/page', { proxy: null, country: null }), local);
    expect(out.result.outcome).toBe('completed');
    expect(out.result.traffic).toBeUndefined();
    expect(upstream.closed.length + upstream.server.getConnectionIds().length).toBe(before);
  }, 30_000);

  it('reports traffic on a failed render too (the upstream refuses the credentials: unreachable target)', async () => {
    const route = { proxy: { server: upstream.url, username: UPSTREAM_USER, password: 'wrong' }, country: null };
    const refused = upstream.refused;
    const out = await renderJob(pool, job('/page', route), local);
    expect(out.result.outcome).toBe('failed');
    expect(upstream.refused).toBeGreaterThan(refused);
    expect(out.result.traffic).toMatchObject({ measured: true });
    // The refused CONNECT/GET still crossed to the upstream and back: bytes, not zero.
    expect(out.result.traffic!.request_bytes).toBeGreaterThan(0);
  }, 30_000);

  it('refuses a render token once its render is over, and a made-up one', async () => {
    const route = meter.open({ policy: local, upstream: { server: upstream.url, username: UPSTREAM_USER, password: UPSTREAM_PASS } });
    await route.settle();
    for (const [user, pass] of [
      [route.username, route.password],
      ['rnot-a-token', 'x'],
    ] as const) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({
          host: '127.0.0.1',
          port: meter.port,
          method: 'GET',
          path: `${site.url}/page`,
          headers: { 'proxy-authorization': `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(407);
    }
  });
});
