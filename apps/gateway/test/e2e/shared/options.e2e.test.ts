import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { openEventStream } from '../sse-client.js';
import { adminCommand, eventually, startFixtureSite, sharedFleet, type FixtureSite, type Fleet } from '@wdr/testkit';
import { settledBalance } from '../balances.js';

/**
 * Issue 23: every submission option has its effect in every mode, observed through the public API
 * against the real fleet (docs/api.md, "Options by mode"): waits in the HTTP modes, the HTTP
 * stage's timeout, user_agent and cookies reaching the target over HTTP, debug_artifacts turning
 * JavaScript on, residential with proxy off refused, batches checking and running extraction like
 * single submissions, and base_tokens following the stage the request was settled at.
 */
let fleet: Fleet;
let article: http.Server;
let articleUrl: string;
/** A page that changes its URL without a navigation request: pushState, a fragment link, a script setting the hash. */
const SPA = `<!doctype html><html><body><p id="where"></p>
<button id="push" onclick="history.pushState({}, '', '/spa/next')">Push</button>
<a id="frag" href="#section">Section</a>
<button id="hash" onclick="location.hash = 'by-script'">Hash</button>
<script>const where = () => { document.getElementById('where').textContent = 'at ' + location.pathname + location.search + location.hash; };
setInterval(where, 20); history.replaceState({}, '', '/spa?loaded=1'); where();</script></body></html>`;
const ARTICLE = `<!doctype html><html><head><title>Article</title></head><body><article><h1>An article</h1><p>${'Plain text served by the server. '.repeat(20)}</p></article><script>setTimeout(() => { const p = document.createElement('p'); p.id = 'added'; p.textContent = 'Added by script'; document.body.appendChild(p); }, 50);</script></body></html>`;
/** A gallery: an article (no JavaScript shell) with 12 images, and a script adding the element an `auto` wait asks for. */
const GALLERY = (tag: string) =>
  ARTICLE.replace('</article>', `${Array.from({ length: 12 }, (_, i) => `<img src="/img/${tag}/${i}.png" alt="">`).join('')}</article>`);
/** A 1x1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
/** Image requests the article server answered, by gallery tag. */
const imageHits = new Map<string, number>();
let site: FixtureSite;
let apiKey: string;
let token: string;
let tenantId: string;

const gw = () => request(fleet.url('gateway'));
const data = () => ({ 'X-API-Key': apiKey });
const submit = (body: Record<string, unknown>) => gw().post('/api/v1/data/requests').set(data()).send(body);

async function detail(id: string): Promise<Record<string, unknown>> {
  const res = await gw().get(`/api/v1/data/requests/${id}`).set(data());
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}
const settled = (d: Record<string, unknown>) => ['settled', 'refunded'].includes(d['token_state'] as string);
const ended = (id: string, ms = 60_000) => eventually(() => detail(id), settled, ms, 150);

const balance = (): Promise<number> => settledBalance(fleet, tenantId);

async function accepted(body: Record<string, unknown>): Promise<string> {
  const res = await submit({ skip_cache: true, ...body });
  expect([res.status, res.body.code]).toEqual([202, undefined]);
  return res.body.id as string;
}

