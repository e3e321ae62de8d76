// Own fleet (not the shared one of ./shared/): the orchestrator points at this file's geo echo server and has its own exit reset interval.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  eventually,
  startFixtureSite,
  startFleet,
  startIpEcho,
  startProxyExit,
  withDatabase,
  type FixtureSite,
  type Fleet,
  type ProxyExitServer,
  internalAgent,
} from '@wdr/testkit';

/**
 * The proxy networks through the public API, on the real fleet: real upstream proxies
 * (proxy-chain) on their own loopback addresses, each counting its own bytes, configured with the
 * operator's admin command; an IP echo endpoint for geo verification. What is checked is what the
 * exits saw, what the target saw, and what the ledger charged.
 */
let fleet: Fleet;
let site: FixtureSite;
let echo: Awaited<ReturnType<typeof startIpEcho>>;
let key: string;
let exits: Record<'resDe' | 'resFr' | 'resUs' | 'dc1' | 'dc2', ProxyExitServer>;

const gw = () => request(fleet.url('gateway'));
type Detail = Record<string, unknown> & {
  status: string;
  token_state: string;
  result_meta: Record<string, unknown> | null;
  user_error: Record<string, unknown> | null;
};

let tenants = 0;
async function tenant(credits = 2000): Promise<{ key: string; id: string }> {
  const t = await adminCommand(fleet, ['create-tenant', '--name', `proxies-${++tenants}`, '--credits', String(credits)]);
  return { key: t['api_key'] as string, id: t['tenant_id'] as string };
}

/** Every request here must really run (the route is what is tested), so none is served from the result cache. */
async function submit(body: Record<string, unknown>, apiKey = key): Promise<{ id: string }> {
  const res = await gw()
    .post('/api/v1/data/requests')
    .set('X-API-Key', apiKey)
    .send({ skip_cache: true, ...body });
  expect([res.status, res.body]).toEqual([202, expect.anything()]);
  return res.body as { id: string };
}

