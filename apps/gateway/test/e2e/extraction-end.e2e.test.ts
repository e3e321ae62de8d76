// Own fleet (not the shared one of ./shared/): it SIGKILLs recipe-extractor, pauses the orchestrator, and cuts the extractor's Kafka.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import {
  adminCommand,
  eventually,
  KAFKA_BROKERS,
  startFixtureSite,
  startFleet,
  startKafkaProxy,
  withDatabase,
  type FixtureSite,
  type Fleet,
  type TcpProxy,
} from '@wdr/testkit';

/**
 * The end of an extraction run reaches the request's history exactly once, whatever happens to
 * recipe-extractor after the run's end committed (issue 23). The announcement
 * (`extraction.run_ended` on extraction.events) is an outbox row written in the transaction that
 * ends the run; here the extractor commits that end while it cannot reach Kafka, is SIGKILLed with
 * the announcement still unpublished, and is started again: its relay publishes the row, the
 * orchestrator appends `extraction.completed` once, and the detail reports the extraction ended.
 *
 * How the gap is made deterministic: recipe-extractor alone reaches Kafka through a relay this test
 * cuts. The orchestrator is paused (SIGSTOP) while the extractor reads the page from it, so the
 * run is provably mid-flight (status `running`) when the extractor's Kafka is cut; the orchestrator
 * then resumes and the run ends with the broker out of reach.
 */
let fleet: Fleet;
let site: FixtureSite;
let extractorKafka: TcpProxy;
let apiKey: string;
let recipeId: string;

const gw = () => request(fleet.url('gateway'));
const RULES = {
  dsl_version: 1,
  fields: [
    { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
    { name: 'price', type: 'number', required: true, selectors: ['.price'] },
  ],
};

type Db = Parameters<Parameters<typeof withDatabase>[1]>[0];
const extractorDb = <T>(fn: (c: Db) => Promise<T>) => withDatabase(fleet.databases['recipe-extractor'].url, fn);
const orchestratorDb = <T>(fn: (c: Db) => Promise<T>) => withDatabase(fleet.databases['fetch-orchestrator'].url, fn);

beforeAll(async () => {
  const [host, port] = KAFKA_BROKERS[0]!.split(':');
  extractorKafka = await startKafkaProxy({ host: host!, port: Number(port) });
  site = await startFixtureSite();
  fleet = await startFleet({ env: { 'recipe-extractor': { KAFKA_BROKERS: `127.0.0.1:${extractorKafka.port}` } } });
  const t = await adminCommand(fleet, ['create-tenant', '--name', 'extraction-end', '--credits', '1000']);
  apiKey = t['api_key'] as string;
  const token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t['tenant_id'] as string]))['cabinet_token'] as string;
  const r = await gw()
    .post('/api/v1/client/recipes')
    .set('Authorization', `Bearer ${token}`)
    .send({ name: 'Product', sample_url: `${site.url}/product`, definition: RULES, activate: true });
  expect(r.status).toBe(201);
  recipeId = r.body.id as string;
}, 180_000);

afterAll(async () => {
  const pid = fleet?.pid('fetch-orchestrator');
  if (pid) process.kill(pid, 'SIGCONT');
  extractorKafka?.restore();
  await fleet?.stop();
  await site?.close();
  await extractorKafka?.close();
}, 60_000);

describe('the extraction end announcement', () => {
  it('survives a SIGKILL of recipe-extractor between the commit of the run and its announcement: appended once after the restart', async () => {
    // 1. The extractor cannot take the job yet.
    extractorKafka.cut();
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set('X-API-Key', apiKey)
      .send({ url: `${site.url}/product`, mode: 'http', skip_cache: true, extraction: { recipe_id: recipeId } });
    expect(sub.status).toBe(202);
    const id = sub.body.id as string;
    const detail = async () =>
      (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', apiKey).expect(200)).body as Record<string, unknown>;
    // 2. The page completed and its extraction job is on Kafka (published from the orchestrator's outbox).
    await eventually(detail, (d) => d['page_status'] === 'completed', 60_000, 150);
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
      (
        (await gw().get(`/api/v1/data/requests/${id}/events`).set('X-API-Key', apiKey).expect(200)).body as { data: { type: string }[] }
      ).data.filter((e) => e.type.startsWith('extraction.'));

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
    expect((await detail())['status']).toBe('completed');

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
    const out = await gw().get(`/api/v1/data/requests/${id}/extraction`).set('X-API-Key', apiKey).expect(200);
    expect(out.body).toMatchObject({ status: 'completed', data: { title: 'Trail Shoe X' } });
  }, 240_000);
});
