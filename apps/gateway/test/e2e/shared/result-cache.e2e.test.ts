import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, eventually, startFixtureSite, sharedFleet, type Fleet, type FixtureSite, internalAgent } from '@wdr/testkit';
import { settledBalance } from '../balances.js';

/**
 * The result cache through the public API, on the real fleet: a repeated request within its TTL
 * is served a copy of the earlier result (`cached: true`) without the target being asked again,
 * and charged the documented price; `skip_cache`, `cache_ttl_seconds`, a different option,
 * browser actions, debug artifacts and another tenant each get their own fetch.
 *
 * The target is a counting site: every answer says how many times its URL was asked for
 * ("visit N"), so a copy is told apart from a fresh fetch by its body as well as by the count.
 */
let fleet: Fleet;
let site: FixtureSite;
let counting: {
  url: string;
  visits: (pathAndQuery: string) => number;
  lastHeaders: Map<string, IncomingHttpHeaders>;
  close: () => Promise<void>;
};
let key: string;
let tenantId: string;
let otherKey: string;

const gw = () => request(fleet.url('gateway'));
type Detail = Record<string, unknown> & {
  status: string;
  token_state: string;
  cached: boolean;
  result_meta: Record<string, unknown> | null;
};

async function submit(body: Record<string, unknown>, apiKey = key): Promise<{ id: string; cached: boolean; charged_tokens: number }> {
  const res = await gw().post('/api/v1/data/requests').set('X-API-Key', apiKey).send(body);
  expect(res.status).toBe(202);
  return res.body as { id: string; cached: boolean; charged_tokens: number };
}