const detail = async (id: string, apiKey = key): Promise<Detail> =>
  (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', apiKey).expect(200)).body as Detail;
const settled = (id: string, apiKey = key, ms = 60_000) =>
  eventually(
    () => detail(id, apiKey),
    (d) => ['settled', 'refunded'].includes(d.token_state),
    ms,
    200,
  );
const charged = async (id: string) =>
  (
    (
      await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
        .get(`/internal/v1/reservations/${id}`)
        .expect(200)
    ).body as { charged_tokens: number }
  ).charged_tokens;
const proxyAdmin = (args: string[], env: Record<string, string> = {}) => adminCommand(fleet, args, 'fetch-orchestrator', env);
const sawTarget = (exit: ProxyExitServer) => exit.targets.filter((t) => t === new URL(site.url).host).length;
const allExits = () => Object.values(exits);

beforeAll(async () => {
  site = await startFixtureSite();
  exits = {
    resDe: await startProxyExit({ host: '127.0.0.2' }),
    resFr: await startProxyExit({ host: '127.0.0.3', username: 'fr-user', password: 'fr-pass' }),
    resUs: await startProxyExit({ host: '127.0.0.5' }),
    dc1: await startProxyExit({ host: '127.0.0.4' }),
    dc2: await startProxyExit({ host: '127.0.0.6' }),
  };
  // What each exit's provider would NAT it to: 127.0.0.3 leaves in France, 127.0.0.5 in Japan.
  echo = await startIpEcho({ '127.0.0.3': '212.27.48.10', '127.0.0.5': '133.242.0.1' });
  fleet = await startFleet({ env: { 'fetch-orchestrator': { GEO_ECHO_URL: echo.url, PROXY_EXIT_RESET_MS: '60000' } } });
  key = (await tenant(5000)).key;
  // The URL (with the exit's password) goes in through the environment, never the command line.
  await proxyAdmin(['proxy-add', '--label', 'res-de', '--class', 'residential', '--country', 'DE', '--authoritative'], {
    PROXY_EXIT_URL: exits.resDe.url,
  });
  await proxyAdmin(['proxy-add', '--label', 'res-unlabelled', '--class', 'residential'], { PROXY_EXIT_URL: exits.resFr.url });
  // Labelled US by the operator but not vouched for: the IP lookup says Japan.
  await proxyAdmin(['proxy-add', '--label', 'res-us', '--class', 'residential', '--country', 'US'], { PROXY_EXIT_URL: exits.resUs.url });
  await proxyAdmin(['proxy-add', '--label', 'dc-1', '--class', 'datacenter', '--url', exits.dc1.url]);
  await proxyAdmin(['proxy-add', '--label', 'dc-2', '--class', 'datacenter', '--url', exits.dc2.url]);
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await Promise.all([site?.close(), echo?.close(), ...Object.values(exits ?? {}).map((e) => e.close())]);
}, 60_000);

describe('the operator configures exits', () => {
  it('lists them without credentials', async () => {
    const list = (await proxyAdmin(['proxy-list']))['items'] as Record<string, unknown>[];
    expect(
      list.map((e) => [e['label'], e['network_class'], e['endpoint'], e['has_credentials'], e['country'], e['country_authoritative']]),
    ).toEqual([
      ['dc-1', 'datacenter', `127.0.0.4:${exits.dc1.port}`, true, null, false],
      ['dc-2', 'datacenter', `127.0.0.6:${exits.dc2.port}`, true, null, false],
      ['res-de', 'residential', `127.0.0.2:${exits.resDe.port}`, true, 'DE', true],
      ['res-unlabelled', 'residential', `127.0.0.3:${exits.resFr.port}`, true, null, false],
      ['res-us', 'residential', `127.0.0.5:${exits.resUs.port}`, true, 'US', false],
    ]);
    expect(JSON.stringify(list)).not.toMatch(/exit-pass|fr-pass/);
  });

  it('refuses a malformed exit without echoing its URL', async () => {
    await expect(
      proxyAdmin(['proxy-add', '--label', 'bad', '--class', 'residential'], { PROXY_EXIT_URL: 'socks5://u:secret-pw@127.0.0.9:1080' }),
    ).rejects.toThrow(/must be http:\/\/ or https:\/\//);
    await expect(
      proxyAdmin(['proxy-add', '--label', 'bad', '--class', 'residential'], { PROXY_EXIT_URL: 'socks5://u:secret-pw@127.0.0.9:1080' }),
    ).rejects.not.toThrow(/secret-pw/);
  });
});

describe('residential requests', () => {
  it('counts in the usage window only the traffic of requests resolved in the last 30 days: a request resolved 31 days ago leaves it, one of 29 days stays', async () => {
    const t = await tenant();
    const usage = async () =>
      (await gw().get('/api/v1/data/usage').set('X-API-Key', t.key).expect(200)).body as {
        period_days: number;
        proxy_traffic: { request_bytes: number; response_bytes: number; charged_jobs: number };
      };
    const [old, recent] = [
      await submit({ url: `${site.url}/bytes?n=30000&usage=old`, mode: 'residential' }, t.key),
      await submit({ url: `${site.url}/bytes?n=30000&usage=recent`, mode: 'residential' }, t.key),
    ];
    await settled(old.id, t.key);
    await settled(recent.id, t.key);
    const both = await usage();
    expect([both.period_days, both.proxy_traffic.charged_jobs]).toEqual([30, 2]);
    const resolvedAgo = (id: string, days: number) =>
      withDatabase(fleet.databases['billing-ledger'].url, (c) =>
        c.query(`UPDATE reservations SET resolved_at = now() - make_interval(days => $2) WHERE request_id = $1::uuid`, [id, days]),
      );
    await resolvedAgo(old.id, 31);
    await resolvedAgo(recent.id, 29);
    const after = await usage();
    expect(after.proxy_traffic.charged_jobs).toBe(1);
    expect(after.proxy_traffic.request_bytes + after.proxy_traffic.response_bytes).toBeLessThan(
      both.proxy_traffic.request_bytes + both.proxy_traffic.response_bytes,
    );
    expect(after.proxy_traffic.response_bytes).toBeGreaterThan(30_000);
  });

  it('leave through a residential exit, and the usage bytes are the bytes the exit itself counted', async () => {
    const t = await tenant();
    const before = allExits().map((e) => e.bytes());
    const hitsBefore = exits.resDe.requests() + exits.resFr.requests() + exits.resUs.requests();
    const s = await submit({ url: `${site.url}/bytes?n=60000`, mode: 'residential' }, t.key);
    const d = await settled(s.id, t.key);
    expect([d.status, d.token_state]).toEqual(['completed', 'settled']);
    expect(exits.resDe.requests() + exits.resFr.requests() + exits.resUs.requests()).toBe(hitsBefore + 1);
    const after = allExits().map((e) => e.bytes());
    const fromClients = after.reduce((n, b, i) => n + b.fromClients - before[i]!.fromClients, 0);
    const toClients = after.reduce((n, b, i) => n + b.toClients - before[i]!.toClients, 0);
    expect(toClients).toBeGreaterThan(60_000);
    const usage = (await gw().get('/api/v1/data/usage').set('X-API-Key', t.key).expect(200)).body as {
      proxy_traffic: {
        request_bytes: number;
        response_bytes: number;
        charged_jobs: number;
        measurement_unavailable_jobs: number;
        by_proxy_type: { proxy_type: string; total_bytes: number }[];
      };
    };
    const traffic = usage.proxy_traffic;
    // The platform counts on its socket to the exit, the exit on its socket from the platform: the same stream.
    expect(Math.abs(traffic.request_bytes - fromClients)).toBeLessThanOrEqual(16);
    expect(Math.abs(traffic.response_bytes - toClients)).toBeLessThanOrEqual(16);
    expect([traffic.charged_jobs, traffic.measurement_unavailable_jobs]).toEqual([1, 0]);
    expect(traffic.by_proxy_type.find((p) => p.proxy_type === 'residential')?.total_bytes).toBe(
      traffic.request_bytes + traffic.response_bytes,
    );
    expect(traffic.by_proxy_type.map((p) => p.proxy_type)).toEqual(['datacenter', 'residential', 'premium']);
    expect(Object.keys(usage).sort()).toEqual(['period_days', 'period_end', 'period_start', 'proxy_traffic']);
    // Residential HTTP is 10 tokens, traffic 2000 tokens per GiB rounded up per request: 1.
    expect(await charged(s.id)).toBe(11);
    expect(d['proxy_used']).toBe('platform');
  });

  it('stop at max_credits_per_request when the measured traffic would pass it: budget_exhausted, charged the ceiling', async () => {
    const s = await submit({ url: `${site.url}/bytes?n=20000`, mode: 'residential', max_credits_per_request: 10 });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d.user_error?.['reason']]).toEqual(['failed', 'settled', 'budget_exhausted']);
    expect(await charged(s.id)).toBe(10);
  });

  it('render in the browser through a residential exit (residential_browser)', async () => {
    const before = exits.resDe.targets.length + exits.resFr.targets.length + exits.resUs.targets.length;
    const s = await submit({ url: `${site.url}/js-page`, mode: 'residential_browser' });
    const d = await settled(s.id, key, 90_000);
    expect([d.status, d.token_state]).toEqual(['completed', 'settled']);
    expect(exits.resDe.targets.length + exits.resFr.targets.length + exits.resUs.targets.length).toBeGreaterThan(before);
  }, 120_000);

  it('stop a browser stage at max_credits_per_request when its measured traffic would pass it: budget_exhausted, charged the ceiling', async () => {
    // Residential browser is 25 tokens, its traffic at least 1 more: a ceiling of 25 leaves no room for it.
    const s = await submit({ url: `${site.url}/js-page`, mode: 'residential_browser', max_credits_per_request: 25 });
    const d = await settled(s.id, key, 90_000);
    expect([d.status, d.token_state, d.user_error?.['reason'], (d['error'] as { code?: string } | null)?.code]).toEqual([
      'failed',
      'settled',
      'budget_exhausted',
      'BUDGET_EXHAUSTED',
    ]);
    expect(await charged(s.id)).toBe(25);
    // The page was not delivered.
    expect((await gw().get(`/api/v1/data/requests/${s.id}/result`).set('X-API-Key', key)).status).not.toBe(200);
  }, 120_000);
});

