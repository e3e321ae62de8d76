// Own fleet (not the shared one of ./shared/): recipe-extractor points at this file's local LLM server with its own attempt limit.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  adminCommand,
  startChatCompletionsServer,
  startFixtureSite,
  startFleet,
  type ChatCompletionsServer,
  type FixtureSite,
  type Fleet,
} from '@wdr/testkit';

/**
 * Recipe generation through the cabinet API on the real fleet: the offline heuristic, and the LLM
 * path against a local server speaking the chat-completions protocol (recipe-extractor's
 * LLM_BASE_URL / LLM_API_KEY), each validated on the fixture product page before a draft version
 * is saved.
 */
let fleet: Fleet;
let site: FixtureSite;
let llm: ChatCompletionsServer;
let token: string;
/** generation_max_attempts of this fleet (the default is 3). */
const MAX_ATTEMPTS = 4;
/** What the local model answers next (one entry per completion, in order). */
const answers: string[] = [];

const gw = () => request(fleet.url('gateway'));
const auth = () => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  site = await startFixtureSite();
  llm = await startChatCompletionsServer({ respond: () => answers.shift() ?? '{}' });
  fleet = await startFleet({
    env: {
      'recipe-extractor': {
        LLM_BASE_URL: llm.baseUrl,
        LLM_API_KEY: llm.apiKey,
        LLM_MODEL: 'local-test-model',
        RECIPE_GENERATION_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      },
    },
  });
  const created = await adminCommand(fleet, ['create-tenant', '--name', 'generation', '--credits', '100']);
  token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', created['tenant_id'] as string]))['cabinet_token'] as string;
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
  await llm?.close();
});

