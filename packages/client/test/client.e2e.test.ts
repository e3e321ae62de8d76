import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminCommand, eventually, startFixtureSite, startFleet, type FixtureSite, type Fleet } from '@wdr/testkit';
import { createWdrClient, followEvents, WdrApiError, type RequestEvent, type WdrClient } from '../src/index.js';

/**
 * The typed client against a real local fleet (six service processes, Postgres, Kafka) and a
 * local target site: submit, follow the events over SSE, read the detail and the page, the error
 * body of a refusal; and the example script run as a tenant would run it.
 */
let fleet: Fleet;
let site: FixtureSite;
let apiKey: string;
let api: WdrClient;

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet();
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'client-sdk', '--credits', '100']);
  apiKey = tenant['api_key'] as string;
  api = createWdrClient({ baseUrl: fleet.url('gateway'), apiKey });
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
}, 60_000);

describe('@wdr/client', () => {
  it('submits a request, follows its events to the end, and reads its detail and page', async () => {
    const { data: created, error, response } = await api.POST('/api/v1/data/requests', { body: { url: `${site.url}/page`, mode: 'http' } });
    expect(error).toBeUndefined();
    expect(response.status).toBe(202);
    expect(created).toMatchObject({ status: 'pending', route_mode: 'http', base_tokens: 1, idempotent_replay: false });

    const events: RequestEvent[] = [];
    for await (const e of followEvents({ baseUrl: fleet.url('gateway'), apiKey, id: created!.id })) events.push(e);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ type: 'request.accepted', status: 'pending' });
    expect(events.at(-1)).toMatchObject({ status: 'completed' });

    const detail = await eventually(
      async () => (await api.GET('/api/v1/data/requests/{id}', { params: { path: { id: created!.id } } })).data,
      (d) => d?.token_state === 'settled',
      20_000,
    );
    // The stream closed on the terminal event; the settlement's `tokens.settled` may come after it. Resuming
    // after the last stored event of a settled request ends at once (the stream answers 204).
    const history = (await api.GET('/api/v1/data/requests/{id}/events', { params: { path: { id: created!.id } } })).data!.data;
    expect(history.map((e) => e.type)).toEqual([...events.map((e) => e.type), 'tokens.settled']);
    const after: RequestEvent[] = [];
    for await (const e of followEvents({ baseUrl: fleet.url('gateway'), apiKey, id: created!.id, lastEventId: history.at(-1)!.id }))
      after.push(e);
    expect(after).toEqual([]);
    expect(detail).toMatchObject({ id: created!.id, status: 'completed', result_meta: { status_code: 200 } });
    const page = await api.GET('/api/v1/data/requests/{id}/result', {
      params: { path: { id: created!.id }, query: { format: 'text' } },
      parseAs: 'text',
    });
    expect(page.response.status).toBe(200);
    expect(page.data).toEqual(expect.any(String));
    expect((page.data as string).length).toBeGreaterThan(0);

    const list = await api.GET('/api/v1/data/requests', { params: { query: { limit: 10 } } });
    expect(list.data?.data.map((r) => r.id)).toContain(created!.id);
  }, 60_000);

  it('gives a refusal as the typed error body with its code and request id', async () => {
    const refused = await api.POST('/api/v1/data/requests', {
      body: { url: `${site.url}/page`, mode: 'http', timeout_ms: 1 },
      headers: { 'X-Request-Id': 'client-sdk-test-1' },
    });
    expect(refused.response.status).toBe(422);
    expect(refused.data).toBeUndefined();
    expect(refused.error).toMatchObject({ code: 'VALIDATION_FAILED', request_id: 'client-sdk-test-1', details: [{ field: 'timeout_ms' }] });

    const anonymous = createWdrClient({ baseUrl: fleet.url('gateway') });
    const unauth = await anonymous.GET('/api/v1/data/balance');
    expect(unauth.response.status).toBe(401);
    expect(unauth.error?.code).toBe('UNAUTHENTICATED');

    const missing = followEvents({ baseUrl: fleet.url('gateway'), apiKey, id: '00000000-0000-4000-8000-000000000000' });
    const err = await missing.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WdrApiError);
    expect(err).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
  }, 30_000);

  it('runs examples/submit-and-follow.ts against the fleet', async () => {
    const script = fileURLToPath(new URL('../examples/submit-and-follow.ts', import.meta.url));
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const proc = spawn(process.execPath, [script, `${site.url}/page`, 'http'], {
        env: { ...process.env, WDR_API_URL: fleet.url('gateway'), WDR_API_KEY: apiKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let errOut = '';
      proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
      proc.stderr.on('data', (b: Buffer) => (errOut += b.toString()));
      proc.on('exit', (c) => resolve({ code: c, stdout: out, stderr: errOut }));
    });
    expect({ code, stderr: stderr.replace(/.*ExperimentalWarning.*\n?/g, '').replace(/.*--trace-warnings.*\n?/g, '') }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(stdout).toMatch(/^submitted [0-9a-f-]{36}: pending, http, 1 tokens reserved$/m);
    expect(stdout).toMatch(/^event 1 request\.accepted -> pending$/m);
    expect(stdout).toMatch(/-> completed$/m);
    expect(stdout).toMatch(/^detail: \{"status":"completed"/m);
    expect(stdout).toMatch(/^text: \S/m);

    // Without a key it says how to run it, and exits 2.
    const usage = await new Promise<number | null>((resolve) => {
      const proc = spawn(process.execPath, [script], { env: { ...process.env, WDR_API_KEY: '' }, stdio: 'ignore' });
      proc.on('exit', resolve);
    });
    expect(usage).toBe(2);
  }, 60_000);
});
