// Own fleet (not the shared one of ./shared/): recipe-extractor reaches Kafka through a proxy this file cuts; it pauses the orchestrator and SIGKILLs recipe-extractor.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import {
  adminCommand,
  eventually,
  KAFKA_BROKERS,
  startFixtureSite,
  startFleet,
  startKafkaProxy,
  type FixtureSite,
  type Fleet,
  type TcpProxy,
  withDatabase,
} from '@wdr/testkit';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Recipes and structured extraction through the public API on the real fleet: recipe writes and
 * both listings (recipe-extractor's tables behind the gateway), capabilities from recipe-extractor's
 * configuration, and an extraction run over a local product page (orchestrator -> extraction.jobs
 * -> recipe-extractor, page read back by claim-check).
 */
let fleet: Fleet;
let site: FixtureSite;
let held: HeldPage;
/** recipe-extractor alone reaches Kafka through this relay: cutting it holds extraction jobs back (the rest of the fleet is untouched). */
let extractorKafka: TcpProxy;
let t: { id: string; apiKey: string; token: string };

/**
 * A target page that holds every answer until the test releases it: while a request to it is
 * pending here, its page fetch is provably not over.
 */
interface HeldPage {
  url: string;
  arrived: () => number;
  release: () => void;
  close: () => Promise<void>;
}

async function startHeldPage(html: string): Promise<HeldPage> {
  const waiting: ServerResponse[] = [];
  let arrived = 0;
  const server: Server = createServer((_req, res) => {
    arrived++;
    waiting.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => {
    for (const res of waiting.splice(0)) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived: () => arrived,
    release,
    close: async () => {
      release();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const gw = () => request(fleet.url('gateway'));
const client = () => ({ Authorization: `Bearer ${t.token}` });
const data = () => ({ 'X-API-Key': t.apiKey });

async function newTenant(name: string, credits = 1000) {
  const created = await adminCommand(fleet, ['create-tenant', '--name', name, '--credits', String(credits)]);
  const c = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', created['tenant_id'] as string]);
  return { id: created['tenant_id'] as string, apiKey: created['api_key'] as string, token: c['cabinet_token'] as string };
}

function expectPublicError(res: request.Response, status: number, code: string) {
  expect([res.status, res.body.code]).toEqual([status, code]);
  expect(typeof res.body.request_id).toBe('string');
}

const PRODUCT_RULES = {
  dsl_version: 1,
  fields: [
    { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
    { name: 'price', type: 'number', required: true, selectors: ['.price'] },
    { name: 'in_stock', type: 'boolean', selectors: ['.stock'] },
    { name: 'brand', type: 'string', source: { type: 'json_ld', path: 'brand.name', item_type: 'Product' } },
    { name: 'og_title', type: 'string', source: { type: 'opengraph', property: 'og:title' } },
    { name: 'image', type: 'url', selectors: ['img.main'], source: { type: 'attribute', name: 'src' } },
    {
      name: 'reviews',
      type: 'object',
      multiple: true,
      scope: 'section.review',
      fields: [
        { name: 'author', type: 'string', required: true, selectors: ['.author'] },
        { name: 'stars', type: 'integer', selectors: ['.stars'] },
      ],
    },
  ],
};

beforeAll(async () => {
  site = await startFixtureSite();
  held = await startHeldPage('<!doctype html><html><body><h1 class="title">Held Shoe</h1><p class="price">10.00</p></body></html>');
  const [host, port] = KAFKA_BROKERS[0]!.split(':');
  extractorKafka = await startKafkaProxy({ host: host!, port: Number(port) });
  fleet = await startFleet({ env: { 'recipe-extractor': { KAFKA_BROKERS: `127.0.0.1:${extractorKafka.port}` } } });
  t = await newTenant('recipes');
}, 180_000);

afterAll(async () => {
  const orchestratorPid = fleet?.pid('fetch-orchestrator');
  if (orchestratorPid) process.kill(orchestratorPid, 'SIGCONT');
  extractorKafka?.restore();
  await fleet?.stop();
  await site?.close();
  await held?.close();
  await extractorKafka?.close();
});

describe('recipes', () => {
  it('are created, read, updated, versioned, activated and deleted through the client API', async () => {
    const created = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Shoes', sample_url: `${site.url}/product`, definition: PRODUCT_RULES });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Shoes',
      description: '',
      sample_url: `${site.url}/product`,
      status: 'draft',
      active_version_id: null,
      advanced_schema: false,
      auto_repair_enabled: false,
      continuous_repair_confirmed_at: null,
    });
    expect(created.body.fields).toContainEqual({ name: 'title', type: 'string', required: true, multiple: false, description: '' });
    expect(created.body.versions).toHaveLength(1);
    const id = created.body.id as string;
    const v1 = created.body.versions[0].id as string;

    const patched = await gw()
      .patch(`/api/v1/client/recipes/${id}`)
      .set(client())
      .send({ description: 'Trail shoes', continuous_repair_confirmed: true });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe('Trail shoes');
    expect(patched.body.continuous_repair_confirmed_at).toEqual(expect.any(String));

    const v2 = await gw()
      .post(`/api/v1/client/recipes/${id}/versions`)
      .set(client())
      .send({ definition: { dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1'] }] } });
    expect(v2.status).toBe(201);
    expect(v2.body).toMatchObject({ version: 2, dsl_version: 1, reason: 'created', fields: [{ name: 'title' }] });
    expect(v2.body.schema).toMatchObject({ type: 'object', required: ['title'] });

    const active = await gw().post(`/api/v1/client/recipes/${id}/versions/${v1}/activate`).set(client());
    expect(active.status).toBe(200);
    expect(active.body).toMatchObject({ status: 'active', active_version_id: v1 });
    expect(active.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);

    expect((await gw().get(`/api/v1/client/recipes/${id}`).set(client())).body.active_version_id).toBe(v1);
    expectPublicError(await gw().post(`/api/v1/client/recipes/${id}/versions/${randomUUID()}/activate`).set(client()), 404, 'NOT_FOUND');
    expect((await gw().delete(`/api/v1/client/recipes/${id}`).set(client())).status).toBe(204);
    expectPublicError(await gw().get(`/api/v1/client/recipes/${id}`).set(client()), 404, 'NOT_FOUND');
  });

  it('replay a write under the same Idempotency-Key and refuse the key with another body', async () => {
    const key = `recipe-${randomUUID()}`;
    const body = { name: 'Once', sample_url: `${site.url}/product` };
    const first = await gw().post('/api/v1/client/recipes').set(client()).set('Idempotency-Key', key).send(body);
    const again = await gw().post('/api/v1/client/recipes').set(client()).set('Idempotency-Key', key).send(body);
    expect(first.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expectPublicError(
      await gw()
        .post('/api/v1/client/recipes')
        .set(client())
        .set('Idempotency-Key', key)
        .send({ ...body, name: 'Twice' }),
      409,
      'IDEMPOTENCY_CONFLICT',
    );
    // Without a key every call is a new recipe.
    const a = await gw().post('/api/v1/client/recipes').set(client()).send(body);
    const b = await gw().post('/api/v1/client/recipes').set(client()).send(body);
    expect(a.body.id).not.toBe(b.body.id);
  });

  it('refuse definitions beyond the capability limits with a detail per problem', async () => {
    const caps = (await gw().get('/api/v1/client/recipes/capabilities').set(client())).body;
    expect(caps).toMatchObject({
      enabled: true,
      dsl_version: 1,
      limits: { max_rules: 100, max_selectors_per_rule: 5, max_schema_bytes: 65_536 },
    });
    expect(caps.extraction_fields.scalar_source_types).toEqual(
      expect.arrayContaining(['text', 'attribute', 'html', 'json_ld', 'opengraph', 'microdata']),
    );

    const field = (i: number) => ({ name: `f${i}`, type: 'string', selectors: ['h1'] });
    const tooMany = { dsl_version: 1, fields: Array.from({ length: caps.limits.max_rules + 1 }, (_, i) => field(i)) };
    const res = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Big', sample_url: `${site.url}/product`, definition: tooMany });
    expectPublicError(res, 422, 'VALIDATION_FAILED');
    expect(res.body.details).toContainEqual({
      field: 'definition.fields',
      issue: `has ${caps.limits.max_rules + 1} rules; max_rules is ${caps.limits.max_rules}`,
    });

    const selectors = { dsl_version: 1, fields: [{ ...field(0), selectors: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] }] };
    const res2 = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Sel', sample_url: `${site.url}/product`, definition: selectors });
    expect(res2.body.details).toContainEqual({
      field: 'definition.fields.0.selectors',
      issue: 'has 6 selectors; max_selectors_per_rule is 5',
    });

    const bytes = { dsl_version: 1, fields: Array.from({ length: 80 }, (_, i) => ({ ...field(i), description: 'x'.repeat(1000) })) };
    const res3 = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Bytes', sample_url: `${site.url}/product`, definition: bytes });
    expectPublicError(res3, 422, 'VALIDATION_FAILED');
    expect(res3.body.details[0]).toEqual({ field: 'definition', issue: expect.stringContaining('max_schema_bytes is 65536') });
  });

  it('list as offset pages in both APIs; the data API includes each active version and its field schema', async () => {
    const other = await newTenant('recipes-list');
    const auth = { Authorization: `Bearer ${other.token}` };
    for (const [i, activate] of [
      [1, true],
      [2, false],
      [3, true],
    ] as const) {
      const r = await gw()
        .post('/api/v1/client/recipes')
        .set(auth)
        .send({ name: `R${i}`, sample_url: `${site.url}/product`, definition: PRODUCT_RULES, activate });
      expect(r.status).toBe(201);
    }
    const all = await gw().get('/api/v1/client/recipes').set(auth);
    expect(all.body).toMatchObject({ total: 3, limit: 20, offset: 0, has_more: false });
    expect(all.body.items.map((r: { name: string }) => r.name)).toEqual(['R1', 'R2', 'R3']);
    expect(all.body.items[0].active_version).toBeUndefined();

    const page = await gw().get('/api/v1/data/recipes?limit=2&offset=1').set('X-API-Key', other.apiKey);
    expect(page.body).toMatchObject({ total: 3, limit: 2, offset: 1, has_more: false });
    expect(page.body.items.map((r: { name: string; status: string }) => [r.name, r.status])).toEqual([
      ['R2', 'draft'],
      ['R3', 'active'],
    ]);
    expect(page.body.items[0].active_version).toBeNull();
    expect(page.body.items[1].active_version).toMatchObject({
      version: 1,
      fields: expect.arrayContaining([{ name: 'price', type: 'number', required: true, multiple: false, description: '' }]),
    });
    expect(page.body.items[1].active_version.schema).toMatchObject({ type: 'object', properties: { price: { type: 'number' } } });

    const first = await gw().get('/api/v1/data/recipes?limit=1').set('X-API-Key', other.apiKey);
    expect(first.body).toMatchObject({ total: 3, limit: 1, offset: 0, has_more: true });
    const beyond = await gw().get('/api/v1/client/recipes?offset=250000').set(auth);
    expect(beyond.body).toEqual({ total: 3, limit: 20, offset: 250000, has_more: false, items: [] });
    // Tenants never see each other's recipes.
    expect((await gw().get('/api/v1/client/recipes').set(client())).body.items.map((r: { name: string }) => r.name)).not.toContain('R1');
  });
});

describe('extraction', () => {
  let recipeId: string;

  beforeAll(async () => {
    const r = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Product', sample_url: `${site.url}/product`, definition: PRODUCT_RULES, activate: true });
    expect(r.status).toBe(201);
    recipeId = r.body.id as string;
  });

  const detail = async (id: string) => (await gw().get(`/api/v1/data/requests/${id}`).set(data()).expect(200)).body;
  const ended = (id: string) =>
    eventually(
      () => detail(id),
      (d) => d.status === 'completed' || d.status === 'failed',
      60_000,
    );

  it('runs the active version over the fetched page and serves the structured result', async () => {
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
    expect(sub.status).toBe(202);
    expect(sub.body).toMatchObject({ status: 'waiting_for_page', result_kind: 'extraction', page_status: expect.any(String) });
    // skip_cache: the page started with its admission when a local slot was free (fetch-orchestrator local runs), else it is queued.
    expect(['pending', 'running']).toContain(sub.body.page_status);

    const d = await ended(sub.body.id);
    expect(d).toMatchObject({ status: 'completed', result_kind: 'extraction', page_status: 'completed', error: null, page_error: null });
    expect(d.extraction).toMatchObject({ recipe_id: recipeId, status: 'completed', error: null });

    const result = await gw().get(`/api/v1/data/requests/${sub.body.id}/extraction`).set(data());
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ status: 'completed', page_status: 'completed', error: null, warnings: [] });
    expect(result.body.data).toEqual({
      title: 'Trail Shoe X',
      price: 129.9,
      in_stock: true,
      brand: 'Peak',
      og_title: 'Trail Shoe X',
      image: `${site.url}/img/1.png`,
      reviews: [
        { author: 'Ann', stars: 5 },
        { author: 'Bob', stars: 4 },
      ],
    });
    // The page result is still there beside it.
    expect((await gw().get(`/api/v1/data/requests/${sub.body.id}/result`).set(data())).text).toContain('Trail Shoe X');
  }, 90_000);

  it('is waiting_for_page while its page is being fetched, then ends with the run', async () => {
    const before = held.arrived();
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${held.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
    expect(sub.status).toBe(202);
    // The orchestrator is fetching the page and the page server has not answered: the fetch is not over.
    await eventually(
      async () => held.arrived(),
      (n) => n > before,
      30_000,
      50,
    );
    const waiting = await detail(sub.body.id);
    expect(waiting).toMatchObject({
      status: 'waiting_for_page',
      result_kind: 'extraction',
      page_status: 'running',
      error: null,
      extraction: { status: 'waiting_for_page' },
    });
    const list = (await gw().get('/api/v1/data/requests?limit=100').set(data()).expect(200)).body as {
      data: { id: string; status: string }[];
    };
    expect(list.data.find((r) => r.id === sub.body.id)).toMatchObject({ status: 'waiting_for_page', page_status: 'running' });
    expectPublicError(await gw().get(`/api/v1/data/requests/${sub.body.id}/extraction`).set(data()), 409, 'RESULT_NOT_READY');

    held.release();
    const d = await ended(sub.body.id);
    expect(d).toMatchObject({ status: 'completed', page_status: 'completed', extraction: { status: 'completed' } });
    expect((await gw().get(`/api/v1/data/requests/${sub.body.id}/extraction`).set(data()).expect(200)).body.data).toMatchObject({
      title: 'Held Shoe',
      price: 10,
    });
  }, 90_000);

  it('fails the run with a clear error when a required field is missing, while the page completed', async () => {
    const v = await gw()
      .post(`/api/v1/client/recipes/${recipeId}/versions`)
      .set(client())
      .send({
        definition: {
          dsl_version: 1,
          fields: [...PRODUCT_RULES.fields, { name: 'sku', type: 'string', required: true, selectors: ['.sku'] }],
        },
      });
    expect(v.status).toBe(201);
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId, version_id: v.body.id } });
    expect(sub.status).toBe(202);
    const d = await ended(sub.body.id);
    expect(d).toMatchObject({
      status: 'failed',
      page_status: 'completed',
      page_error: null,
      user_error: { code: 'REQUIRED_FIELDS_MISSING' },
    });
    const result = (await gw().get(`/api/v1/data/requests/${sub.body.id}/extraction`).set(data()).expect(200)).body;
    expect(result).toMatchObject({
      status: 'failed',
      data: null,
      version_id: v.body.id,
      error: {
        code: 'REQUIRED_FIELDS_MISSING',
        message: 'Required fields were not found on the page: sku.',
        details: [{ field: 'sku', issue: 'required field not found on the page' }],
      },
    });
  }, 90_000);

  it('shows extraction requests in the request list as their detail does', async () => {
    const v = await gw()
      .post(`/api/v1/client/recipes/${recipeId}/versions`)
      .set(client())
      .send({ definition: { dsl_version: 1, fields: [{ name: 'sku', type: 'string', required: true, selectors: ['.sku'] }] } })
      .expect(201);
    const failing = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId, version_id: v.body.id } });
    const plain = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/page`, mode: 'http', skip_cache: true });
    const d = await ended(failing.body.id);
    await ended(plain.body.id);
    const list = (await gw().get('/api/v1/data/requests?limit=100').set(data()).expect(200)).body as { data: { id: string }[] };
    const item = list.data.find((r) => r.id === failing.body.id);
    expect(item).toMatchObject({
      status: 'failed',
      result_kind: 'extraction',
      page_status: 'completed',
      page_error: null,
      user_error: { code: 'REQUIRED_FIELDS_MISSING' },
      extraction: { run_id: d.extraction.run_id, version_id: v.body.id, status: 'failed' },
    });
    const other = list.data.find((r) => r.id === plain.body.id) as Record<string, unknown>;
    expect(other['status']).toBe('completed');
    expect(other['result_kind']).toBeUndefined();
    // The status filter is the page fetch's: the extraction request's page completed.
    const completed = (await gw().get('/api/v1/data/requests?limit=100&status=completed').set(data()).expect(200)).body as {
      data: { id: string; status: string }[];
    };
    expect(completed.data.find((r) => r.id === failing.body.id)).toMatchObject({ status: 'failed', page_status: 'completed' });
  }, 90_000);

  it('fails the run when the page fetch fails, and keeps the page error apart', async () => {
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/status/500`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
    expect(sub.status).toBe(202);
    const d = await ended(sub.body.id);
    expect(d).toMatchObject({ status: 'failed', page_status: 'failed', user_error: { code: 'PAGE_NOT_COMPLETED' } });
    expect(d.page_error).toEqual(expect.objectContaining({ code: expect.any(String) }));
  }, 90_000);

  it('retries a failed extraction as a new request with a new run, also when only the run failed', async () => {
    // Active version needs a field the page lacks: the page completes, the run fails.
    const strict = {
      dsl_version: 1,
      fields: [...PRODUCT_RULES.fields, { name: 'sku', type: 'string', required: true, selectors: ['.sku'] }],
    };
    const r = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Retry', sample_url: `${site.url}/product`, definition: strict, activate: true });
    expect(r.status).toBe(201);
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: r.body.id } });
    const failed = await ended(sub.body.id);
    expect(failed).toMatchObject({ status: 'failed', page_status: 'completed', user_error: { code: 'REQUIRED_FIELDS_MISSING' } });

    // The tenant fixes the recipe, then retries: the new run uses the active version at retry time.
    const fixed = await gw()
      .post(`/api/v1/client/recipes/${r.body.id}/versions`)
      .set(client())
      .send({ definition: PRODUCT_RULES, activate: true });
    expect(fixed.status).toBe(201);
    const key = `retry-${randomUUID()}`;
    const retry = await gw().post(`/api/v1/data/requests/${sub.body.id}/retry`).set(data()).set('Idempotency-Key', key);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({
      retried_from_id: sub.body.id,
      retried_from_run_id: failed.extraction.run_id,
      result_kind: 'extraction',
      idempotent_replay: false,
    });
    expect(retry.body.id).not.toBe(sub.body.id);
    const replay = await gw().post(`/api/v1/data/requests/${sub.body.id}/retry`).set(data()).set('Idempotency-Key', key);
    expect(replay.body).toMatchObject({ id: retry.body.id, idempotent_replay: true, retried_from_run_id: failed.extraction.run_id });

    const d = await ended(retry.body.id);
    expect(d).toMatchObject({
      status: 'completed',
      page_status: 'completed',
      retried_from_id: sub.body.id,
      retried_from_run_id: failed.extraction.run_id,
    });
    expect(d.extraction).toMatchObject({ version_id: fixed.body.id, retried_from_run_id: failed.extraction.run_id });
    expect(d.extraction.run_id).not.toBe(failed.extraction.run_id);
    expect((await gw().get(`/api/v1/data/requests/${retry.body.id}/extraction`).set(data()).expect(200)).body.data).toMatchObject({
      title: 'Trail Shoe X',
    });
    // The source and its run are kept as they were.
    expect(await detail(sub.body.id)).toMatchObject({
      status: 'failed',
      extraction: { run_id: failed.extraction.run_id, status: 'failed' },
    });

    // A completed extraction is not retryable.
    expectPublicError(await gw().post(`/api/v1/data/requests/${retry.body.id}/retry`).set(data()), 409, 'CONFLICT');
  }, 120_000);

  it('retries an extraction whose page failed with a new run', async () => {
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/status/500`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
    const failed = await ended(sub.body.id);
    expect(failed).toMatchObject({ status: 'failed', page_status: 'failed' });
    const retry = await gw().post(`/api/v1/data/requests/${sub.body.id}/retry`).set(data());
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({
      retried_from_id: sub.body.id,
      retried_from_run_id: failed.extraction.run_id,
      result_kind: 'extraction',
    });
    const d = await ended(retry.body.id);
    expect(d).toMatchObject({
      status: 'failed',
      page_status: 'failed',
      retried_from_id: sub.body.id,
      extraction: { retried_from_run_id: failed.extraction.run_id },
    });
  }, 120_000);

  it('refuses a submission naming an unknown recipe, a foreign version or a draft, before anything is charged', async () => {
    const submit = (extraction: unknown) =>
      gw()
        .post('/api/v1/data/requests')
        .set(data())
        .send({ url: `${site.url}/product`, mode: 'http', extraction });
    const unknown = await submit({ recipe_id: randomUUID() });
    expectPublicError(unknown, 422, 'VALIDATION_FAILED');
    expect(unknown.body.details).toEqual([{ field: 'extraction.recipe_id', issue: 'no such recipe' }]);
    const draft = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Draft', sample_url: `${site.url}/product`, definition: PRODUCT_RULES });
    expect((await submit({ recipe_id: draft.body.id })).body.details).toEqual([
      { field: 'extraction.recipe_id', issue: expect.stringContaining('no active version') },
    ]);
    expect((await submit({ recipe_id: recipeId, version_id: randomUUID() })).body.details).toEqual([
      { field: 'extraction.version_id', issue: 'no such version of this recipe' },
    ]);
    expectPublicError(await submit({ fields: [{ name: 'title' }] }), 422, 'VALIDATION_FAILED');
    // A plain request has no extraction result.
    const plain = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/page`, mode: 'http' });
    expectPublicError(await gw().get(`/api/v1/data/requests/${plain.body.id}/extraction`).set(data()), 404, 'NOT_FOUND');
  });
  it('is queued once its page is done while its job waits for recipe-extractor, then runs', async () => {
    // recipe-extractor cannot reach Kafka: the page completes, its job waits on the topic.
    extractorKafka.cut();
    try {
      const sub = await gw()
        .post('/api/v1/data/requests')
        .set(data())
        .send({ url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
      expect(sub.status).toBe(202);
      const queued = await eventually(
        () => detail(sub.body.id),
        (d) => d.page_status === 'completed',
        60_000,
      );
      expect(queued).toMatchObject({
        status: 'queued',
        page_status: 'completed',
        page_error: null,
        error: null,
        extraction: { status: 'queued' },
      });
      expectPublicError(await gw().get(`/api/v1/data/requests/${sub.body.id}/extraction`).set(data()), 409, 'RESULT_NOT_READY');
      // Still queued a moment later: nothing else runs it.
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await detail(sub.body.id)).status).toBe('queued');

      extractorKafka.restore();
      const d = await eventually(
        () => detail(sub.body.id),
        (x) => x.status === 'completed' || x.status === 'failed',
        120_000,
        500,
      );
      expect(d).toMatchObject({ status: 'completed', page_status: 'completed', extraction: { status: 'completed' } });
    } finally {
      extractorKafka.restore();
    }
  }, 180_000);
});

