// Own fleet (not the shared one of ./shared/): it stops and kills services to make them log errors, and reads every line of every service at debug.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  eventually,
  startFixtureSite,
  startFleet,
  startProxyExit,
  SERVICE_NAMES,
  type FixtureSite,
  type Fleet,
  type ProxyExitServer,
  type ServiceName,
} from '@wdr/testkit';

/**
 * No secret lands in a log (issue 21): recognisable secrets are sent through real requests (a
 * tenant header, a cookie, a `fill` value, a proxy exit's credentials, a webhook's `whsec_` secret
 * and URL token, the API key and the cabinet token), faults that make services log errors are
 * injected (the orchestrator stopped so the gateway's internal call times out, then killed so it is
 * refused), and every line every service printed, at debug, is searched for each of them.
 */
let fleet: Fleet;
let site: FixtureSite;
let exit: ProxyExitServer;
const output: Record<string, string> = {};
const untaps: (() => void)[] = [];
const tag = Date.now().toString(36);
const SECRETS = {
  header: `hdr-secret-${tag}-value`,
  cookie: `cookie-secret-${tag}-value`,
  fill: `fill-secret-${tag}-value`,
  proxyPassword: `proxy-pass-${tag}`,
  hookToken: `hook-token-${tag}`,
};
const found: Record<string, string> = {};

const gw = () => request(fleet.url('gateway'));

beforeAll(async () => {
  site = await startFixtureSite();
  exit = await startProxyExit({ host: '127.0.0.4', username: `proxy-user-${tag}`, password: SECRETS.proxyPassword });
  fleet = await startFleet({ env: { all: { LOG_LEVEL: 'debug' }, gateway: { TRUSTED_PROXY_HOPS: '0' } } });
  for (const s of SERVICE_NAMES) {
    output[s] = '';
    untaps.push(fleet.tap(s, (chunk) => (output[s] += chunk)));
  }
}, 180_000);

afterAll(async () => {
  for (const u of untaps) u();
  await fleet?.stop();
  await site?.close();
  await exit?.close();
}, 60_000);

describe('secrets in logs', () => {
  it('finds none of the seeded secrets in any service output, with errors logged on the way', async () => {
    const t = await adminCommand(fleet, ['create-tenant', '--name', 'secrets', '--credits', '1000']);
    const apiKey = t['api_key'] as string;
    const token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t['tenant_id'] as string]))['cabinet_token'] as string;
    found['apiKey'] = apiKey;
    found['cabinetToken'] = token;
    // The proxy exit's URL (with its password) through the environment, as the operator adds it.
    await adminCommand(fleet, ['proxy-add', '--label', 'dc-secret', '--class', 'datacenter'], 'fetch-orchestrator', {
      PROXY_EXIT_URL: exit.url,
    });

    // A webhook endpoint: its whsec_ secret and a token in its URL.
    const B = '/api/v1/client/browser';
    const auth = { Authorization: `Bearer ${token}` };
    const w = await gw().post(`${B}/workspaces`).set(auth).send({ name: 'S', owner_user_id: 1 }).expect(201);
    const p = await gw().post(`${B}/workspaces/${w.body.id}/projects`).set(auth).send({ name: 'S', slug: 's' }).expect(204);
    const projectId = (p.headers['location'] as string).split('/').pop()!;
    const project = await gw().get(`${B}/projects/${projectId}`).set(auth).expect(200);
    const env = (project.body.environments as { id: string }[])[0]!.id;
    const hook = await gw()
      .post(`${B}/projects/${projectId}/environments/${env}/webhooks`)
      .set(auth)
      .send({ url: `${site.url}/hook?token=${SECRETS.hookToken}`, event_types: ['request.completed'] });
    expect(hook.status).toBe(201);
    found['whsec'] = hook.body.secret as string;

    const body = (path: string) => ({
      url: `${site.url}${path}`,
      headers: { 'X-Seed': SECRETS.header },
      cookies: { sid: SECRETS.cookie },
    });
    const submit = (b: Record<string, unknown>) => gw().post('/api/v1/data/requests').set('X-API-Key', apiKey).send(b);

    // Ordinary traffic: through the proxy exit, and a browser run that fills a field.
    const viaProxy = await submit({ ...body('/page?x=1'), mode: 'http', proxy: 'random' });
    expect(viaProxy.status).toBe(202);
    const browser = await submit({
      ...body('/actions'),
      mode: 'browser',
      proxy: 'off',
      browser_actions: [{ type: 'fill', selector: '#name', value: SECRETS.fill }],
    });
    expect(browser.status).toBe(202);
    for (const id of [viaProxy.body.id as string, browser.body.id as string]) {
      await eventually(
        async () => (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', apiKey)).body.status as string,
        (s) => ['completed', 'failed'].includes(s),
        90_000,
        250,
      );
    }

    // Fault 1: the orchestrator stops answering: the gateway's internal call times out (10 s) and is logged.
    const pid = fleet.pid('fetch-orchestrator')!;
    process.kill(pid, 'SIGSTOP');
    let timedOut;
    try {
      timedOut = await submit({ ...body('/page?x=2'), mode: 'http', proxy: 'off' });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(timedOut.status).toBeGreaterThanOrEqual(500);

    // Fault 2: the orchestrator killed: the gateway's call is refused and logged.
    await fleet.kill('fetch-orchestrator', 'SIGKILL');
    const refused = await submit({
      ...body('/page?x=3'),
      mode: 'browser',
      proxy: 'random',
      browser_actions: [{ type: 'fill', selector: '#name', value: SECRETS.fill }],
    });
    expect(refused.status).toBeGreaterThanOrEqual(500);
    await fleet.start('fetch-orchestrator');

    // Errors were logged (the faults were real), then give every service a moment to flush.
    await eventually(
      async () => output['gateway']!,
      (o) => /"level":50/.test(o),
      15_000,
      200,
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const all = { ...SECRETS, ...found, proxyUser: `proxy-user-${tag}` };
    const leaks: string[] = [];
    for (const s of SERVICE_NAMES as readonly ServiceName[]) {
      for (const [name, secret] of Object.entries(all)) {
        if (output[s]!.includes(secret)) leaks.push(`${s}: ${name}`);
      }
      // A key's secret part alone (after its prefix) is searched too.
      for (const k of [found['apiKey']!, found['cabinetToken']!]) {
        const secretPart = k.split('_').pop()!;
        if (secretPart.length >= 8 && output[s]!.includes(secretPart)) leaks.push(`${s}: secret part of ${k.slice(0, 8)}`);
      }
    }
    expect(leaks).toEqual([]);
    // The scan read something: the services on the path logged (the gateway its errors, above).
    for (const s of ['gateway', 'fetch-orchestrator', 'browser-renderer'] as const) expect(output[s]!.length).toBeGreaterThan(0);
  }, 240_000);
});