describe('datacenter requests', () => {
  it('go through a datacenter exit by default, and never touch one with proxy off', async () => {
    const dcSeen = () => sawTarget(exits.dc1) + sawTarget(exits.dc2);
    const before = dcSeen();
    const viaExit = await submit({ url: `${site.url}/page`, mode: 'http' });
    expect((await settled(viaExit.id)).status).toBe('completed');
    expect(dcSeen()).toBe(before + 1);
    const requestsBefore = allExits().map((e) => e.requests());
    const direct = await submit({ url: `${site.url}/page`, mode: 'http', proxy: 'off' });
    const d = await settled(direct.id);
    expect([d.status, d.token_state]).toEqual(['completed', 'settled']);
    expect(allExits().map((e) => e.requests())).toEqual(requestsBefore);
    expect(await charged(direct.id)).toBe(1);
  });

  it('fail over from a dead exit to a live one', async () => {
    await exits.dc2.close();
    const before = sawTarget(exits.dc1);
    const metricsText = async () => (await request(fleet.metricsUrl('fetch-orchestrator')).get('/metrics').expect(200)).text;
    const value = (text: string, re: RegExp) => Number(re.exec(text)?.[1] ?? '0');
    const exitFailed = /proxy_exit_attempts_total\{[^}]*network_class="datacenter"[^}]*outcome="exit_failed"[^}]*\} (\d+)/;
    // `random` picks either exit: rounds of four until the dead one has been tried (one round in
    // sixteen never picks it), every request completing through the live exit.
    let sent = 0;
    for (let round = 0; round < 8 && (round === 0 || value(await metricsText(), exitFailed) === 0); round++) {
      const ids = await Promise.all(
        [1, 2, 3, 4].map((n) => submit({ url: `${site.url}/page?n=${n}&round=${round}`, mode: 'http', proxy: 'random' })),
      );
      for (const { id } of ids) expect((await settled(id)).status).toBe('completed');
      sent += ids.length;
    }
    expect(sawTarget(exits.dc1)).toBe(before + sent);
    // SREs see it: tries through exits by outcome, and the exits by state.
    const metrics = await metricsText();
    expect(value(metrics, exitFailed)).toBeGreaterThan(0);
    expect(
      value(metrics, /proxy_exit_attempts_total\{[^}]*network_class="datacenter"[^}]*outcome="ok"[^}]*\} (\d+)/),
    ).toBeGreaterThanOrEqual(4);
    // How requests end: counted by route mode, outcome, stage and code, with admission-to-terminal latency.
    expect(
      value(
        metrics,
        /requests_finished_total\{[^}]*route_mode="http"[^}]*outcome="completed"[^}]*stage="http"[^}]*code="none"[^}]*\} (\d+)/,
      ),
    ).toBeGreaterThanOrEqual(4);
    expect(
      value(metrics, /request_terminal_seconds_count\{[^}]*route_mode="http"[^}]*outcome="completed"[^}]*\} (\d+)/),
    ).toBeGreaterThanOrEqual(4);
  }, 120_000);
});

