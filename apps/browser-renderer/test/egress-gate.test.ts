import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Server as ProxyServer } from 'proxy-chain';
import { startDnsServer, type DnsServer } from '@wdr/testkit';
import { createLogger } from '@wdr/kit/log';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { EgressGate, type GateRoute } from '../src/domain/egress-gate.js';

/**
 * The egress gate's decision on real sockets, on loopback only: an allowed server on 127.0.0.1 and
 * a "private" victim on 127.0.0.2 on the same port (what a rebinding name would reach), a DNS server
 * the test controls. The victim counts every TCP connection: it must see none.
 */
interface Server {
  server: http.Server;
  connections: number;
  paths: string[];
}

async function listen(host: string, port: number, body: string): Promise<Server> {
  const s: Server = { server: undefined as unknown as http.Server, connections: 0, paths: [] };
  s.server = http.createServer((req, res) => {
    s.paths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(body);
  });
  s.server.on('connection', () => s.connections++);
  await new Promise<void>((resolve, reject) => {
    s.server.once('error', reject);
    s.server.listen(port, host, () => resolve());
  });
  return s;
}

let dns: DnsServer;
let victim: Server;
let twin: Server;
let port: number;
let gate: EgressGate;
let other: GateRoute | undefined;

beforeAll(async () => {
  victim = await listen('127.0.0.2', 0, 'SECRET');
  port = (victim.server.address() as AddressInfo).port;
  twin = await listen('127.0.0.1', port, 'allowed twin');
  dns = await startDnsServer({
    'site.test': ['127.0.0.1'],
    'private.test': ['127.0.0.2'],
    'rebind.test': { rebind: ['127.0.0.1', '127.0.0.2'] },
    'failfirst.test': { failFirst: '127.0.0.2' },
    'mixed.test': ['127.0.0.2', '127.0.0.1'],
  });
  gate = new EgressGate({ log: createLogger('test', 'silent') });
  await gate.start();
});

afterAll(async () => {
  await other?.settle();
  await gate?.stop();
  await dns?.close();
  await new Promise((r) => victim?.server.close(r));
  await new Promise((r) => twin?.server.close(r));
});

const policy = () => new TargetPolicy(['127.0.0.1'], { dnsServers: [dns.address] });
const auth = (route: GateRoute) => `Basic ${Buffer.from(`${route.username}:${route.password}`).toString('base64')}`;

