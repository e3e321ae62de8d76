// Own fleet (not the shared one of ./shared/): it needs its own environment (the orchestrator's and the renderer's TARGET_DNS_SERVERS at the test's DNS server, a solver key to look for in Chromium's environment) and inspects the renderer's Chromium processes.
import { execFileSync } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  eventually,
  startDnsServer,
  startFleet,
  startProxyExit,
  type DnsServer,
  type Fleet,
  type ProxyExitServer,
} from '@wdr/testkit';

/**
 * Can a tenant turn the fetcher against the platform? The attacks of issue 20 through the public
 * API, on the real fleet with a real (sandboxed) Chromium, loopback only: the allow-list is
 * 127.0.0.1 (the attacker's "public" site), the "private" victim listens on 127.0.0.2 on the same
 * port and counts every TCP connection (and every UDP datagram on its WebRTC port): it must see
 * none. Names resolve through a DNS server the test controls (TARGET_DNS_SERVERS of the
 * orchestrator and the renderer), which can answer a name with the victim, rebind it, or fail it
 * for the first question. Blocked forms that need no connection (private ranges, metadata, NAT64,
 * 6to4, mapped) are tested at the decision (packages/kit target-policy.test.ts, browser-renderer
 * egress-gate.test.ts).
 */
let fleet: Fleet;
let dns: DnsServer;
let key: string;
let port: number;

interface Recorder {
  server: http.Server;
  connections: number;
  requests: { path: string; headers: http.IncomingHttpHeaders }[];
}

let victim: Recorder;
let victimUdp: UdpSocket;
let victimDatagrams = 0;
let udpPort: number;
/** The attacker's allowed site, on 127.0.0.1 at the victim's port (what a rebinding name reaches first). */
let site: Recorder;
/** A third-party origin the target's page loads from (b.wdr.test -> 127.0.0.1). */
let third: Recorder;
let thirdPort: number;
/** A residential proxy exit (on 127.0.0.4): what it is asked to reach is recorded. */
let exit: ProxyExitServer;

const V_LITERAL = () => `http://127.0.0.2:${port}`;
const V_NAME = () => `http://private.wdr.test:${port}`;
const SITE = () => `http://127.0.0.1:${port}`;

/** The page that attacks the victim from inside the render, through every kind of connection a page can open. */
function attackPage(v: string): string {
  const ws = v.replace(/^http/, 'ws');
  return `<!doctype html><html><head><title>attack</title></head><body><h1>attack page</h1><pre id="out"></pre>
<iframe src="${v}/iframe"></iframe>
<img src="${v}/img">
<iframe name="sink"></iframe>
<form id="f" method="POST" action="${v}/form" target="sink"><input name="a" value="b"></form>
<script>
const out = (k, v) => { document.getElementById('out').textContent += k + ':' + v + '\\n'; };
document.getElementById('f').submit();
fetch('${v}/fetch').then((r) => r.text()).then((t) => out('fetch', t), () => out('fetch', 'blocked'));
try {
  const s = new WebSocket('${ws}/ws');
  s.onmessage = (e) => out('ws', e.data);
  s.onerror = () => out('ws', 'blocked');
} catch (e) { out('ws', 'blocked'); }
const w = new Worker('/worker.js?v=' + encodeURIComponent('${v}'));
w.onmessage = (e) => out('worker', e.data);
try { new SharedWorker('/worker.js?shared=1&v=' + encodeURIComponent('${v}')).port.onmessage = (e) => out('shared', e.data); } catch (e) { out('shared', 'unsupported'); }
if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js?v=' + encodeURIComponent('${v}')).catch(() => out('sw', 'refused'));
navigator.sendBeacon('${v}/beacon', 'x');
try {
  const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.2:${udpPort}' }] });
  pc.createDataChannel('x');
  pc.createOffer().then((o) => pc.setLocalDescription(o));
} catch (e) { out('webrtc', 'unsupported'); }
setTimeout(() => out('attack', 'done'), 2500);
</script></body></html>`;
}