describe('geo_country', () => {
  it('goes through the exit labelled and vouched for in that country, and the result names the country', async () => {
    const before = sawTarget(exits.resDe);
    const s = await submit({ url: `${site.url}/page`, mode: 'residential', geo_country: 'de' });
    const d = await settled(s.id);
    expect([d.status, d.result_meta?.['country']]).toEqual(['completed', 'DE']);
    expect(sawTarget(exits.resDe)).toBe(before + 1);
  });

  it('renders in the browser through the verified exit, and the context lives in that country (time zone)', async () => {
    const before = sawTarget(exits.resDe);
    const s = await submit({ url: `${site.url}/geo`, mode: 'residential_browser', geo_country: 'DE' });
    const d = await settled(s.id, key, 90_000);
    expect([d.status, d.result_meta?.['country']]).toEqual(['completed', 'DE']);
    expect(sawTarget(exits.resDe)).toBeGreaterThan(before);
    const text = (await gw().get(`/api/v1/data/requests/${s.id}/result?format=text`).set('X-API-Key', key).expect(200)).text;
    expect(text).toContain('tz Europe/Berlin');
  }, 120_000);

  it('verifies an unlabelled exit through the route itself (IP echo + country database)', async () => {
    const echoes = echo.hits();
    const before = sawTarget(exits.resFr);
    const s = await submit({ url: `${site.url}/page`, mode: 'residential', geo_country: 'FR' });
    const d = await settled(s.id);
    expect([d.status, d.result_meta?.['country']]).toEqual(['completed', 'FR']);
    expect(sawTarget(exits.resFr)).toBe(before + 1);
    expect(echo.hits()).toBeGreaterThan(echoes);
  });

  it('fails with PROXY_GEO_VERIFICATION_FAILED and refunds, without the target seeing a request, when no exit is in the country', async () => {
    const path = '/status/204'; // requested by no other test
    for (const country of ['JP', 'US']) {
      // JP: no exit is labelled JP, the unlabelled one is in France. US: the exit labelled US is really in Japan.
      const s = await submit({ url: `${site.url}${path}`, mode: 'residential', geo_country: country });
      const d = await settled(s.id);
      expect([country, d.status, d.token_state, d.user_error?.['code']]).toEqual([
        country,
        'failed',
        'refunded',
        'PROXY_GEO_VERIFICATION_FAILED',
      ]);
      expect(await charged(s.id)).toBe(0);
    }
    expect(site.hits.get(path)).toBeUndefined();
    const metrics = (await request(fleet.metricsUrl('fetch-orchestrator')).get('/metrics').expect(200)).text;
    const failed =
      /requests_finished_total\{[^}]*route_mode="residential"[^}]*outcome="failed"[^}]*code="PROXY_GEO_VERIFICATION_FAILED"[^}]*\} (\d+)/.exec(
        metrics,
      );
    expect(Number(failed?.[1])).toBeGreaterThanOrEqual(2);
  });

  describe('in direct and auto (datacenter class: an exit of the class in the country)', () => {
    let dcDe: ProxyExitServer;
    beforeAll(async () => {
      dcDe = await startProxyExit({ host: '127.0.0.8' });
      await proxyAdmin(['proxy-add', '--label', 'dc-de', '--class', 'datacenter', '--country', 'DE', '--authoritative', '--url', dcDe.url]);
      // The orchestrator reloads at the commit's NOTIFY; give it a moment to arrive.
      await new Promise((r) => setTimeout(r, 500));
    });
    afterAll(async () => {
      await proxyAdmin(['proxy-remove', '--label', 'dc-de']);
      await new Promise((r) => setTimeout(r, 500));
      await dcDe.close();
    });

    it.each(['direct', 'auto'])('%s goes through the datacenter exit of that country over HTTP; the result names it', async (mode) => {
      const others = [exits.dc1, exits.dc2].map(sawTarget);
      const before = sawTarget(dcDe);
      const s = await submit({ url: `${site.url}/page`, mode, geo_country: 'de' });
      const d = await settled(s.id);
      expect([d.status, d.result_meta?.['stage'], d.result_meta?.['country']]).toEqual(['completed', 'http', 'DE']);
      expect(sawTarget(dcDe)).toBe(before + 1);
      // Not through an exit without a country (the class's other exits).
      expect([exits.dc1, exits.dc2].map(sawTarget)).toEqual(others);
    });

    it("auto escalated to the browser keeps the country in both stages: the exit saw both, the page's clock is Berlin's", async () => {
      const before = sawTarget(dcDe);
      const s = await submit({ url: `${site.url}/geo`, mode: 'auto', geo_country: 'DE' });
      const d = await settled(s.id, key, 90_000);
      expect([d.status, d.result_meta?.['stage'], d.result_meta?.['country']]).toEqual(['completed', 'browser', 'DE']);
      // The HTTP stage's fetch and the browser's document, both through the German exit.
      expect(sawTarget(dcDe)).toBeGreaterThanOrEqual(before + 2);
      const text = (await gw().get(`/api/v1/data/requests/${s.id}/result?format=text`).set('X-API-Key', key).expect(200)).text;
      expect(text).toContain('tz Europe/Berlin');
    }, 120_000);

    it.each(['direct', 'auto'])(
      '%s fails PROXY_GEO_VERIFICATION_FAILED, refunded, the target untouched, when no exit of the class is in the country',
      async (mode) => {
        const path = mode === 'direct' ? '/status/201' : '/status/202';
        const s = await submit({ url: `${site.url}${path}`, mode, geo_country: 'JP' });
        const d = await settled(s.id);
        expect([d.status, d.token_state, d.user_error?.['code']]).toEqual(['failed', 'refunded', 'PROXY_GEO_VERIFICATION_FAILED']);
        expect(await charged(s.id)).toBe(0);
        expect(site.hits.get(path)).toBeUndefined();
      },
    );
  });

  it.each(['http', 'direct', 'auto', 'browser'])(
    'with proxy off is refused at validation in %s (a direct route has no verified country), nothing reserved',
    async (mode) => {
      const tenantOf = await tenant(100);
      const res = await gw()
        .post('/api/v1/data/requests')
        .set('X-API-Key', tenantOf.key)
        .send({ url: `${site.url}/page`, mode, proxy: 'off', geo_country: 'DE' });
      expect([res.status, res.body.code]).toEqual([422, 'VALIDATION_FAILED']);
      expect(res.body.details).toEqual([{ field: 'geo_country', issue: expect.stringContaining('proxy off') }]);
      const balance = await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
        .get(`/internal/v1/accounts/${tenantOf.id}/balance`)
        .expect(200);
      expect((balance.body as { balance_tokens: number }).balance_tokens).toBe(100);
    },
  );
});

