import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { Envelope } from '@wdr/contracts';
import { makeEnvelope } from '@wdr/kit/kafka';
import {
  createTestDatabase,
  eventually,
  identityEnvOf,
  internalAgent,
  uniqueTopicPrefix,
  withDatabase,
  type TestDatabase,
} from '@wdr/testkit';
import { createExtractorDeps, createExtractorService, type ExtractorDeps } from '../src/app.js';
import { loadExtractorEnv } from '../src/env.js';

/**
 * extraction.job_requested through the real broker into recipe-extractor (in-process, real
 * Postgres), with the orchestrator played by a local HTTP server answering its two internal reads
 * (the request, and its stored page by claim-check); the runs' ends are read from the extractor's outbox:
 *   - Kafka delivers at least once: the same job twice, and a copy under a new envelope id, make one
 *     run that ends once with one output;
 *   - a job that arrives before the gateway's createRun (the page was done first, or that call was
 *     lost) creates the run as admission would have: with the page origin, and for a retry the run
 *     it retries.
 */
let database: TestDatabase;
let deps: ExtractorDeps;
let service: ReturnType<typeof createExtractorService>;
let orchestrator: Server;
const ORIGIN = 'http://shop.example';

/** What the fake orchestrator knows: requests by id (tenant, retried_from_id) and their pages. */
const requests = new Map<string, { tenantId: string; retriedFromId?: string; html: string }>();
const resultReads = new Map<string, number>();
const PAGE = `<!doctype html><html><body><h1 class="title">Trail Shoe X</h1><p class="price">€129,90</p>
<img class="main" src="/img/1.png" alt=""></body></html>`;
const DEFINITION = {
  dsl_version: 1,
  fields: [
    { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
    { name: 'price', type: 'number', required: true, selectors: ['.price'] },
    // Relative in the page: absolute only when the run knows the page's origin.
    { name: 'image', type: 'url', required: true, selectors: ['img.main'], source: { type: 'attribute', name: 'src' } },
  ],
};

function startOrchestrator(): Promise<Server> {
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://orchestrator');
    const m = /^\/internal\/v1\/requests\/([0-9a-f-]{36})(\/result)?$/.exec(u.pathname);
    const r = m ? requests.get(m[1]!) : undefined;
    if (!m || !r || r.tenantId !== u.searchParams.get('tenant_id')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'NOT_FOUND', message: 'No such request.' }));
      return;
    }
    const id = m[1]!;
    if (m[2]) {
      resultReads.set(id, (resultReads.get(id) ?? 0) + 1);
      // A bytes answer (orchestratorApi.requestResult): the page itself with its type and length.
      const page = Buffer.from(r.html);
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(page.length) }).end(page);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id,
        url: ORIGIN,
        status: 'completed',
        request: { url: ORIGIN },
        ...(r.retriedFromId ? { retried_from_id: r.retriedFromId } : {}),
      }),
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  database = await createTestDatabase('recipe-extractor');
  orchestrator = await startOrchestrator();
  const env = loadExtractorEnv({
    ...identityEnvOf('recipe-extractor'),
    DATABASE_URL: database.url,
    KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
    LOG_LEVEL: 'silent',
    OUTBOX_POLL_MS: '50',
    ORCHESTRATOR_URL: `http://127.0.0.1:${(orchestrator.address() as AddressInfo).port}`,
  });
  deps = createExtractorDeps(env);
  service = createExtractorService(deps);
  await service.start();
  await service.kafkaConnected();
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await new Promise((r) => orchestrator?.close(r));
  await database?.drop();
});

/** The internal API as the gateway calls it (testkit internalAgent). */
const api = () => internalAgent(request(service.app), 'recipe-extractor');
const idempotency = () => ({ key_id: randomUUID(), input_hash: 'a'.repeat(64) });

async function activeRecipe(tenantId: string): Promise<{ recipeId: string; versionId: string }> {
  const res = await api()
    .post('/internal/v1/recipes')
    .send({
      tenant_id: tenantId,
      idempotency: idempotency(),
      recipe: { name: 'Shoes', sample_url: `${ORIGIN}/p`, definition: DEFINITION, activate: true },
    })
    .expect(201);
  return { recipeId: res.body.id as string, versionId: res.body.active_version_id as string };
}

const createRun = (body: Record<string, unknown>) => api().post('/internal/v1/extraction-runs').send(body);

const jobOf = (tenantId: string, requestId: string, recipeId: string, opts: { id?: string } = {}) =>
  makeEnvelope(
    'extractionJobs',
    'extraction.job_requested',
    tenantId,
    { request_id: requestId, recipe_id: recipeId, page_status: 'completed' },
    opts,
  );