async function newRecipe(): Promise<string> {
  const r = await gw()
    .post('/api/v1/client/recipes')
    .set(auth())
    .send({ name: `Gen ${randomUUID()}`, sample_url: `${site.url}/product` });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

describe('recipe generation', () => {
  it('generates a working draft with the offline heuristic', async () => {
    const id = await newRecipe();
    const before = llm.requests.length;
    const res = await gw()
      .post(`/api/v1/client/recipes/${id}/generate`)
      .set(auth())
      .send({ prompt: 'product name, price and brand', method: 'heuristic' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ method: 'heuristic', attempts: [{ attempt: 1, method: 'heuristic', outcome: 'accepted' }] });
    expect(res.body.version).toMatchObject({ version: 1, reason: 'generated:heuristic', dsl_version: 1 });
    expect(res.body.sample.data).toMatchObject({ name: 'Trail Shoe X', brand_name: 'Peak', price: 129.9, title: 'Trail Shoe X' });
    expect(llm.requests.length).toBe(before);
    // Saved as a draft: the recipe stays draft, its fields are the generated version's.
    const recipe = (await gw().get(`/api/v1/client/recipes/${id}`).set(auth()).expect(200)).body;
    expect(recipe).toMatchObject({ status: 'draft', active_version_id: null });
    expect(recipe.fields).toContainEqual({ name: 'price', type: 'number', required: true, multiple: false, description: '' });
  });

  it('generates with the LLM, feeding a rejected attempt back, and the result extracts', async () => {
    const id = await newRecipe();
    answers.push(
      JSON.stringify({ dsl_version: 1, fields: [{ name: 'sku', type: 'string', required: true, selectors: ['.sku'] }] }),
      JSON.stringify({
        dsl_version: 1,
        fields: [
          { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
          { name: 'price', type: 'number', required: true, selectors: ['.price'] },
          {
            name: 'reviews',
            type: 'object',
            multiple: true,
            scope: 'section.review',
            fields: [{ name: 'author', type: 'string', selectors: ['.author'] }],
          },
        ],
      }),
    );
    const before = llm.requests.length;
    const key = `gen-${randomUUID()}`;
    const res = await gw()
      .post(`/api/v1/client/recipes/${id}/generate`)
      .set(auth())
      .set('Idempotency-Key', key)
      .send({ prompt: 'title, price and review authors', activate: true });
    expect(res.status).toBe(201);
    expect(res.body.method).toBe('llm');
    expect(res.body.attempts).toEqual([
      {
        attempt: 1,
        method: 'llm',
        outcome: 'rejected',
        issues: expect.arrayContaining([{ field: 'sku', issue: 'required field not found on the page' }]),
      },
      { attempt: 2, method: 'llm', outcome: 'accepted', issues: [] },
    ]);
    expect(res.body.sample.data).toEqual({ title: 'Trail Shoe X', price: 129.9, reviews: [{ author: 'Ann' }, { author: 'Bob' }] });
    expect(res.body.version.reason).toBe('generated:llm');
    expect(llm.requests.length).toBe(before + 2);
    expect(llm.requests[before]!.model).toBe('local-test-model');
    expect(llm.requests[before + 1]!.messages.at(-1)!.content).toContain('sku: required field not found on the page');
    // A replay answers the stored generation without asking the model again.
    const again = await gw()
      .post(`/api/v1/client/recipes/${id}/generate`)
      .set(auth())
      .set('Idempotency-Key', key)
      .send({ prompt: 'title, price and review authors', activate: true });
    expect(again.body.version.id).toBe(res.body.version.id);
    expect(llm.requests.length).toBe(before + 2);
    // Activated: a submission runs it.
    expect((await gw().get(`/api/v1/client/recipes/${id}`).set(auth())).body.active_version_id).toBe(res.body.version.id);
  });

  it('falls back to the heuristic on the last attempt in auto, and fails clearly when nothing works', async () => {
    const id = await newRecipe();
    answers.push('not json', '{"dsl_version":1,"fields":[]}', 'not json either');
    const res = await gw().post(`/api/v1/client/recipes/${id}/generate`).set(auth()).send({ prompt: 'price' });
    expect(res.status).toBe(201);
    // MAX_ATTEMPTS in all: the model MAX_ATTEMPTS - 1 times, then the heuristic.
    expect(res.body.attempts.map((a: { method: string; outcome: string }) => `${a.method}:${a.outcome}`)).toEqual([
      'llm:error',
      'llm:rejected',
      'llm:error',
      'heuristic:accepted',
    ]);

    const bad = await gw()
      .post(`/api/v1/client/recipes/${id}/generate`)
      .set(auth())
      .send({ prompt: 'x', sample_url: `${site.url}/status/404`, method: 'heuristic' });
    expect([bad.status, bad.body.code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(bad.body.details).toEqual([{ field: 'sample_url', issue: 'answered HTTP 404' }]);
    const long = await gw()
      .post(`/api/v1/client/recipes/${id}/generate`)
      .set(auth())
      .send({ prompt: 'x'.repeat(4001) });
    expect(long.body.details).toEqual([{ field: 'prompt', issue: 'is 4001 characters; max_prompt_length is 4000' }]);
    // Nothing was saved by the failed calls.
    expect((await gw().get(`/api/v1/client/recipes/${id}`).set(auth())).body.versions).toHaveLength(1);
  });

  it('stops after generation_max_attempts as configured, and the capabilities report that number', async () => {
    const caps = await gw().get('/api/v1/client/recipes/capabilities').set(auth()).expect(200);
    expect(caps.body.generation_max_attempts).toBe(MAX_ATTEMPTS);
    const id = await newRecipe();
    // More rejected answers queued than the limit allows: only MAX_ATTEMPTS are asked for.
    answers.length = 0;
    answers.push(
      ...Array.from({ length: MAX_ATTEMPTS + 2 }, (_, i) =>
        JSON.stringify({
          dsl_version: 1,
          fields: [{ name: `missing_${i}`, type: 'string', required: true, selectors: [`.missing-${i}`] }],
        }),
      ),
    );
    const before = llm.requests.length;
    const res = await gw().post(`/api/v1/client/recipes/${id}/generate`).set(auth()).send({ prompt: 'the sku', method: 'llm' });
    expect([res.status, res.body.code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(res.body.message).toBe(`No generated recipe worked on the sample page in ${MAX_ATTEMPTS} attempt(s); nothing was saved.`);
    for (let i = 1; i <= MAX_ATTEMPTS; i++)
      expect(res.body.details).toContainEqual({ field: `attempts.${i}.missing_${i - 1}`, issue: 'required field not found on the page' });
    expect(res.body.details.filter((d: { field: string }) => !(Number(d.field.split('.')[1]) <= MAX_ATTEMPTS))).toEqual([]);
    expect(llm.requests.length).toBe(before + MAX_ATTEMPTS);
    expect(answers).toHaveLength(2);
    answers.length = 0;
    expect((await gw().get(`/api/v1/client/recipes/${id}`).set(auth())).body.versions).toHaveLength(0);
  });
});