beforeAll(async () => {
  site = await startFixtureSite();
  article = http.createServer((req, res) => {
    const image = /^\/img\/([\w-]+)\/\d+\.png$/.exec(req.url ?? '');
    if (image) {
      imageHits.set(image[1]!, (imageHits.get(image[1]!) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      return;
    }
    const gallery = /^\/gallery\/([\w-]+)$/.exec(req.url ?? '');
    if (gallery) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(GALLERY(gallery[1]!));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(req.url?.startsWith('/spa') ? SPA : ARTICLE);
  });
  await new Promise<void>((resolve) => article.listen(0, '127.0.0.1', resolve));
  articleUrl = `http://127.0.0.1:${(article.address() as AddressInfo).port}`;
  fleet = sharedFleet();
  const t = await adminCommand(fleet, ['create-tenant', '--name', 'options', '--credits', '100000']);
  apiKey = t['api_key'] as string;
  tenantId = t['tenant_id'] as string;
  token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', tenantId]))['cabinet_token'] as string;
}, 180_000);

afterAll(async () => {
  await site?.close();
  await new Promise((resolve) => article?.close(resolve));
}, 60_000);

describe('waits outside the browser', () => {
  it.each([
    ['http', { wait_for_selector: '.price' }],
    ['direct', { wait_for_selector: 'h1' }],
    ['http', { wait_for_text: 'Hello from the fixture' }],
    ['direct', { wait_for_text: 'fixture   site' }],
  ])('%s with %j met by the page as served completes, charged', async (mode, waits) => {
    const id = await accepted({ url: `${site.url}/page`, mode, ...waits });
    const d = await ended(id);
    expect(d).toMatchObject({ status: 'completed', token_state: 'settled', request: { route_mode: mode } });
  });

  it.each([
    ['http', { wait_for_selector: '#rendered' }, 'WAIT_FOR_SELECTOR_TIMEOUT'],
    ['direct', { wait_for_selector: '#rendered' }, 'WAIT_FOR_SELECTOR_TIMEOUT'],
    ['http', { wait_for_text: 'Rendered by JavaScript' }, 'WAIT_FOR_TEXT_TIMEOUT'],
    ['http', { wait_for_selector: 'p[' }, 'INVALID_SELECTOR'],
  ])('%s with %j not in the page as served fails with its code, refunded', async (mode, waits, code) => {
    const before = await balance();
    const id = await accepted({ url: `${site.url}/js-page`, mode, ...waits });
    const d = await ended(id);
    expect(d).toMatchObject({ status: 'failed', token_state: 'refunded', error: { code }, user_error: { code } });
    expect(await balance()).toBe(before);
  });

  it('auto escalates to the browser when the wait is not met over HTTP, and the browser meets it', async () => {
    // A real article (not a JavaScript shell: auto would escalate for that alone) whose script adds the element waited for.
    const id = await accepted({ url: `${articleUrl}/article`, mode: 'auto', wait_for_selector: '#added' });
    const d = await ended(id, 90_000);
    expect(d).toMatchObject({ status: 'completed', token_state: 'settled', result_meta: { stage: 'browser' } });
    const events = await gw().get(`/api/v1/data/requests/${id}/events`).set(data());
    expect(JSON.stringify(events.body)).toContain('wait_unmet');
  }, 120_000);
});

describe('the HTTP stage', () => {
  it('timeout_ms ends a slow target with TARGET_TIMEOUT, refunded', async () => {
    const id = await accepted({ url: `${site.url}/slow?ms=9000`, mode: 'http', timeout_ms: 5000 });
    const d = await ended(id, 30_000);
    expect(d).toMatchObject({ status: 'failed', token_state: 'refunded', error: { code: 'TARGET_TIMEOUT' } });
  }, 40_000);

  it('sends user_agent and cookies to the target', async () => {
    const ua = `wdr-options-${randomUUID()}`;
    const uaId = await accepted({ url: `${site.url}/ua`, mode: 'http', user_agent: ua });
    const cookieId = await accepted({ url: `${site.url}/cookies/show`, mode: 'direct', cookies: { sid: 'abc=def', theme: 'dark mode' } });
    await Promise.all([ended(uaId), ended(cookieId)]);
    expect((await gw().get(`/api/v1/data/requests/${uaId}/result`).set(data())).text).toContain(ua);
    const cookies = (await gw().get(`/api/v1/data/requests/${cookieId}/result`).set(data())).text;
    expect(cookies).toContain('sid=abc=def');
    expect(cookies).toContain('theme=dark mode');
  });

  it('a direct request runs end to end: completed over HTTP without a proxy, charged the HTTP price', async () => {
    const before = await balance();
    const id = await accepted({ url: `${site.url}/page`, mode: 'direct' });
    const d = await ended(id);
    expect(d).toMatchObject({
      status: 'completed',
      token_state: 'settled',
      request: { route_mode: 'direct' },
      result_meta: { stage: 'http' },
    });
    expect(await balance()).toBe(before - (d['base_tokens'] as number));
  });
});

describe('the detail reports what happened', () => {
  it('an auto request finished over HTTP shows the HTTP base price it was charged, not the admission price', async () => {
    const res = await submit({ url: `${site.url}/page`, mode: 'auto', skip_cache: true });
    expect(res.status).toBe(202);
    const admitted = res.body.base_tokens as number;
    const before = await balance();
    const d = await eventually(
      () => detail(res.body.id as string),
      (x) => x['token_state'] === 'settled',
      60_000,
      150,
    );
    expect(d).toMatchObject({ status: 'completed', result_meta: { stage: 'http' } });
    expect(d['base_tokens']).toBe(1);
    expect(admitted).toBeGreaterThan(1);
    // The statement's charge is the detail's base price.
    expect(before - (await balance())).toBeLessThanOrEqual(admitted);
  });
});

describe('base_tokens of a cache hit', () => {
  it('is the price the hit was charged (auto: the HTTP tariff), not the admission price', async () => {
    const url = `${site.url}/js-page?cache-case=${randomUUID()}`;
    const first = await submit({ url, mode: 'auto' });
    expect(first.status).toBe(202);
    const rendered = await ended(first.body.id as string, 90_000);
    expect(rendered).toMatchObject({ status: 'completed', result_meta: { stage: 'browser' }, base_tokens: 5 });
    const hit = await submit({ url, mode: 'auto' });
    expect(hit.body.base_tokens).toBe(5);
    const d = await eventually(
      () => detail(hit.body.id as string),
      (x) => x['token_state'] === 'settled',
      60_000,
      150,
    );
    expect(d).toMatchObject({ status: 'completed', cached: true, base_tokens: 1 });
  }, 120_000);
});

describe("resource_policy in auto's browser stage", () => {
  it('adaptive blocks the images of an escalated page before they reach the server; compatible loads them all', async () => {
    // The wait is unmet over HTTP (the element is added by script), so auto escalates to the browser.
    const [light, full] = [`light-${randomUUID()}`, `full-${randomUUID()}`];
    const ids = await Promise.all([
      accepted({ url: `${articleUrl}/gallery/${light}`, mode: 'auto', wait_for_selector: '#added' }),
      accepted({ url: `${articleUrl}/gallery/${full}`, mode: 'auto', wait_for_selector: '#added', resource_policy: 'compatible' }),
    ]);
    const [dl, df] = await Promise.all(ids.map((id) => ended(id, 90_000)));
    for (const d of [dl!, df!])
      expect(d).toMatchObject({ status: 'completed', request: { route_mode: 'auto' }, result_meta: { stage: 'browser' } });
    expect(dl!['result_meta']).toMatchObject({
      resource_policy: { requested: 'adaptive', applied: 'site-light', blocked_requests: { image: 12 } },
    });
    expect(imageHits.get(light)).toBeUndefined();
    expect(df!['result_meta']).toMatchObject({ resource_policy: { requested: 'compatible', applied: 'full', blocked_requests: {} } });
    expect(imageHits.get(full)).toBe(12);
  }, 120_000);
});

describe('the waits in the browser', () => {
  it('wait at most 30 s even when timeout_ms allows more: WAIT_FOR_SELECTOR_TIMEOUT after the cap, refunded', async () => {
    const before = await balance();
    const id = await accepted({ url: `${site.url}/page`, mode: 'browser', wait_for_selector: '#never', timeout_ms: 120_000 });
    const d = await ended(id, 90_000);
    expect(d).toMatchObject({ status: 'failed', token_state: 'refunded', user_error: { code: 'WAIT_FOR_SELECTOR_TIMEOUT' } });
    expect((d['user_error'] as { message: string }).message).toContain('30000 ms');
    const ran = Date.parse(d['finished_at'] as string) - Date.parse(d['started_at'] as string);
    expect(ran).toBeGreaterThanOrEqual(30_000);
    expect(ran).toBeLessThan(60_000);
    expect(await balance()).toBe(before);
  }, 120_000);
});

describe('debug_artifacts', () => {
  it('turns JavaScript on in the browser although javascript is false', async () => {
    const id = await accepted({ url: `${site.url}/js-page`, javascript: false, debug_artifacts: true, wait_for_selector: '#rendered' });
    const d = await ended(id, 90_000);
    expect(d).toMatchObject({
      status: 'completed',
      request: { route_mode: 'browser' },
      result_meta: { stage: 'browser', javascript: true },
    });
    expect((await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set(data())).text).toContain('Rendered by JavaScript');
  }, 120_000);
});

describe('clicks that change the page URL without a navigation request', () => {
  it('are blocked and counted: pushState, a fragment link, a script setting the hash (the page may use history while it loads)', async () => {
    const id = await accepted({
      url: `${articleUrl}/spa`,
      mode: 'browser',
      browser_actions: [
        { type: 'click', selector: '#push' },
        { type: 'click', selector: '#frag' },
        { type: 'click', selector: '#hash' },
        { type: 'wait', ms: 100 },
      ],
    });
    const d = await ended(id, 90_000);
    expect(d).toMatchObject({ status: 'completed', result_meta: { actions: { run: 4, failed: 0, blocked: 3 } } });
    const text = (await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set(data())).text;
    expect(text).toContain('at /spa?loaded=1');
    expect(text).not.toMatch(/spa\/next|#section|#by-script/);
  }, 120_000);
});

describe('proxy off', () => {
  it.each([
    [{ mode: 'residential', proxy: 'off' }, 'mode'],
    [{ mode: 'residential_browser', proxy: 'off' }, 'mode'],
    [{ mode: 'http', proxy_type: 'residential', proxy: 'off' }, 'proxy_type'],
  ])('%j is refused at validation (422 at %s), nothing charged', async (options, field) => {
    const before = await balance();
    const res = await submit({ url: `${site.url}/page`, ...options });
    expect([res.status, res.body.code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(res.body.details).toEqual(expect.arrayContaining([{ field, issue: expect.any(String) }]));
    expect(await balance()).toBe(before);
  });
});

describe('batches and extraction', () => {
  const RULES = {
    dsl_version: 1,
    fields: [
      { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
      { name: 'price', type: 'number', required: true, selectors: ['.price'] },
    ],
  };
  let recipeId: string;
  let draftId: string;

  beforeAll(async () => {
    const cabinet = { Authorization: `Bearer ${token}` };
    const r = await gw()
      .post('/api/v1/client/recipes')
      .set(cabinet)
      .send({ name: 'Product', sample_url: `${site.url}/product`, definition: RULES, activate: true });
    expect(r.status).toBe(201);
    recipeId = r.body.id as string;
    const draft = await gw()
      .post('/api/v1/client/recipes')
      .set(cabinet)
      .send({ name: 'Draft', sample_url: `${site.url}/product`, definition: RULES, activate: false });
    expect(draft.status).toBe(201);
    draftId = draft.body.id as string;
  });

  it('refuses a batch whose jobs name an unknown or a draft-only recipe, each at its job, nothing charged', async () => {
    const before = await balance();
    const res = await gw()
      .post('/api/v1/data/batches')
      .set(data())
      .send({
        jobs: [
          { url: `${site.url}/product`, mode: 'http', extraction: { recipe_id: recipeId } },
          { url: `${site.url}/product`, mode: 'http', extraction: { recipe_id: randomUUID() } },
          { url: `${site.url}/product`, mode: 'http', extraction: { recipe_id: draftId } },
        ],
      });
    expect([res.status, res.body.code]).toEqual([422, 'VALIDATION_FAILED']);
    const fields = (res.body.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['jobs.1.extraction.recipe_id', 'jobs.2.extraction.recipe_id']);
    expect(await balance()).toBe(before);
  });

  it("tracks the extraction's readiness: the submission's status, the events, the stream ending with the extraction, a replay", async () => {
    const key = `extraction-${randomUUID()}`;
    const body = { url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } };
    const sub = await gw().post('/api/v1/data/requests').set(data()).set('Idempotency-Key', key).send(body);
    expect(sub.status).toBe(202);
    expect(sub.body).toMatchObject({ status: 'waiting_for_page', result_kind: 'extraction', page_status: expect.any(String) });
    // skip_cache: the page started with its admission when a local slot was free (fetch-orchestrator local runs), else it is queued.
    expect(['pending', 'running']).toContain(sub.body.page_status);
    const id = sub.body.id as string;
    const stream = await openEventStream(fleet.url('gateway'), `/api/v1/data/requests/${id}/events/stream`, data());
    expect(stream.status).toBe(200);
    await stream.ended;
    const kinds = stream.messages.map((m) => JSON.parse(m.data) as { type: string; status: string });
    // The page's end comes first, the stream ends with the extraction's.
    expect(kinds.map((k) => k.type)).toContain('request.completed');
    expect(kinds.at(-1)).toEqual(expect.objectContaining({ type: 'extraction.completed', status: 'completed' }));
    expect(stream.comments).toContain('end terminal');
    expect((await detail(id))['status']).toBe('completed');
    const events = await gw().get(`/api/v1/data/requests/${id}/events`).set(data());
    expect((events.body.data as { type: string }[]).map((e) => e.type)).toContain('extraction.completed');
    // A stream opened after the end replays the whole history (tokens.settled may follow the extraction's end) and ends at once.
    const late = await openEventStream(fleet.url('gateway'), `/api/v1/data/requests/${id}/events/stream`, data());
    await late.ended;
    expect(late.messages.map((m) => (JSON.parse(m.data) as { type: string }).type)).toContain('extraction.completed');
    expect(late.comments).toContain('end terminal');
    const replay = await gw().post('/api/v1/data/requests').set(data()).set('Idempotency-Key', key).send(body);
    expect(replay.body).toMatchObject({
      id,
      idempotent_replay: true,
      status: 'completed',
      result_kind: 'extraction',
      page_status: 'completed',
    });
  }, 90_000);

  it('ends the stream with extraction.failed when the page failed', async () => {
    const sub = await submit({ url: `${site.url}/status/500`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
    expect(sub.status).toBe(202);
    const stream = await openEventStream(fleet.url('gateway'), `/api/v1/data/requests/${sub.body.id as string}/events/stream`, data());
    await stream.ended;
    const last = JSON.parse(stream.messages.at(-1)!.data) as Record<string, unknown>;
    expect(last).toMatchObject({ type: 'extraction.failed', status: 'failed', data: { error: { code: expect.any(String) } } });
  }, 90_000);

  it('runs the extraction of each batch job like a single submission', async () => {
    const res = await gw()
      .post('/api/v1/data/batches')
      .set(data())
      .send({
        jobs: [
          { url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } },
          { url: `${site.url}/page`, mode: 'http', skip_cache: true },
        ],
      });
    expect(res.status).toBe(202);
    const [extract, plain] = res.body.jobs as { id: string }[];
    const d = await eventually(
      () => detail(extract!.id),
      (x) => x['status'] === 'completed' || x['status'] === 'failed',
      60_000,
      150,
    );
    expect(d).toMatchObject({ status: 'completed', result_kind: 'extraction', page_status: 'completed' });
    const out = await gw().get(`/api/v1/data/requests/${extract!.id}/extraction`).set(data());
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ status: 'completed', recipe_id: recipeId, data: { title: expect.any(String) } });
    expect((await detail(plain!.id))['result_kind']).toBeUndefined();
  }, 90_000);

  it("shows each batch job's status as its detail does: an extraction job's readiness, the batch aggregated from it", async () => {
    const res = await gw()
      .post('/api/v1/data/batches')
      .set(data())
      .send({
        jobs: [
          { url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } },
          // The page completes; the recipe finds no title there: the extraction fails.
          { url: `${site.url}/page`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } },
          { url: `${site.url}/page`, mode: 'http', skip_cache: true },
        ],
      });
    expect(res.status).toBe(202);
    // The submission answers as single submissions do: the extraction jobs wait for their pages.
    expect(res.body.jobs).toEqual([
      expect.objectContaining({ status: 'waiting_for_page', result_kind: 'extraction', page_status: 'pending' }),
      expect.objectContaining({ status: 'waiting_for_page', result_kind: 'extraction', page_status: 'pending' }),
      expect.objectContaining({ status: 'pending' }),
    ]);
    expect(res.body.jobs[2].result_kind).toBeUndefined();
    const batchId = res.body.batch_id as string;
    const read = async () => (await gw().get(`/api/v1/data/batches/${batchId}`).set(data()).expect(200)).body as Record<string, unknown>;
    const seen = new Set<string>();
    const ended = await eventually(
      async () => {
        const b = await read();
        seen.add(`${b['status'] as string}:${(b['jobs'] as { status: string }[]).map((j) => j.status).join(',')}`);
        return b;
      },
      (b) => b['finished_at'] !== null,
      60_000,
      100,
    );
    const [good, missing, plain] = ended['jobs'] as Record<string, unknown>[];
    expect(good).toMatchObject({ status: 'completed', result_kind: 'extraction', page_status: 'completed', error: null, page_error: null });
    expect(missing).toMatchObject({
      status: 'failed',
      result_kind: 'extraction',
      page_status: 'completed',
      error: { code: 'REQUIRED_FIELDS_MISSING' },
      page_error: null,
    });
    expect(plain).toMatchObject({ status: 'completed', error: null });
    // The page statuses would say completed; the extractions say partial.
    expect(ended).toMatchObject({ status: 'partial', total_jobs: 3, completed_jobs: 2, failed_jobs: 1 });
    // Each job's status is its detail's.
    for (const job of ended['jobs'] as { id: string; status: string }[]) expect((await detail(job.id))['status']).toBe(job.status);
    // Never `completed` on the way (a batch shown done while an extraction ran).
    expect([...seen].some((x) => x.startsWith('completed:'))).toBe(false);
  }, 90_000);
});