describe('networks without a usable exit', () => {
  it('premium is refused at admission while no premium exit is configured; nothing is charged', async () => {
    const res = await gw()
      .post('/api/v1/data/requests')
      .set('X-API-Key', key)
      .send({ url: `${site.url}/page`, mode: 'http', proxy_type: 'premium' });
    expect([res.status, res.body.code, res.body.message]).toEqual([
      422,
      'VALIDATION_FAILED',
      'The premium network has no available connection.',
    ]);
  });

  it('residential with every exit disabled fails PROXY_UNAVAILABLE and is refunded, and comes back when they are enabled', async () => {
    for (const label of ['res-de', 'res-unlabelled', 'res-us']) await proxyAdmin(['proxy-disable', '--label', label]);
    const seen = allExits().map((e) => e.requests());
    // The orchestrator reloads at the commit's NOTIFY; give it a moment to arrive.
    await new Promise((r) => setTimeout(r, 500));
    const s = await submit({ url: `${site.url}/page`, mode: 'residential' });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d.user_error?.['code']]).toEqual(['failed', 'refunded', 'PROXY_UNAVAILABLE']);
    expect(allExits().map((e) => e.requests())).toEqual(seen);
    for (const label of ['res-de', 'res-unlabelled', 'res-us']) await proxyAdmin(['proxy-enable', '--label', label]);
    await new Promise((r) => setTimeout(r, 500));
    const again = await submit({ url: `${site.url}/page`, mode: 'residential' });
    expect((await settled(again.id)).status).toBe('completed');
  });
});