/** A counter of recipe-extractor's /metrics, summed over the series whose labels include `labels`. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = (await request(service.metricsApp).get('/metrics').expect(200)).text;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.split(' ').at(-1));
  }
  return sum;
}
const handled = () => metric('wdr_kafka_messages_total', { topic: 'extraction.jobs', outcome: 'processed' });
const endedCount = (outcome: string) => metric('recipe_extractor_extraction_runs_total', { outcome });

/** Send jobs and wait until the consumer handled every message (a skipped redelivery included) and recorded every envelope id. */
async function sendAndWait(envelopes: Envelope[]): Promise<void> {
  const before = await handled();
  await deps.bus.send(
    deps.bus.topic('extractionJobs'),
    envelopes.map((envelope) => ({ key: (envelope.data as { request_id: string }).request_id, envelope })),
  );
  await eventually(handled, (n) => n >= before + envelopes.length, 30_000, 25);
  const ids = [...new Set(envelopes.map((e) => e.id))];
  const recorded = await withDatabase(
    database.url,
    async (c) =>
      (await c.query(`SELECT count(*)::int AS n FROM processed_messages WHERE event_id = ANY($1::uuid[])`, [ids])).rows[0].n as number,
  );
  expect(recorded).toBe(ids.length);
}

interface RunRow {
  id: string;
  status: string;
  output: Record<string, unknown> | null;
  page_origin: string | null;
  retried_from_run_id: string | null;
  finished_at: Date | null;
}
const runsOf = (requestId: string) =>
  withDatabase(
    database.url,
    async (c) =>
      (
        await c.query<RunRow>(
          'SELECT id, status, output, page_origin, retried_from_run_id, finished_at FROM extraction_runs WHERE request_id = $1',
          [requestId],
        )
      ).rows,
  );

/** The outbox rows announcing the end of the request's run (`extraction.run_ended`). */
const announcementsOf = (requestId: string) =>
  withDatabase(database.url, async (c) =>
    (
      await c.query<{ topic: string; envelope: Envelope; published_at: Date | null }>(
        `SELECT topic, envelope, published_at FROM outbox_messages WHERE message_key = $1 AND envelope->>'type' = 'extraction.run_ended' ORDER BY id`,
        [requestId],
      )
    ).rows.map((r) => ({
      topic: r.topic,
      type: r.envelope.type,
      tenant_id: r.envelope.tenant_id,
      data: r.envelope.data,
      published: r.published_at !== null,
    })),
  );

describe('extraction.job_requested delivered more than once', () => {
  it('the same job twice and a copy under a new envelope id, at once: one run, ended once, one output', async () => {
    const tenantId = randomUUID();
    const { recipeId } = await activeRecipe(tenantId);
    const requestId = randomUUID();
    requests.set(requestId, { tenantId, html: PAGE });
    const reserved = await createRun({ tenant_id: tenantId, request_id: requestId, recipe_id: recipeId, page_origin: ORIGIN }).expect(201);
    expect(reserved.body.status).toBe('waiting_for_page');
    const completedBefore = await endedCount('completed');

    const job = jobOf(tenantId, requestId, recipeId);
    const copy = jobOf(tenantId, requestId, recipeId);
    // One send, one key: the three land in one partition, usually in one fetched batch that the
    // consumer handles in flight together (several messages of a partition at once).
    await sendAndWait([job, job, copy]);

    const runs = await runsOf(requestId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      id: reserved.body.run_id,
      status: 'completed',
      output: { title: 'Trail Shoe X', price: 129.9, image: `${ORIGIN}/img/1.png` },
    });
    // Ended by exactly one delivery: the others found it ended (counted once).
    expect(await endedCount('completed')).toBe(completedBefore + 1);
    const read = (await api().get(`/internal/v1/extraction-runs/${requestId}`).query({ tenant_id: tenantId }).expect(200)).body;
    expect(read).toMatchObject({ run_id: reserved.body.run_id, status: 'completed', page_status: 'completed', data: runs[0]!.output });
    // The end is announced by one outbox row, written with it, published by the relay.
    const rows = await announcementsOf(requestId);
    expect(rows).toEqual([
      expect.objectContaining({
        topic: 'extractionEvents',
        type: 'extraction.run_ended',
        tenant_id: tenantId,
        data: { request_id: requestId, status: 'completed', error: null },
      }),
    ]);
    await eventually(
      () => announcementsOf(requestId),
      (r) => r.every((x) => x.published),
      10_000,
      50,
    );
  }, 60_000);

  it('a redelivery after the run ended (same envelope, or a copy under a new id) neither reads the page again nor touches the run', async () => {
    const tenantId = randomUUID();
    const { recipeId } = await activeRecipe(tenantId);
    const requestId = randomUUID();
    requests.set(requestId, { tenantId, html: PAGE });
    await createRun({ tenant_id: tenantId, request_id: requestId, recipe_id: recipeId, page_origin: ORIGIN }).expect(201);
    const job = jobOf(tenantId, requestId, recipeId);
    await sendAndWait([job]);
    const [ended] = await runsOf(requestId);
    expect(ended).toMatchObject({ status: 'completed' });
    expect(resultReads.get(requestId)).toBe(1);
    const completed = await endedCount('completed');

    // The page changes meanwhile: a second extraction would show in the output.
    requests.set(requestId, { tenantId, html: PAGE.replace('Trail Shoe X', 'Changed') });
    const copy = jobOf(tenantId, requestId, recipeId);
    await sendAndWait([job, copy]);

    expect(await runsOf(requestId)).toEqual([ended]);
    expect(resultReads.get(requestId)).toBe(1);
    expect(await endedCount('completed')).toBe(completed);
    // Announced once, by the delivery that ended it.
    expect(await announcementsOf(requestId)).toHaveLength(1);
  }, 60_000);
});