const WORKER = `const v = new URL(self.location.href).searchParams.get('v');
const report = (t) => (self.postMessage ? self.postMessage(t) : null);
const shared = [];
self.onconnect = (e) => { shared.push(e.ports[0]); };
fetch(v + '/worker-fetch').then((r) => r.text()).then((t) => { report(t); shared.forEach((p) => p.postMessage(t)); },
  () => { report('blocked'); shared.forEach((p) => p.postMessage('blocked')); });`;
const SERVICE_WORKER = `const v = new URL(self.location.href).searchParams.get('v');
self.addEventListener('install', (e) => e.waitUntil(fetch(v + '/service-worker').catch(() => undefined)));`;

async function recorder(
  host: string,
  listenPort: number,
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<Recorder> {
  const r: Recorder = { server: undefined as unknown as http.Server, connections: 0, requests: [] };
  r.server = http.createServer((req, res) => {
    r.requests.push({ path: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  r.server.on('connection', () => r.connections++);
  r.server.on('upgrade', (req, socket) => {
    r.requests.push({ path: req.url ?? '', headers: req.headers });
    socket.end('HTTP/1.1 101 Switching Protocols\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    r.server.once('error', reject);
    r.server.listen(listenPort, host, () => resolve());
  });
  return r;
}

const html = (res: http.ServerResponse, body: string, type = 'text/html; charset=utf-8') => {
  res.writeHead(200, { 'content-type': type });
  res.end(body);
};

beforeAll(async () => {
  // The victim and the attacker's site share a port (127.0.0.2:P and 127.0.0.1:P).
  for (let attempt = 0; ; attempt++) {
    victim = await recorder('127.0.0.2', 0, (_req, res) => html(res, 'SECRET-FROM-THE-PRIVATE-NETWORK', 'text/plain'));
    port = (victim.server.address() as AddressInfo).port;
    try {
      site = await recorder('127.0.0.1', port, (req, res) => {
        const u = new URL(req.url ?? '/', 'http://site');
        if (u.pathname === '/attack') return html(res, attackPage(u.searchParams.get('v') ?? ''));
        if (u.pathname === '/worker.js') return html(res, WORKER, 'text/javascript');
        if (u.pathname === '/sw.js') return html(res, SERVICE_WORKER, 'text/javascript');
        if (u.pathname === '/redirect') {
          res.writeHead(302, { location: u.searchParams.get('to') ?? '/' });
          return res.end();
        }
        if (u.pathname === '/rebind-page')
          return html(
            res,
            `<!doctype html><html><body><p id="p">rebind page</p><script>setTimeout(() => fetch('/secret').then((r) => r.text()).then((t) => { document.getElementById('p').textContent = 'same-origin:' + t; }, () => { document.getElementById('p').textContent = 'same-origin:blocked'; }), 300);</script></body></html>`,
          );
        if (u.pathname === '/tenant-page') {
          const b = u.searchParams.get('b') ?? '';
          const sub = u.searchParams.get('sub') ?? '';
          return html(
            res,
            `<!doctype html><html><body><p>tenant page</p><script src="${b}/script.js"></script><img src="${b}/pixel.png"><img src="${sub}/sub-pixel.png"><script>fetch('${b}/api', { mode: 'no-cors' }).catch(() => undefined); fetch('/own').catch(() => undefined);</script></body></html>`,
          );
        }
        if (u.pathname === '/slow') {
          const t = setTimeout(() => html(res, '<p>slow page</p>'), Number(u.searchParams.get('ms') ?? '3000'));
          res.on('close', () => clearTimeout(t));
          return;
        }
        return html(res, 'ALLOWED-SITE', 'text/plain');
      });
      break;
    } catch (err) {
      await new Promise((r) => victim.server.close(r));
      if (attempt > 20) throw err;
    }
  }
  victimUdp = createSocket('udp4');
  victimUdp.on('message', () => victimDatagrams++);
  await new Promise<void>((resolve) => victimUdp.bind(0, '127.0.0.2', () => resolve()));
  udpPort = victimUdp.address().port;
  third = await recorder('127.0.0.1', 0, (req, res) => {
    if ((req.url ?? '').startsWith('/script.js')) return html(res, 'window.third = 1;', 'text/javascript');
    return html(res, 'third party', 'text/plain');
  });
  thirdPort = (third.server.address() as AddressInfo).port;
  dns = await startDnsServer({
    'site.wdr.test': ['127.0.0.1'],
    'b.wdr.test': ['127.0.0.1'],
    'sub.site.wdr.test': ['127.0.0.1'],
    'private.wdr.test': ['127.0.0.2'],
    'mixed.wdr.test': ['127.0.0.2', '127.0.0.1'],
    'rebind-http.wdr.test': { rebind: ['127.0.0.1', '127.0.0.2'] },
    'rebind-browser.wdr.test': { rebind: ['127.0.0.1', '127.0.0.2'] },
    'failfirst-http.wdr.test': { failFirst: '127.0.0.2' },
    'failfirst-browser.wdr.test': { failFirst: '127.0.0.2' },
    'nx.wdr.test': 'nxdomain',
  });
  fleet = await startFleet({
    env: {
      'fetch-orchestrator': { TARGET_DNS_SERVERS: dns.address },
      'browser-renderer': {
        TARGET_DNS_SERVERS: dns.address,
        CAPTCHA_SOLVER_URL: 'http://127.0.0.1:9/',
        CAPTCHA_SOLVER_KEY: 'solver-key-secret',
      },
    },
  });
  key = (await adminCommand(fleet, ['create-tenant', '--name', 'attacker', '--credits', '100000']))['api_key'] as string;
  exit = await startProxyExit({ host: '127.0.0.4' });
  await adminCommand(fleet, ['proxy-add', '--label', 'res-1', '--class', 'residential'], 'fetch-orchestrator', {
    PROXY_EXIT_URL: exit.url,
  });
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await dns?.close();
  await new Promise((r) => victim?.server.close(r));
  await new Promise((r) => site?.server.close(r));
  await new Promise((r) => third?.server.close(r));
  victimUdp?.close();
  await exit?.close();
}, 60_000);

const gw = () => request(fleet.url('gateway'));
type Detail = Record<string, unknown> & {
  status: string;
  token_state: string;
  result_meta: Record<string, unknown> | null;
  user_error: { code?: string } | null;
};

async function run(body: Record<string, unknown>): Promise<{ id: string; d: Detail }> {
  const res = await gw()
    .post('/api/v1/data/requests')
    .set('X-API-Key', key)
    .send({ skip_cache: true, ...body });
  expect(res.status).toBe(202);
  const id = (res.body as { id: string }).id;
  const d = await eventually(
    async () => (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', key).expect(200)).body as Detail,
    (x) => ['settled', 'refunded'].includes(x.token_state),
    90_000,
    250,
  );
  return { id, d };
}
const textOf = async (id: string) =>
  (await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', key).expect(200)).text;

const victimUntouched = () => {
  expect(victim.requests).toEqual([]);
  expect(victim.connections).toBe(0);
};

describe.each(['http', 'browser'] as const)('SSRF through the public API, mode %s', (mode) => {
  it('a blocked literal address (127.0.0.2): TARGET_BLOCKED, refunded, the victim sees nothing', async () => {
    const { d } = await run({ url: `${V_LITERAL()}/literal-${mode}`, mode });
    expect([d.status, d.token_state, d.user_error?.code]).toEqual(['failed', 'refunded', 'TARGET_BLOCKED']);
    victimUntouched();
  });

  it('a name that resolves to a blocked address: TARGET_BLOCKED', async () => {
    const { d } = await run({ url: `${V_NAME()}/name-${mode}`, mode });
    expect([d.status, d.token_state, d.user_error?.code]).toEqual(['failed', 'refunded', 'TARGET_BLOCKED']);
    victimUntouched();
  });

  it('a name with a blocked and an allowed address: served from the allowed one, the victim sees nothing', async () => {
    const { id, d } = await run({ url: `http://mixed.wdr.test:${port}/mixed-${mode}`, mode });
    expect(d.status).toBe('completed');
    expect(await textOf(id)).toContain('ALLOWED-SITE');
    victimUntouched();
  });

  it('a name that rebinds between two lookups (allowed, then the victim): served from the address checked, the victim sees nothing', async () => {
    const { id, d } = await run({
      url: `http://rebind-${mode}.wdr.test:${port}/rebind-page`,
      mode,
      ...(mode === 'browser' ? { wait_for_text: 'same-origin:' } : {}),
    });
    expect(d.status).toBe('completed');
    const text = await textOf(id);
    expect(text).not.toContain('SECRET');
    // The browser page's later same-origin fetch went to the address the gate checked for the document.
    if (mode === 'browser') expect(text).toContain('same-origin:ALLOWED-SITE');
    victimUntouched();
  });

  it('a name that fails to resolve for the check (and would resolve to the victim next): refused, TARGET_UNREACHABLE', async () => {
    const { d } = await run({ url: `http://failfirst-${mode}.wdr.test:${port}/failfirst`, mode });
    expect([d.status, d.token_state, d.user_error?.code]).toEqual(['failed', 'refunded', 'TARGET_UNREACHABLE']);
    victimUntouched();
  });

  it('a name that does not exist: TARGET_UNREACHABLE', async () => {
    const { d } = await run({ url: `http://nx.wdr.test:${port}/`, mode });
    expect([d.status, d.user_error?.code]).toEqual(['failed', 'TARGET_UNREACHABLE']);
    victimUntouched();
  });

  it.each([
    ['the literal victim', () => `${V_LITERAL()}/redirected`],
    ['a name that resolves to the victim', () => `${V_NAME()}/redirected`],
  ])('redirects to %s: TARGET_BLOCKED', async (_what, to) => {
    const { d } = await run({ url: `${SITE()}/redirect?to=${encodeURIComponent(to())}`, mode });
    expect([d.status, d.token_state, d.user_error?.code]).toEqual(['failed', 'refunded', 'TARGET_BLOCKED']);
    victimUntouched();
  });
});

describe.each(['residential', 'residential_browser'] as const)('SSRF through a proxy exit, mode %s', (mode) => {
  it.each([
    ['a blocked literal address', () => `${V_LITERAL()}/exit-literal`],
    ['a name that resolves to a blocked address here', () => `${V_NAME()}/exit-name`],
    [
      'a name with a blocked address beside an allowed one here (the exit might pick either)',
      () => `http://mixed.wdr.test:${port}/exit-mixed`,
    ],
  ])('%s: TARGET_BLOCKED before the exit is asked', async (_what, url) => {
    const asked = exit.targets.length;
    const { d } = await run({ url: url(), mode });
    expect([d.status, d.token_state, d.user_error?.code]).toEqual(['failed', 'refunded', 'TARGET_BLOCKED']);
    expect(exit.targets.slice(asked).filter((t) => /^(127\.0\.0\.2|private\.|mixed\.)/.test(t))).toEqual([]);
    victimUntouched();
  });

  it('an allowed target does leave through the exit (the route is real)', async () => {
    const asked = exit.targets.length;
    const { d } = await run({ url: `${SITE()}/via-exit-${mode}`, mode });
    expect(d.status).toBe('completed');
    expect(exit.targets.slice(asked)).toContain(`127.0.0.1:${port}`);
  });
});

describe('SSRF from inside a rendered page', () => {
  it.each([
    ['the literal victim address', V_LITERAL],
    ['a name that resolves to the victim', V_NAME],
  ])(
    'iframe, fetch, WebSocket, worker fetch, shared and service worker, <img>, form post, beacon and WebRTC towards %s: none reaches it, each blocked one counted',
    async (_what, v) => {
      const { id, d } = await run({
        url: `http://site.wdr.test:${port}/attack?v=${encodeURIComponent(v())}`,
        mode: 'browser',
        wait_for_text: 'attack:done',
      });
      expect(d.status).toBe('completed');
      const text = await textOf(id);
      expect(text).not.toContain('SECRET');
      for (const line of ['fetch:blocked', 'ws:blocked', 'worker:blocked']) expect(text).toContain(line);
      victimUntouched();
      expect(victimDatagrams).toBe(0);
      const policy = d.result_meta?.['resource_policy'] as { blocked_requests: Record<string, number> } | undefined;
      const blocked = policy?.blocked_requests ?? {};
      // iframe, img, form, fetch, beacon, WebSocket, worker fetch at least (some may be refused twice: a retry).
      expect(blocked['refused_address']).toBeGreaterThanOrEqual(6);
    },
    120_000,
  );
});

describe('tenant headers and cookies', () => {
  it("go to the target's origin and its redirects' origins, never to a third-party origin the page loads from (another site, or a subdomain of the target's host)", async () => {
    const secret = 'tenant-secret-4711';
    const b = `http://b.wdr.test:${thirdPort}`;
    // A subdomain of the target's host is another origin (and may be another party's: user content, a CDN).
    const sub = `http://sub.site.wdr.test:${thirdPort}`;
    const { d } = await run({
      url: `http://site.wdr.test:${port}/tenant-page?b=${encodeURIComponent(b)}&sub=${encodeURIComponent(sub)}`,
      mode: 'browser',
      headers: { 'X-Tenant-Token': secret },
      cookies: { tenant_session: secret },
      resource_policy: 'compatible',
    });
    expect(d.status).toBe('completed');
    const own = site.requests.filter((r) => r.path.startsWith('/tenant-page') || r.path === '/own');
    expect([...new Set(own.map((r) => r.path.split('?')[0]))].sort()).toEqual(['/own', '/tenant-page']);
    for (const r of own) {
      expect(r.headers['x-tenant-token']).toBe(secret);
      expect(r.headers['cookie']).toContain(`tenant_session=${secret}`);
    }
    const thirdParty = third.requests.filter((r) => ['/script.js', '/pixel.png', '/api', '/sub-pixel.png'].includes(r.path));
    expect([...new Set(thirdParty.map((r) => r.path))].sort()).toEqual(['/api', '/pixel.png', '/script.js', '/sub-pixel.png']);
    for (const r of thirdParty) {
      expect(JSON.stringify(r.headers)).not.toContain(secret);
    }

    // A redirect of the target to another origin: that origin is the target's now.
    third.requests.length = 0;
    const redirected = await run({
      url: `http://site.wdr.test:${port}/redirect?to=${encodeURIComponent(`${b}/landing`)}`,
      mode: 'browser',
      headers: { 'X-Tenant-Token': secret },
    });
    expect(redirected.d.status).toBe('completed');
    expect(third.requests.find((r) => r.path === '/landing')?.headers['x-tenant-token']).toBe(secret);
    victimUntouched();
  }, 120_000);
});

describe('Chromium contained', () => {
  const SECRET_NAMES = [
    'DATABASE_URL',
    'DEBUG_ARTIFACT_KEY',
    'TARGET_URL_KEY',
    'WEBHOOK_SECRET_KEY',
    'API_KEY_PEPPER',
    'CAPTCHA_SOLVER_KEY',
    'CAPTCHA_SOLVER_URL',
    'KAFKA_BROKERS',
  ];
  /** Every process under the renderer (Chromium's browser, zygotes, renderers, utilities). */
  const chromiumTree = (): number[] => {
    const parents = new Map<number, number>();
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // gone
      }
    }
    const root = fleet.pid('browser-renderer')!;
    const tree: number[] = [];
    const stack = [...parents].filter(([, p]) => p === root).map(([c]) => c);
    while (stack.length > 0) {
      const pid = stack.pop()!;
      tree.push(pid);
      for (const [c, p] of parents) if (p === pid) stack.push(c);
    }
    return tree.filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium');
      } catch {
        return false;
      }
    });
  };
  // Chromium's children rewrite their title: one string with spaces instead of NUL-separated arguments.
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0\s]+/);
  const status = (pid: number, field: string) =>
    new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];

  /** Chromium's process tree while a page renders (renderer processes exist only while a page is open). */
  const duringRender = async <T>(inspect: () => T): Promise<T> => {
    const res = await gw()
      .post('/api/v1/data/requests')
      .set('X-API-Key', key)
      .send({ url: `${SITE()}/js-slow-${Date.now()}`, mode: 'browser', skip_cache: true, wait_for_text: 'never there', timeout_ms: 6000 });
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    await eventually(
      async () => (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', key).expect(200)).body as Detail,
      (x) => x.status === 'running',
      30_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 1500));
    return inspect();
  };

  it('runs sandboxed, not as root: no --no-sandbox, renderers in their own user namespace under seccomp', async () => {
    const tree = await duringRender(() => chromiumTree());
    expect(tree.length).toBeGreaterThan(1);
    const browser = tree.find((pid) => !cmdline(pid).some((a) => a.startsWith('--type=')))!;
    expect(browser).toBeDefined();
    for (const pid of tree) {
      expect(cmdline(pid)).not.toContain('--no-sandbox');
      expect(status(pid, 'Uid')?.split(/\s+/)[0]).not.toBe('0');
    }
    const renderers = tree.filter((pid) => cmdline(pid).includes('--type=renderer'));
    expect(renderers.length).toBeGreaterThan(0);
    const browserNs = readlinkSync(`/proc/${browser}/ns/user`);
    for (const pid of renderers) {
      expect(status(pid, 'Seccomp')).toBe('2');
      expect(readlinkSync(`/proc/${pid}/ns/user`)).not.toBe(browserNs);
    }
    const ready = (await request(fleet.url('browser-renderer')).get('/readyz')).body as {
      checks: { name: string; ok: boolean; detail?: string }[];
    };
    expect(ready.checks.find((c) => c.name === 'chromium_sandbox')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^sandboxed/),
    });
  });

  it('has none of the service environment: no database URL, keys or solver settings', async () => {
    const rendererEnv = readFileSync(`/proc/${fleet.pid('browser-renderer')}/environ`, 'utf8');
    // The service has them (the comparison means something)...
    for (const name of ['DATABASE_URL', 'DEBUG_ARTIFACT_KEY', 'CAPTCHA_SOLVER_KEY']) expect(rendererEnv).toContain(`${name}=`);
    const serviceNames = rendererEnv
      .split('\0')
      .filter(Boolean)
      .map((kv) => kv.slice(0, kv.indexOf('=')));
    const tree = await duringRender(() => chromiumTree());
    expect(tree.length).toBeGreaterThan(1);
    for (const pid of tree) {
      const names = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((kv) => kv.slice(0, kv.indexOf('=')));
      for (const secret of SECRET_NAMES) expect(names).not.toContain(secret);
      // Nothing of the service's environment but what Chromium is given on purpose (its own values).
      // (PWD: the working directory, set by the chromium launcher script's shell.)
      expect(names.filter((n) => serviceNames.includes(n) && !['PATH', 'HOME', 'LANG', 'TMPDIR', 'PWD'].includes(n))).toEqual([]);
    }
  });

  it('talks to puppeteer over a pipe: no DevTools TCP port, no listening TCP socket at all', async () => {
    const tree = await duringRender(() => chromiumTree());
    for (const pid of tree) {
      const args = cmdline(pid);
      expect(args.some((a) => a.startsWith('--remote-debugging-port'))).toBe(false);
    }
    expect(tree.some((pid) => cmdline(pid).includes('--remote-debugging-pipe'))).toBe(true);
    const inodes = new Set<string>();
    for (const pid of tree) {
      let fds: string[] = [];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (m) inodes.add(m[1]!);
        } catch {
          // closed meanwhile
        }
      }
    }
    const listening = ['/proc/net/tcp', '/proc/net/tcp6']
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').slice(1))
      .map((l) => l.trim().split(/\s+/))
      .filter((cols) => cols[3] === '0A' && inodes.has(cols[9] ?? ''));
    expect(listening).toEqual([]);
    // And ss agrees (no LISTEN socket owned by one of this renderer's Chromium processes).
    const ss = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' });
    expect(ss.split('\n').filter((l) => tree.some((pid) => l.includes(`pid=${pid},`)))).toEqual([]);
  });
});