describe('protection in the HTTP stage', () => {
  const eventsOf = async (id: string) =>
    (
      (await gw().get(`/api/v1/data/requests/${id}/events`).set('X-API-Key', key).expect(200)).body as {
        data: { type: string; data: Record<string, unknown> }[];
      }
    ).data;

  it.each([
    ['/challenge', 'cloudflare'],
    ['/blocked/datadome', 'datadome'],
    ['/blocked/rate', 'generic'],
  ])('%s is recognised as %s protection: protected, an event, failed with a clear user_error, refunded', async (path, vendor) => {
    const s = await submit({ url: `${site.url}${path}`, mode: 'http', proxy: 'off' });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d['protected'], d.user_error?.['code']]).toEqual([
      'failed',
      'refunded',
      true,
      'PROTECTION_NOT_PASSED',
    ]);
    expect(String(d.user_error?.['message'])).toMatch(/mode auto or browser/);
    expect((await eventsOf(s.id)).find((e) => e.type === 'request.protected')?.data).toMatchObject({ stage: 'http', protection: vendor });
  });

  it('does not take an ordinary page that talks about bots for a challenge', async () => {
    const s = await submit({ url: `${site.url}/unusual-traffic-article`, mode: 'http', proxy: 'off' });
    const d = await settled(s.id);
    expect([d.status, d.token_state, d['protected']]).toEqual(['completed', 'settled', false]);
  });
});