/** CONNECT host:port through the gate: the status line's code, and the tunnel's answer to a GET when 200. */
function tunnel(route: GateRoute | undefined, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(gate.port, '127.0.0.1');
    let data = '';
    let status = 0;
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (!status && data.includes('\r\n')) {
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
        if (status === 200) {
          data = '';
          socket.write(`GET /probe HTTP/1.0\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
        }
      }
    });
    socket.on('close', () => resolve({ status, body: status === 200 ? (data.split('\r\n\r\n')[1] ?? '') : '' }));
    socket.on('error', reject);
    socket.write(
      `CONNECT ${host}:${port} HTTP/1.1\r\nhost: ${host}:${port}\r\n${route ? `proxy-authorization: ${auth(route)}\r\n` : ''}\r\n`,
    );
  });
}

/** A plain-http request through the gate (what Chromium sends for http:// and ws:// without TLS). */
function forward(route: GateRoute, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port: gate.port,
      path: `http://${host}:${port}/forwarded`,
      headers: { host: `${host}:${port}`, 'proxy-authorization': auth(route) },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the egress gate', () => {
  it('SSRF: refuses a literal blocked address (127.0.0.2) without connecting, and counts it for the render', async () => {
    const route = gate.open({ policy: policy() });
    expect((await tunnel(route, '127.0.0.2')).status).toBe(403);
    expect((await forward(route, '127.0.0.2')).status).toBe(403);
    expect(route.refused()).toBe(2);
    expect(route.refusalOf('127.0.0.2', port)).toBe('blocked');
    await route.settle();
    expect(victim.connections).toBe(0);
  });

  it('SSRF: refuses a name that resolves to a blocked address', async () => {
    const route = gate.open({ policy: policy() });
    expect((await tunnel(route, 'private.test')).status).toBe(403);
    expect((await forward(route, 'private.test')).status).toBe(403);
    expect(route.refusalOf('private.test', port)).toBe('blocked');
    await route.settle();
    expect(victim.connections).toBe(0);
  });

  it('DNS rebinding: resolves a name once per render and connects to the address it checked, whatever the name answers later', async () => {
    const route = gate.open({ policy: policy() });
    const first = await tunnel(route, 'rebind.test');
    const second = await tunnel(route, 'rebind.test');
    const plain = await forward(route, 'rebind.test');
    expect([first, second, plain]).toEqual([
      { status: 200, body: 'allowed twin' },
      { status: 200, body: 'allowed twin' },
      { status: 200, body: 'allowed twin' },
    ]);
    await route.settle();
    // One A question for the whole render; the blocked answer was never asked for.
    expect(dns.queries.get('rebind.test')).toBe(2); // A and AAAA, once each
    // A new render asks again and now gets the blocked answer: refused.
    const next = gate.open({ policy: policy() });
    expect((await tunnel(next, 'rebind.test')).status).toBe(403);
    await next.settle();
    expect(victim.connections).toBe(0);
  });

  it('fails closed: a name that does not resolve for the check is refused, and stays refused for the render', async () => {
    const route = gate.open({ policy: policy() });
    expect((await tunnel(route, 'failfirst.test')).status).toBe(403);
    // It would resolve (to the victim) if asked again: the gate does not ask again.
    expect((await tunnel(route, 'failfirst.test')).status).toBe(403);
    expect(route.refusalOf('failfirst.test', port)).toBe('unresolvable');
    expect((await tunnel(route, 'nowhere.test')).status).toBe(403);
    await route.settle();
    expect(victim.connections).toBe(0);
  });

  it('a name with an allowed and a blocked address: connects to the allowed one only, every time', async () => {
    const route = gate.open({ policy: policy() });
    for (let i = 0; i < 3; i++) expect(await tunnel(route, 'mixed.test')).toEqual({ status: 200, body: 'allowed twin' });
    expect(await forward(route, 'mixed.test')).toEqual({ status: 200, body: 'allowed twin' });
    await route.settle();
    expect(victim.connections).toBe(0);
  });

  it('lets an allowed name through to its checked address', async () => {
    const route = gate.open({ policy: policy() });
    expect(await tunnel(route, 'site.test')).toEqual({ status: 200, body: 'allowed twin' });
    expect(route.refused()).toBe(0);
    await route.settle();
  });

  it('goes nowhere without a live render token (the browser default context, another process)', async () => {
    expect((await tunnel(undefined, 'site.test')).status).toBe(407);
    other = gate.open({ policy: policy() });
    const ended = gate.open({ policy: policy() });
    await ended.settle();
    expect((await tunnel(ended, 'site.test')).status).toBe(407);
  });

  it('through a proxy exit: refuses literal internal addresses and names with any internal address here; a name that does not resolve here goes to the exit', async () => {
    const asked: string[] = [];
    const exit = new ProxyServer({
      port: 0,
      host: '127.0.0.1',
      prepareRequestFunction: ({ hostname }) => {
        asked.push(hostname);
        return {};
      },
    });
    await exit.listen();
    try {
      const route = gate.open({ policy: policy(), upstream: { server: `http://127.0.0.1:${exit.port}` } });
      expect((await tunnel(route, '127.0.0.2')).status).toBe(403);
      expect((await tunnel(route, 'private.test')).status).toBe(403);
      // Internal here beside a public address: the exit might pick the internal one.
      expect((await tunnel(route, 'mixed.test')).status).toBe(403);
      // Resolved by the exit, in its own network (here: not at all, so the exit fails it).
      expect((await tunnel(route, 'nowhere.test')).status).not.toBe(200);
      expect(await tunnel(route, '127.0.0.1')).toEqual({ status: 200, body: 'allowed twin' });
      await route.settle();
      expect(asked).toEqual(['nowhere.test', '127.0.0.1']);
      expect(victim.connections).toBe(0);
    } finally {
      await exit.close(true);
    }
  });
});