describe('a job that arrives before the run was created', () => {
  it('creates the run from the request: its page origin, and the run of the request it retries', async () => {
    const tenantId = randomUUID();
    const { recipeId, versionId } = await activeRecipe(tenantId);
    // The source request and its run (created at its admission).
    const sourceId = randomUUID();
    requests.set(sourceId, { tenantId, html: PAGE });
    const source = (await createRun({ tenant_id: tenantId, request_id: sourceId, recipe_id: recipeId, page_origin: ORIGIN }).expect(201))
      .body;

    // Its retry: the job is consumed before the gateway's createRun for it.
    const retryId = randomUUID();
    requests.set(retryId, { tenantId, retriedFromId: sourceId, html: PAGE });
    await sendAndWait([jobOf(tenantId, retryId, recipeId)]);
    const [run] = await runsOf(retryId);
    expect(run).toMatchObject({
      status: 'completed',
      page_origin: ORIGIN,
      retried_from_run_id: source.run_id,
      output: { title: 'Trail Shoe X', price: 129.9, image: `${ORIGIN}/img/1.png` },
    });

    // The gateway's createRun lands late: it answers that run, with the retry's link.
    const late = await createRun({
      tenant_id: tenantId,
      request_id: retryId,
      recipe_id: recipeId,
      page_origin: ORIGIN,
      retried_from_run_id: source.run_id,
    }).expect(201);
    expect(late.body).toMatchObject({ run_id: run!.id, version_id: versionId, status: 'completed', retried_from_run_id: source.run_id });
  }, 60_000);

  it('the job and the gateway creating the run at the same moment: one run, and every caller answered it', async () => {
    const tenantId = randomUUID();
    const { recipeId } = await activeRecipe(tenantId);
    const requestId = randomUUID();
    requests.set(requestId, { tenantId, html: PAGE });
    const body = { tenant_id: tenantId, request_id: requestId, recipe_id: recipeId, page_origin: ORIGIN };
    // A replayed submission's calls beside the job: each would otherwise find no run and insert one.
    const [answers] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => createRun(body))),
      sendAndWait([jobOf(tenantId, requestId, recipeId)]),
    ]);
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 8 }, () => 201));
    const runs = await runsOf(requestId);
    expect(runs).toHaveLength(1);
    expect(new Set(answers.map((a) => (a.body as { run_id: string }).run_id))).toEqual(new Set([runs[0]!.id]));
  }, 60_000);

  it('a plain request gets its origin and no retry link; a retried request of another tenant is never linked', async () => {
    const tenantId = randomUUID();
    const { recipeId } = await activeRecipe(tenantId);
    const plainId = randomUUID();
    requests.set(plainId, { tenantId, html: PAGE });

    const other = randomUUID();
    const theirs = await activeRecipe(other);
    const foreignSource = randomUUID();
    requests.set(foreignSource, { tenantId: other, html: PAGE });
    await createRun({ tenant_id: other, request_id: foreignSource, recipe_id: theirs.recipeId, page_origin: ORIGIN }).expect(201);
    const claimsForeign = randomUUID();
    requests.set(claimsForeign, { tenantId, retriedFromId: foreignSource, html: PAGE });

    await sendAndWait([jobOf(tenantId, plainId, recipeId), jobOf(tenantId, claimsForeign, recipeId)]);
    expect((await runsOf(plainId))[0]).toMatchObject({
      status: 'completed',
      page_origin: ORIGIN,
      retried_from_run_id: null,
      output: { image: `${ORIGIN}/img/1.png` },
    });
    expect((await runsOf(claimsForeign))[0]).toMatchObject({ status: 'completed', retried_from_run_id: null });
  }, 60_000);

  it('a request the orchestrator no longer has still gets a run, failed because its page is gone', async () => {
    const tenantId = randomUUID();
    const { recipeId } = await activeRecipe(tenantId);
    const gone = randomUUID();
    await sendAndWait([jobOf(tenantId, gone, recipeId)]);
    const [run] = await runsOf(gone);
    expect(run).toMatchObject({ status: 'failed', page_origin: null, retried_from_run_id: null, output: null });
    const read = (await api().get(`/internal/v1/extraction-runs/${gone}`).query({ tenant_id: tenantId }).expect(200)).body;
    expect(read.error).toMatchObject({ code: 'PAGE_UNAVAILABLE' });
  }, 60_000);
});