describe('premium through a configured premium exit', () => {
  it("leaves through the premium exit at the plan's premium price; a plan without one refuses it, charging nothing", async () => {
    const premium = await startProxyExit({ host: '127.0.0.7' });
    try {
      await proxyAdmin(['proxy-add', '--label', 'premium-1', '--class', 'premium', '--url', premium.url]);
      await new Promise((r) => setTimeout(r, 500)); // the orchestrator reloads at the commit's NOTIFY
      // The standard plan does not price premium: refused by the ledger, nothing held.
      const standard = await tenant();
      const refused = await gw()
        .post('/api/v1/data/requests')
        .set('X-API-Key', standard.key)
        .send({ url: `${site.url}/page`, mode: 'http', proxy_type: 'premium' });
      expect([refused.status, refused.body.code, refused.body.message]).toEqual([
        422,
        'VALIDATION_FAILED',
        'The premium network is not priced for this plan.',
      ]);
      expect(premium.requests()).toBe(0);

      const business = await tenant(5000);
      await adminCommand(fleet, ['set-plan', '--tenant', business.id, '--plan', 'business'], 'billing-ledger');
      const others = allExits().map((e) => e.requests());
      const s = await gw()
        .post('/api/v1/data/requests')
        .set('X-API-Key', business.key)
        .send({ url: `${site.url}/page`, mode: 'http', proxy_type: 'premium', skip_cache: true });
      expect(s.status).toBe(202);
      expect(s.body).toMatchObject({ proxy_type: 'premium', base_tokens: 50 });
      const d = await settled(s.body.id as string, business.key);
      expect([d.status, d.token_state]).toEqual(['completed', 'settled']);
      expect(sawTarget(premium)).toBe(1);
      expect(allExits().map((e) => e.requests())).toEqual(others); // no other exit carried it
      // The premium tariff (50) plus the premium traffic price of the bytes the exit carried.
      expect(await charged(s.body.id as string)).toBeGreaterThanOrEqual(50);
    } finally {
      await proxyAdmin(['proxy-remove', '--label', 'premium-1']).catch(() => undefined);
      await premium.close();
    }
  });
});
