// Own fleet (not the shared one of ./shared/): recipe-extractor points at this file's local LLM server with its own repair limits.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { Envelope } from '@wdr/contracts';
import { KafkaBus } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import {
  adminCommand,
  eventually,
  KAFKA_BROKERS,
  startChatCompletionsServer,
  startFixtureSite,
  startFleet,
  withDatabase,
  type ChatCompletionRequest,
  type ChatCompletionsServer,
  type FixtureSite,
  type Fleet,
} from '@wdr/testkit';

/**
 * LLM billing of recipe generation and automatic repair of drifting recipes, on the real fleet
 * (gateway, orchestrator, ledger, recipe-extractor, Kafka, Postgres) with a local chat-completions
 * server and a local shop whose product page changes under the recipe. The fleet allows one
 * automatic repair per 24 h and repairs after one drift failure.
 */
let fleet: Fleet;
let site: FixtureSite;
let llm: ChatCompletionsServer;
let shop: { url: string; close: () => Promise<void> };
/** What the shop's /p/<name> pages answer. */
const pages = new Map<string, string>();
/** What the local model answers next (one entry per completion, in order). */
const answers: string[] = [];
/** Every answer given, by request index (the usage the server reports is computed from it). */
const given: string[] = [];

const gw = () => request(fleet.url('gateway'));

interface Tenant {
  id: string;
  apiKey: string;
  token: string;
}

async function newTenant(name: string, credits: number): Promise<Tenant> {
  const created = await adminCommand(fleet, [
    'create-tenant',
    '--name',
    `${name}-${randomUUID().slice(0, 8)}`,
    '--credits',
    String(credits),
  ]);
  const c = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', created['tenant_id'] as string]);
  return { id: created['tenant_id'] as string, apiKey: created['api_key'] as string, token: c['cabinet_token'] as string };
}

const client = (t: Tenant) => ({ Authorization: `Bearer ${t.token}` });
const data = (t: Tenant) => ({ 'X-API-Key': t.apiKey });
const balanceOf = async (t: Tenant) => (await gw().get('/api/v1/data/balance').set(data(t)).expect(200)).body.balance_tokens as number;
const statementOf = async (t: Tenant) =>
  (await gw().get('/api/v1/data/statement?limit=100').set(data(t)).expect(200)).body.items as {
    type: string;
    kind: string;
    amount_tokens: number;
    balance_effect_tokens: number;
    memo: string | null;
  }[];

/**
 * The charge the ledger must post for completions `from..to` of the local server: its usage
 * (prompt: the messages' JSON length / 4; completion: the answer's length / 4, rounded up) at the
 * extractor's default prices (150 / 600 nano-USD per token), with the standard plan's 20 % markup,
 * in tokens of 100,000 nano-USD, rounded up.
 */
function chargeOf(from: number, to: number): number {
  let cost = 0;
  for (let i = from; i < to; i += 1) {
    const req = llm.requests[i] as ChatCompletionRequest;
    cost += Math.ceil(JSON.stringify(req.messages).length / 4) * 150 + Math.ceil(given[i]!.length / 4) * 600;
  }
  return Math.min(500, Math.ceil((cost * 12_000) / (10_000 * 100_000)));
}

/** A product page; `v` picks the markup (the JSON-LD stays, as shops usually keep it). */
function productPage(v: 1 | 2 | 3): string {
  const title = {
    1: '<h1 class="title">Trail Shoe X</h1>',
    2: '<h1 class="name">Trail Shoe X</h1>',
    3: '<h1 class="headline">Trail Shoe X</h1>',
  }[v];
  const price = { 1: '<p class="price">€129,90</p>', 2: '<div class="cost">€129,90</div>', 3: '<span class="amount">€129,90</span>' }[v];
  return `<!doctype html><html><head><title>Trail Shoe X</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail Shoe X","offers":{"@type":"Offer","price":"129.90","priceCurrency":"EUR"}}</script>
</head><body><main>${title}${price}</main></body></html>`;
}