const detail = async (id: string, apiKey = key): Promise<Detail> =>
  (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', apiKey).expect(200)).body as Detail;
const settledDetail = (id: string, apiKey = key, ms = 60_000) =>
  eventually(
    () => detail(id, apiKey),
    (d) => ['settled', 'refunded'].includes(d.token_state),
    ms,
    100,
  );
const bodyOf = async (id: string, apiKey = key) =>
  (await gw().get(`/api/v1/data/requests/${id}/result`).set('X-API-Key', apiKey).expect(200)).text;
const textOf = async (id: string, apiKey = key) =>
  (await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', apiKey).expect(200)).text;
const eventsOf = async (id: string, apiKey = key) =>
  (
    (await gw().get(`/api/v1/data/requests/${id}/events`).set('X-API-Key', apiKey).expect(200)).body as {
      data: { type: string; status: string; data: Record<string, unknown> }[];
    }
  ).data;

/** The ledger's settled reservation of a request: what it was finally charged. */
async function reservation(id: string): Promise<{ token_state: string; charged_tokens: number }> {
  const res = await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
    .get(`/internal/v1/reservations/${id}`)
    .expect(200);
  return res.body as { token_state: string; charged_tokens: number };
}

const balance = (tenant = tenantId): Promise<number> => settledBalance(fleet, tenant);

/** Submit and wait until settled (or refunded). */
async function run(body: Record<string, unknown>, apiKey = key): Promise<Detail & { id: string }> {
  const s = await submit(body, apiKey);
  expect(s.cached).toBe(false); // decided when execution starts, never at admission
  return { ...(await settledDetail(s.id, apiKey)), id: s.id };
}

/** A page that counts its visits by path and query. */
async function startCountingSite() {
  const counts = new Map<string, number>();
  const lastHeaders = new Map<string, IncomingHttpHeaders>();
  const server: Server = createServer((req, res) => {
    const target = req.url ?? '/';
    if (target === '/favicon.ico') {
      res.writeHead(404).end();
      return;
    }
    const n = (counts.get(target) ?? 0) + 1;
    counts.set(target, n);
    lastHeaders.set(target, req.headers);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html><head><title>Counting page</title></head><body><h1>A page that counts its visitors</h1><p id="visit">visit ${n}</p></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    visits: (pathAndQuery: string) => counts.get(pathAndQuery) ?? 0,
    lastHeaders,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  site = await startFixtureSite();
  counting = await startCountingSite();
  fleet = sharedFleet();
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'cache', '--credits', '1000']);
  key = tenant['api_key'] as string;
  tenantId = tenant['tenant_id'] as string;
  otherKey = (await adminCommand(fleet, ['create-tenant', '--name', 'cache-other', '--credits', '100']))['api_key'] as string;
}, 180_000);

afterAll(async () => {
  await site?.close();
  await counting?.close();
}, 60_000);

describe('a repeated request within its TTL', () => {
  it('is served a copy of the first result: cached, not fetched again, its own result and events, charged the HTTP base price', async () => {
    const path = '/item?id=1&lang=en';
    const first = await run({ url: `${counting.url}${path}`, mode: 'http' });
    expect([first.status, first.token_state, first.cached]).toEqual(['completed', 'settled', false]);
    expect(await bodyOf(first.id)).toContain('visit 1');
    expect(counting.visits(path)).toBe(1);

    const before = await balance();
    // Same URL after normalisation: the scheme's case and a fragment do not matter.
    const again = await run({ url: `HTTP://127.0.0.1:${new URL(counting.url).port}${path}#reviews`, mode: 'http' });
    expect([again.status, again.token_state, again.cached]).toEqual(['completed', 'settled', true]);
    expect(counting.visits(path)).toBe(1);
    expect(again.result_meta).toMatchObject({ cached: true, stage: 'http', status_code: 200, content_type: 'text/html; charset=utf-8' });
    expect(await bodyOf(again.id)).toBe(await bodyOf(first.id));
    expect(await textOf(again.id)).toContain('visit 1');
    // Its own result, with its own expiry.
    expect(typeof again['result_expires_at']).toBe('string');
    expect(again['started_at']).not.toBeNull();

    const events = await eventsOf(again.id);
    expect(events.map((e) => [e.type, e.status])).toEqual([
      ['request.accepted', 'pending'],
      ['request.cache_hit', 'pending'],
      ['request.completed', 'completed'],
      ['tokens.settled', 'completed'],
    ]);
    expect(events[1]!.data).toEqual({ cached: true, age_seconds: expect.any(Number) });
    expect(events[2]!.data).toMatchObject({ result: { cached: true, status_code: 200 } });
    expect(events[3]!.data).toEqual({ charged_tokens: 1 });

    // The documented price of a hit: the base of the mode's cheapest stage (HTTP, datacenter: 1).
    expect(await reservation(again.id)).toMatchObject({ token_state: 'settled', charged_tokens: 1 });
    expect(await balance()).toBe(before - 1);
    // The first request is untouched.
    expect((await detail(first.id)).cached).toBe(false);
    // Operators see hits and misses (lookups at execution start) on the orchestrator's metrics.
    const metrics = (await request(fleet.metricsUrl('fetch-orchestrator')).get('/metrics').expect(200)).text;
    const count = (outcome: string) =>
      Number(new RegExp(`^fetch_orchestrator_result_cache_total\\{[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
    expect(count('hit')).toBeGreaterThanOrEqual(1);
    expect(count('miss')).toBeGreaterThanOrEqual(1);
  });

  it('in mode auto is charged the HTTP tariff, though auto holds the browser tariff at admission', async () => {
    const path = '/item?id=auto';
    const first = await run({ url: `${counting.url}${path}`, mode: 'auto' });
    expect([first.status, first.cached, first.result_meta?.['stage']]).toEqual(['completed', false, 'http']);
    const s = await submit({ url: `${counting.url}${path}`, mode: 'auto' });
    expect(s.charged_tokens).toBe(5); // held at admission: auto's dearest stage
    const again = await settledDetail(s.id);
    expect([again.status, again.cached]).toEqual(['completed', true]);
    expect(counting.visits(path)).toBe(1);
    expect(await reservation(s.id)).toMatchObject({ token_state: 'settled', charged_tokens: 1 });
  });
});

describe('what does not read the cache', () => {
  it('skip_cache fetches again, and its fresh result replaces the entry', async () => {
    const path = '/item?id=skip';
    const url = `${counting.url}${path}`;
    await run({ url, mode: 'http' });
    const skipped = await run({ url, mode: 'http', skip_cache: true });
    expect([skipped.status, skipped.cached]).toEqual(['completed', false]);
    expect(counting.visits(path)).toBe(2);
    expect(await bodyOf(skipped.id)).toContain('visit 2');
    expect(await reservation(skipped.id)).toMatchObject({ charged_tokens: 1 });
    // skip_cache does not read but writes: the next request gets the fresh copy.
    const next = await run({ url, mode: 'http' });
    expect(next.cached).toBe(true);
    expect(await bodyOf(next.id)).toContain('visit 2');
    expect(counting.visits(path)).toBe(2);
  });

  it('cache_ttl_seconds 0 neither reads nor writes', async () => {
    const path = '/item?id=ttl0';
    const url = `${counting.url}${path}`;
    await run({ url, mode: 'http' });
    const off = await run({ url, mode: 'http', cache_ttl_seconds: 0 });
    expect(off.cached).toBe(false);
    expect(counting.visits(path)).toBe(2);
    // A URL only ever fetched with TTL 0 has no entry.
    const other = `${counting.url}/item?id=ttl0-only`;
    await run({ url: other, mode: 'http', cache_ttl_seconds: 0 });
    const after = await run({ url: other, mode: 'http' });
    expect(after.cached).toBe(false);
    expect(counting.visits('/item?id=ttl0-only')).toBe(2);
  });

  it("an entry past its TTL is not served, and neither is one older than the reader's own TTL", async () => {
    const path = '/item?id=ttl1';
    const url = `${counting.url}${path}`;
    await run({ url, mode: 'http', cache_ttl_seconds: 1 });
    await new Promise((r) => setTimeout(r, 1_500));
    const late = await run({ url, mode: 'http' });
    expect(late.cached).toBe(false);
    expect(counting.visits(path)).toBe(2);
    // `late` made a 300 s entry: within its TTL it is a hit (a 1 s entry would make this depend on the machine's load).
    const soon = await run({ url, mode: 'http' });
    expect(soon.cached).toBe(true);
    expect(await bodyOf(soon.id)).toContain('visit 2');
    // A reader that accepts at most 1 s old copies does not get it once it is older.
    await new Promise((r) => setTimeout(r, 1_500));
    const strict = await run({ url, mode: 'http', cache_ttl_seconds: 1 });
    expect(strict.cached).toBe(false);
    expect(counting.visits(path)).toBe(3);
  });

  it('a different option value is a different entry; a header name in another case is the same', async () => {
    const path = '/item?id=headers';
    const url = `${counting.url}${path}`;
    const a = await run({ url, mode: 'http', headers: { 'X-Variant': 'a' } });
    const b = await run({ url, mode: 'http', headers: { 'X-Variant': 'b' } });
    expect([a.cached, b.cached]).toEqual([false, false]);
    expect(counting.visits(path)).toBe(2);
    expect(counting.lastHeaders.get(path)?.['x-variant']).toBe('b');
    const sameAsA = await run({ url, mode: 'http', headers: { 'x-variant': 'a' } });
    expect(sameAsA.cached).toBe(true);
    expect(await bodyOf(sameAsA.id)).toContain('visit 1');
    // Another user agent, and no headers at all, are other entries too.
    const ua = await run({ url, mode: 'http', headers: { 'X-Variant': 'a' }, user_agent: 'cache-test/2' });
    const none = await run({ url, mode: 'http' });
    expect([ua.cached, none.cached]).toEqual([false, false]);
    expect(counting.visits(path)).toBe(4);
    // And the query is part of the URL: another order of the same parameters is another page.
    await run({ url: `${counting.url}/item?a=1&b=2`, mode: 'http' });
    const reordered = await run({ url: `${counting.url}/item?b=2&a=1`, mode: 'http' });
    expect(reordered.cached).toBe(false);
  });

  it('a failed request makes no entry', async () => {
    const url = `${site.url}/status/503?cache=1`;
    const failed = await run({ url, mode: 'http' });
    expect([failed.status, failed.token_state]).toEqual(['failed', 'refunded']);
    const again = await run({ url, mode: 'http' });
    expect([again.status, again.cached]).toEqual(['failed', false]);
  });
});

describe('tenants', () => {
  it("never serves one tenant's copy to another, even for an identical request", async () => {
    const path = '/item?id=tenants';
    const url = `${counting.url}${path}`;
    const mine = await run({ url, mode: 'http' });
    expect(await bodyOf(mine.id)).toContain('visit 1');
    const theirs = await run({ url, mode: 'http' }, otherKey);
    expect([theirs.status, theirs.cached]).toEqual(['completed', false]);
    expect(counting.visits(path)).toBe(2);
    expect(await bodyOf(theirs.id, otherKey)).toContain('visit 2');
    // Each tenant's own entry serves only that tenant.
    const theirsAgain = await run({ url, mode: 'http' }, otherKey);
    const mineAgain = await run({ url, mode: 'http' });
    expect([theirsAgain.cached, mineAgain.cached]).toEqual([true, true]);
    expect(await bodyOf(theirsAgain.id, otherKey)).toContain('visit 2');
    expect(await bodyOf(mineAgain.id)).toContain('visit 1');
    expect(counting.visits(path)).toBe(2);
  });
});

describe('the browser stage', () => {
  it('serves a browser-mode repeat from the cache at the browser base price; browser actions and debug artifacts bypass it', async () => {
    const path = '/item?id=browser';
    const url = `${counting.url}${path}`;
    const first = await run({ url, mode: 'browser' });
    expect([first.status, first.cached, first.result_meta?.['stage']]).toEqual(['completed', false, 'browser']);
    expect(counting.visits(path)).toBe(1);

    const hit = await run({ url, mode: 'browser' });
    expect([hit.status, hit.cached]).toEqual(['completed', true]);
    expect(hit.result_meta).toMatchObject({ stage: 'browser', cached: true });
    expect(await textOf(hit.id)).toBe(await textOf(first.id));
    expect(await reservation(hit.id)).toMatchObject({ token_state: 'settled', charged_tokens: 5 });
    expect((await eventsOf(hit.id)).map((e) => e.type)).not.toContain('request.running');
    expect(counting.visits(path)).toBe(1);

    // Browser actions: run again (no read), and leave the entry alone (no write).
    const acted = await run({ url, mode: 'browser', browser_actions: [{ type: 'wait', ms: 50 }] });
    expect([acted.status, acted.cached]).toEqual(['completed', false]);
    expect(counting.visits(path)).toBe(2);
    const debug = await run({ url, mode: 'browser', debug_artifacts: true });
    expect([debug.status, debug.cached]).toEqual(['completed', false]);
    expect(counting.visits(path)).toBe(3);
    const after = await run({ url, mode: 'browser' });
    expect(after.cached).toBe(true);
    expect(await textOf(after.id)).toContain('visit 1');
    expect(counting.visits(path)).toBe(3);
  }, 120_000);
});