type Db = Parameters<Parameters<typeof withDatabase>[1]>[0];
const extractorDb = <T>(fn: (c: Db) => Promise<T>) => withDatabase(fleet.databases['recipe-extractor'].url, fn);
const orchestratorDb = <T>(fn: (c: Db) => Promise<T>) => withDatabase(fleet.databases['fetch-orchestrator'].url, fn);

/**
 * The end of an extraction run reaches the request's history exactly once, whatever happens to
 * recipe-extractor after the run's end committed (issue 23): the announcement
 * (`extraction.run_ended` on extraction.events) is an outbox row written in the transaction that
 * ends the run. Here the extractor commits that end while it cannot reach Kafka, is SIGKILLed with
 * the announcement unpublished, and is started again: its relay publishes the row and the
 * orchestrator appends `extraction.completed` once. The gap is made deterministic by pausing the
 * orchestrator (SIGSTOP) while the extractor reads the page from it: the run is provably mid-flight
 * (`running`) when the extractor's Kafka is cut, then the orchestrator resumes and the run ends with
 * the broker out of reach.
 */
describe('the extraction end announcement', () => {
  let endRecipeId: string;
  beforeAll(async () => {
    const r = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Announced', sample_url: `${site.url}/product`, definition: PRODUCT_RULES, activate: true });
    expect(r.status).toBe(201);
    endRecipeId = r.body.id as string;
  });

  it('survives a SIGKILL of recipe-extractor between the commit of the run and its announcement: appended once after the restart', async () => {
    // 1. The extractor cannot take the job yet.
    extractorKafka.cut();
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data())
      .send({ url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: endRecipeId } });
    expect(sub.status).toBe(202);
    const id = sub.body.id as string;
    const current = async () => (await gw().get(`/api/v1/data/requests/${id}`).set(data()).expect(200)).body as Record<string, unknown>;
    // 2. The page completed and its extraction job is on Kafka (published from the orchestrator's outbox).
    await eventually(current, (d) => d['page_status'] === 'completed', 60_000, 150);
    await eventually(
      () =>
        orchestratorDb(
          async (c) =>
            (
              await c.query(
                `SELECT count(*)::int AS n FROM outbox_messages WHERE message_key = $1 AND envelope->>'type' = 'extraction.job_requested' AND published_at IS NOT NULL`,
                [id],
              )
            ).rows[0].n as number,
        ),
      (n) => n === 1,
      30_000,
      100,
    );
    const runStatus = () =>
      extractorDb(async (c) => (await c.query('SELECT status FROM extraction_runs WHERE request_id = $1', [id])).rows[0]?.status as string);
    const announcement = () =>
      extractorDb(
        async (c) =>
          (
            await c.query<{ published: boolean; status: string }>(
              `SELECT published_at IS NOT NULL AS published, envelope->'data'->>'status' AS status FROM outbox_messages
                WHERE message_key = $1 AND envelope->>'type' = 'extraction.run_ended'`,
              [id],
            )
          ).rows,
      );
    const historyEnds = async () =>
      ((await gw().get(`/api/v1/data/requests/${id}/events`).set(data()).expect(200)).body as { data: { type: string }[] }).data.filter(
        (e) => e.type.startsWith('extraction.'),
      );

    // 3. Pause the orchestrator, let the extractor take the job: it marks the run running, then waits for the page.
    const orchestratorPid = fleet.pid('fetch-orchestrator')!;
    process.kill(orchestratorPid, 'SIGSTOP');
    try {
      extractorKafka.restore();
      await eventually(runStatus, (s) => s === 'running', 60_000, 50);
      // 4. Mid-run: the extractor's Kafka goes away; the page arrives; the run ends with no broker.
      extractorKafka.cut();
    } finally {
      process.kill(orchestratorPid, 'SIGCONT');
    }
    await eventually(runStatus, (s) => s === 'completed', 60_000, 100);
    // The end and its announcement committed together; the announcement cannot be published.
    expect(await announcement()).toEqual([{ published: false, status: 'completed' }]);
    await sleep(1_500);
    expect(await announcement()).toEqual([{ published: false, status: 'completed' }]);
    expect(await historyEnds()).toEqual([]);
    // The detail already reads the run (its readiness), but the history has not heard of its end.
    expect((await current())['status']).toBe('completed');

    // 5. The crash: the announcement is committed and unpublished.
    await fleet.kill('recipe-extractor', 'SIGKILL');
    extractorKafka.restore();
    await fleet.start('recipe-extractor');

    // 6. After the restart the relay publishes it; the orchestrator appends the end once.
    const ends = await eventually(historyEnds, (e) => e.length > 0, 60_000, 150);
    expect(ends.map((e) => e.type)).toEqual(['extraction.completed']);
    await eventually(announcement, (rows) => rows.length === 1 && rows[0]!.published, 30_000, 100);
    // A redelivered job (its offset was never committed) changes nothing: still one end, one announcement.
    await sleep(2_000);
    expect((await historyEnds()).map((e) => e.type)).toEqual(['extraction.completed']);
    expect(await announcement()).toHaveLength(1);
    const out = await gw().get(`/api/v1/data/requests/${id}/extraction`).set(data()).expect(200);
    expect(out.body).toMatchObject({ status: 'completed', data: { title: 'Trail Shoe X' } });
  }, 240_000);
});