async function startShop() {
  const server: Server = createServer((req, res) => {
    const page = pages.get(req.url ?? '');
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  site = await startFixtureSite();
  shop = await startShop();
  llm = await startChatCompletionsServer({
    respond: () => {
      const a = answers.shift() ?? '{}';
      given.push(a);
      return a;
    },
  });
  fleet = await startFleet({
    env: {
      'recipe-extractor': {
        LLM_BASE_URL: llm.baseUrl,
        LLM_API_KEY: llm.apiKey,
        LLM_MODEL: 'local-test-model',
        RECIPE_GENERATION_MAX_ATTEMPTS: '2',
        RECIPE_AUTO_REPAIRS_PER_WINDOW: '1',
        RECIPE_REPAIR_WINDOW_HOURS: '24',
        RECIPE_REPAIR_MIN_FAILURES: '1',
        RECIPE_REPAIR_RECENT_RUNS: '5',
      },
    },
  });
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
  await shop?.close();
  await llm?.close();
});

describe('billing of LLM generation', () => {
  it('charges exactly the model usage after completion and says so on the statement', async () => {
    const t = await newTenant('gen-billing', 1000);
    const recipe = (
      await gw()
        .post('/api/v1/client/recipes')
        .set(client(t))
        .send({ name: 'Billed', sample_url: `${site.url}/product` })
        .expect(201)
    ).body;
    answers.push(JSON.stringify({ dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1.title'] }] }));
    const before = await balanceOf(t);
    const from = llm.requests.length;
    const res = await gw().post(`/api/v1/client/recipes/${recipe.id}/generate`).set(client(t)).send({ prompt: 'the title', method: 'llm' });
    expect(res.status).toBe(201);
    const charge = chargeOf(from, llm.requests.length);
    expect(llm.requests.length).toBe(from + 1);
    expect(charge).toBeGreaterThan(0);
    expect(before - (await balanceOf(t))).toBe(charge);
    const lines = (await statementOf(t)).filter((l) => l.type.startsWith('recipe_generation'));
    expect(lines.map((l) => [l.type, l.kind])).toEqual([
      ['recipe_generation', 'post_pending'],
      ['recipe_generation_hold', 'pending'],
    ]);
    expect(lines[0]!.memo).toBe(
      `LLM recipe generation, recipe ${recipe.id}: 1 model call(s), ${Math.ceil(JSON.stringify(llm.requests[from]!.messages).length / 4)} prompt + ${Math.ceil(given[from]!.length / 4)} completion tokens`,
    );
    expect(lines[0]!.balance_effect_tokens + lines[1]!.balance_effect_tokens).toBe(-charge);
  }, 60_000);

  it('refuses with 402 INSUFFICIENT_CREDITS before any model call, and the heuristic stays free', async () => {
    const t = await newTenant('gen-poor', 30);
    const recipe = (
      await gw()
        .post('/api/v1/client/recipes')
        .set(client(t))
        .send({ name: 'Poor', sample_url: `${site.url}/product` })
        .expect(201)
    ).body;
    const from = llm.requests.length;
    const refused = await gw().post(`/api/v1/client/recipes/${recipe.id}/generate`).set(client(t)).send({ prompt: 'the title' });
    expect([refused.status, refused.body.code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
    expect(refused.body.message).toContain('preflight_required_balance_tokens');
    expect(llm.requests.length).toBe(from);
    const free = await gw()
      .post(`/api/v1/client/recipes/${recipe.id}/generate`)
      .set(client(t))
      .send({ prompt: 'the title', method: 'heuristic' });
    expect(free.status).toBe(201);
    expect(await balanceOf(t)).toBe(30);
    expect(await statementOf(t)).toHaveLength(1); // the grant only
  }, 60_000);

  it('releases the hold of a generation that found nothing (failed operations are not charged on the standard plan)', async () => {
    const t = await newTenant('gen-failed', 100);
    const recipe = (
      await gw()
        .post('/api/v1/client/recipes')
        .set(client(t))
        .send({ name: 'Nothing', sample_url: `${site.url}/product` })
        .expect(201)
    ).body;
    answers.push(
      'not json',
      JSON.stringify({ dsl_version: 1, fields: [{ name: 'sku', type: 'string', required: true, selectors: ['.sku'] }] }),
    );
    const res = await gw().post(`/api/v1/client/recipes/${recipe.id}/generate`).set(client(t)).send({ prompt: 'the sku', method: 'llm' });
    expect([res.status, res.body.code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(await balanceOf(t)).toBe(100);
    expect((await statementOf(t)).filter((l) => l.type === 'recipe_generation').map((l) => l.kind)).toEqual(['void_pending']);
  }, 60_000);
});

describe('auto-repair', () => {
  const detail = async (t: Tenant, id: string) => (await gw().get(`/api/v1/data/requests/${id}`).set(data(t)).expect(200)).body;
  async function extractOnce(t: Tenant, recipeId: string, path: string) {
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set(data(t))
      .send({ url: `${shop.url}${path}`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
    expect(sub.status).toBe(202);
    return eventually(
      () => detail(t, sub.body.id),
      (d) => d.status === 'completed' || d.status === 'failed',
      60_000,
    );
  }
  const recipeOf = async (t: Tenant, id: string) => (await gw().get(`/api/v1/client/recipes/${id}`).set(client(t)).expect(200)).body;
  /** A recipe with auto-repair on, active at once, reading title and price off a fresh product page of the shop. */
  async function driftingRecipe(
    t: Tenant,
    name: string,
  ): Promise<{ created: { body: { id: string; active_version_id: string } }; path: string }> {
    const path = `/p/${randomUUID()}`;
    pages.set(path, productPage(1));
    const created = await gw()
      .post('/api/v1/client/recipes')
      .set(client(t))
      .send({
        name,
        sample_url: `${shop.url}${path}`,
        auto_repair_enabled: true,
        activate: true,
        definition: {
          dsl_version: 1,
          fields: [
            { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
            { name: 'price', type: 'number', required: true, selectors: ['.price'] },
          ],
        },
      })
      .expect(201);
    return { created, path };
  }

  it('repairs a drifting active version once within the window, no more, and again only with continuous repair confirmed', async () => {
    const t = await newTenant('repair', 1000);
    const { created, path } = await driftingRecipe(t, 'Drifting');
    const v1 = created.body.active_version_id as string;
    expect(await extractOnce(t, created.body.id, path)).toMatchObject({ status: 'completed' });

    // The shop changes its markup: the run fails, and the failure requests a repair, verified on that page.
    pages.set(path, productPage(2));
    answers.push(
      JSON.stringify({
        dsl_version: 1,
        fields: [
          { name: 'title', type: 'string', selectors: ['h1.name'] },
          { name: 'price', type: 'number', selectors: ['div.cost'] },
        ],
      }),
    );
    const from = llm.requests.length;
    const balanceBefore = await balanceOf(t);
    const failed = await extractOnce(t, created.body.id, path);
    expect(failed).toMatchObject({ status: 'failed', page_status: 'completed', user_error: { code: 'REQUIRED_FIELDS_MISSING' } });
    const repaired = await eventually(
      () => recipeOf(t, created.body.id),
      (r) => r.repairs.length === 1 && r.repairs[0].status !== 'queued',
      60_000,
    );
    expect(repaired.repairs[0]).toMatchObject({
      status: 'succeeded',
      method: 'llm',
      from_version_id: v1,
      trigger_request_id: failed.id,
      continuous: false,
      error: null,
    });
    expect(repaired.repairs[0].reason).toBe('REQUIRED_FIELDS_MISSING in 1 of the last 2 runs (price, title)');
    const v2 = repaired.versions.find((v: { id: string }) => v.id === repaired.repairs[0].version_id);
    expect(v2).toMatchObject({
      version: 2,
      origin: 'repair',
      reason: 'repaired:llm',
      repaired_from_version_id: v1,
      repair_reason: repaired.repairs[0].reason,
    });
    expect(v2.fields.map((f: { name: string; type: string; required: boolean }) => [f.name, f.type, f.required])).toEqual([
      ['title', 'string', true],
      ['price', 'number', true],
    ]);
    expect(repaired.active_version_id).toBe(v2.id);
    expect(repaired.versions.find((v: { id: string }) => v.id === v1)).toMatchObject({
      origin: 'tenant',
      repair_reason: null,
      repaired_from_version_id: null,
    });
    // The model was asked once, with the failing rules and what failed; the repair was billed exactly.
    expect(llm.requests.length).toBe(from + 1);
    expect(llm.requests[from]!.messages.at(-1)!.content).toContain('title: required field not found on the page');
    const charge = chargeOf(from, from + 1);
    expect(repaired.repairs[0].charged_tokens).toBe(charge);
    const repairLines = (await statementOf(t)).filter((l) => l.type.startsWith('recipe_repair'));
    expect(repairLines.map((l) => [l.type, l.kind])).toEqual([
      ['recipe_repair', 'post_pending'],
      ['recipe_repair_hold', 'pending'],
    ]);
    expect(repairLines[0]!.memo).toContain(`LLM recipe repair, recipe ${created.body.id}: 1 model call(s)`);
    // The extraction itself is an ordinary HTTP request (1 token); the rest is the repair's charge.
    expect(balanceBefore - (await balanceOf(t))).toBe(1 + charge);

    // Kafka redelivers the repair request (the same message, and a copy under a new id): nothing changes.
    const extractorDb = fleet.databases['recipe-extractor'].url;
    const [requested] = await withDatabase(extractorDb, async (c) =>
      (
        await c.query<{ envelope: Envelope }>(
          `SELECT envelope FROM outbox_messages WHERE envelope->>'type' = 'extraction.repair_requested' AND envelope->'data'->>'recipe_id' = $1`,
          [created.body.id],
        )
      ).rows.map((r) => r.envelope),
    );
    expect(requested!.data).toMatchObject({ repair_id: repaired.repairs[0].id, request_id: failed.id });
    const bus = new KafkaBus({
      clientId: 'repair-redelivery',
      brokers: KAFKA_BROKERS,
      prefix: fleet.topicPrefix,
      log: createLogger('test', 'silent'),
    });
    await bus.connect();
    const copy = { ...requested!, id: randomUUID() };
    try {
      await bus.send(
        bus.topic('extractionJobs'),
        [requested!, copy].map((envelope) => ({ key: failed.id as string, envelope })),
      );
    } finally {
      await bus.disconnect();
    }
    await eventually(
      () =>
        withDatabase(
          extractorDb,
          async (c) =>
            (await c.query(`SELECT count(*)::int AS n FROM processed_messages WHERE event_id = $1`, [copy.id])).rows[0].n as number,
        ),
      (n) => n === 1,
      30_000,
    );
    const afterRedelivery = await recipeOf(t, created.body.id);
    expect([
      afterRedelivery.versions.length,
      afterRedelivery.repairs.length,
      afterRedelivery.active_version_id,
      llm.requests.length,
    ]).toEqual([2, 1, v2.id, from + 1]);
    expect((await statementOf(t)).filter((l) => l.type.startsWith('recipe_repair'))).toHaveLength(2);

    // The repaired version extracts the changed page.
    const ok = await extractOnce(t, created.body.id, path);
    expect(ok).toMatchObject({ status: 'completed', extraction: { version_id: v2.id } });
    expect((await gw().get(`/api/v1/data/requests/${ok.id}/extraction`).set(data(t)).expect(200)).body.data).toEqual({
      title: 'Trail Shoe X',
      price: 129.9,
    });

    // It drifts again within the window: the run fails and no second repair is made (decided with the run's end).
    pages.set(path, productPage(3));
    const modelCalls = llm.requests.length;
    expect(await extractOnce(t, created.body.id, path)).toMatchObject({
      status: 'failed',
      user_error: { code: 'REQUIRED_FIELDS_MISSING' },
    });
    expect(await extractOnce(t, created.body.id, path)).toMatchObject({ status: 'failed' });
    const held = await recipeOf(t, created.body.id);
    expect(held.repairs).toHaveLength(1);
    expect(held.versions).toHaveLength(2);
    expect(held.active_version_id).toBe(v2.id);
    expect(llm.requests.length).toBe(modelCalls);

    // Continuous repair confirmed: the next failure repairs beyond the window (the model answers
    // nothing usable, the heuristic's last attempt finds the new title and the JSON-LD price).
    const confirmed = await gw()
      .patch(`/api/v1/client/recipes/${created.body.id}`)
      .set(client(t))
      .send({ continuous_repair_confirmed: true })
      .expect(200);
    expect(typeof confirmed.body.continuous_repair_confirmed_at).toBe('string');
    answers.push('not json');
    const again = await extractOnce(t, created.body.id, path);
    expect(again).toMatchObject({ status: 'failed' });
    const second = await eventually(
      () => recipeOf(t, created.body.id),
      (r) => r.repairs.length === 2 && r.repairs[0].status !== 'queued',
      60_000,
    );
    expect(second.repairs[0]).toMatchObject({
      status: 'succeeded',
      method: 'heuristic',
      continuous: true,
      from_version_id: v2.id,
      trigger_request_id: again.id,
    });
    const v3 = second.versions.find((v: { id: string }) => v.id === second.repairs[0].version_id);
    expect(v3).toMatchObject({ version: 3, origin: 'repair', reason: 'repaired:heuristic', repaired_from_version_id: v2.id });
    expect(second.active_version_id).toBe(v3.id);
    const ok3 = await extractOnce(t, created.body.id, path);
    expect((await gw().get(`/api/v1/data/requests/${ok3.id}/extraction`).set(data(t)).expect(200)).body.data).toEqual({
      title: 'Trail Shoe X',
      price: 129.9,
    });
  }, 300_000);

  it('repairs with the heuristic alone, free, when the balance cannot pass the LLM preflight', async () => {
    const t = await newTenant('repair-poor', 45);
    const { created, path } = await driftingRecipe(t, 'Poor drift');
    pages.set(path, productPage(2));
    const from = llm.requests.length;
    expect(await extractOnce(t, created.body.id, path)).toMatchObject({ status: 'failed' });
    const r = await eventually(
      () => recipeOf(t, created.body.id),
      (x) => x.repairs.length === 1 && x.repairs[0].status !== 'queued',
      60_000,
    );
    expect(r.repairs[0]).toMatchObject({ status: 'succeeded', method: 'heuristic', charged_tokens: 0, error: null });
    expect(r.versions[0]).toMatchObject({ origin: 'repair', reason: 'repaired:heuristic' });
    expect(llm.requests.length).toBe(from);
    expect((await statementOf(t)).filter((l) => l.type.startsWith('recipe_'))).toEqual([]);
    const ok = await extractOnce(t, created.body.id, path);
    expect((await gw().get(`/api/v1/data/requests/${ok.id}/extraction`).set(data(t)).expect(200)).body.data).toEqual({
      title: 'Trail Shoe X',
      price: 129.9,
    });
  }, 120_000);

  it('leaves a recipe without auto_repair_enabled alone', async () => {
    const t = await newTenant('no-repair', 100);
    const path = `/p/${randomUUID()}`;
    pages.set(path, productPage(2));
    const created = await gw()
      .post('/api/v1/client/recipes')
      .set(client(t))
      .send({
        name: 'Manual',
        sample_url: `${shop.url}${path}`,
        activate: true,
        definition: { dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1.title'] }] },
      })
      .expect(201);
    const from = llm.requests.length;
    expect(await extractOnce(t, created.body.id, path)).toMatchObject({ status: 'failed' });
    const r = await recipeOf(t, created.body.id);
    expect([r.repairs.length, r.versions.length, llm.requests.length]).toEqual([0, 1, from]);
  }, 120_000);

  it('reports auto-repair in the capabilities with the configured window', async () => {
    const t = await newTenant('caps', 10);
    const caps = (await gw().get('/api/v1/client/recipes/capabilities').set(client(t)).expect(200)).body;
    expect(caps.auto_repair).toEqual({
      enabled: true,
      automatic_repairs_per_window: 1,
      window_hours: 24,
      continuous_repair_requires_confirmation: true,
    });
  });
});
