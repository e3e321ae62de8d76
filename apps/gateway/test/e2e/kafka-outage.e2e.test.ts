// Own fleet (not the shared one of ./shared/): it reaches Kafka through a proxy it cuts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import {
  KAFKA_BROKERS,
  SERVICE_NAMES,
  adminCommand,
  eventually,
  startFixtureSite,
  startFleet,
  startKafkaProxy,
  queryRows,
  type FixtureSite,
  type Fleet,
  type TcpProxy,
} from '@wdr/testkit';

/**
 * Kafka unreachable for the whole fleet. Every service reaches the shared broker through a relay
 * this test owns (startKafkaProxy: it also rewrites the advertised broker address in metadata, so
 * no connection goes around it); cutting it resets every open connection and refuses new ones. The
 * broker itself is never touched.
 *
 * While it is cut: the API keeps answering 202 to submissions and 200 to reads, /readyz of the
 * gateway and the orchestrator stays 200, an event stream still serves the stored history and
 * polls for more, and an orchestrator restarted during the outage starts and admits without Kafka.
 * HTTP pages run where they were admitted (fetch-orchestrator/src/domain/local-runs.ts), so they
 * are fetched and stored during the outage, their settlement waiting in the outbox; a browser
 * page's render job waits there too. Once it is restored: every request accepted during the
 * outage completes and is settled.
 */
let fleet: Fleet;
let site: FixtureSite;
let proxy: TcpProxy;
let apiKey: string;

const orchestratorRows = <T>(sql: string, params: unknown[]) => queryRows<T>(fleet.databases['fetch-orchestrator'].url, sql, params);

const allChecksOk = async (service: (typeof SERVICE_NAMES)[number]) => {
  const res = await fetch(`${fleet.url(service)}/readyz`).catch(() => undefined);
  if (!res) return 'down';
  const body = (await res.json()) as { checks: { name: string; ok: boolean }[] };
  return res.status === 200 && body.checks.every((c) => c.ok) ? 'ok' : JSON.stringify(body.checks.filter((c) => !c.ok));
};

beforeAll(async () => {
  const [host, port] = KAFKA_BROKERS[0]!.split(':');
  proxy = await startKafkaProxy({ host: host!, port: Number(port) });
  site = await startFixtureSite();
  // HTTP readiness is enough to count as started (an orchestrator is restarted while Kafka is away);
  // before the cut, wait for every service's Kafka side too.
  fleet = await startFleet({ kafkaPort: proxy.port, waitForKafka: false });
  for (const s of SERVICE_NAMES)
    await eventually(
      () => allChecksOk(s),
      (v) => v === 'ok',
      90_000,
      500,
    );
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'kafka-outage', '--credits', '100000']);
  apiKey = tenant['api_key'] as string;
}, 180_000);

afterAll(async () => {
  proxy?.restore();
  await fleet?.stop();
  await site?.close();
  await proxy?.close();
}, 60_000);

const submit = (mode = 'http') =>
  request(fleet.url('gateway'))
    .post('/api/v1/data/requests')
    .set('X-API-Key', apiKey)
    .timeout(15_000)
    .send({ url: `${site.url}/page`, mode });

describe('Kafka unreachable for the fleet', () => {
  it('keeps admitting and reading while the broker is away; everything accepted completes once it is back', async () => {
    // Traffic really goes through the relay (bootstrap and the advertised address).
    expect(proxy.connections()).toBeGreaterThan(SERVICE_NAMES.length);
    const before = await submit();
    expect(before.status).toBe(202);
    const beforeId = (before.body as { id: string }).id;
    await eventually(
      async () =>
        (await request(fleet.url('gateway')).get(`/api/v1/data/requests/${beforeId}`).set('X-API-Key', apiKey)).body as { status: string },
      (b) => b.status === 'completed',
      30_000,
    );

    proxy.cut();
    const cutAt = Date.now();
    const accepted: string[] = [];
    const statuses = new Map<number, number>();
    const note = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);

    // Submissions and reads during the outage.
    for (let i = 0; i < 10; i++) {
      const res = await submit();
      note(res.status);
      if (res.status === 202) accepted.push((res.body as { id: string }).id);
      await sleep(300);
    }
    // Run where admitted: fetched and stored without Kafka, its settlement command waiting in the outbox.
    const read = await eventually(
      async () => request(fleet.url('gateway')).get(`/api/v1/data/requests/${accepted[0]}`).set('X-API-Key', apiKey),
      (r) => r.status !== 200 || (r.body as { status: string }).status !== 'running',
      10_000,
    );
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: 'completed', token_state: 'settlement_pending' });
    // A browser page's render job waits in the outbox: nothing runs it.
    const browser = await submit('browser');
    note(browser.status);
    const browserId = (browser.body as { id: string }).id;
    accepted.push(browserId);
    const events = await request(fleet.url('gateway')).get(`/api/v1/data/requests/${accepted[0]}/events`).set('X-API-Key', apiKey);
    expect(events.status).toBe(200);

    // An event stream opened during the outage: history now, and (by polling) the rest later.
    const streamed: string[] = [];
    const res = await fetch(`${fleet.url('gateway')}/api/v1/data/requests/${accepted[1]}/events/stream`, {
      headers: { 'X-API-Key': apiKey },
    });
    expect(res.status).toBe(200);
    const stream = (async () => {
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        streamed.push(decoder.decode(value));
      }
    })();
    await eventually(
      async () => streamed.join(''),
      (t) => t.includes('"type":"request.accepted"'),
      10_000,
    );

    // The orchestrator restarted while Kafka is away: it starts, is ready, and admits.
    await fleet.kill('fetch-orchestrator', 'SIGTERM');
    await fleet.start('fetch-orchestrator');
    for (let i = 0; i < 5; i++) {
      const res = await submit();
      note(res.status);
      if (res.status === 202) accepted.push((res.body as { id: string }).id);
    }

    // Still serving after 20 s of outage: ready (HTTP role), answering 202.
    await sleep(Math.max(0, 20_000 - (Date.now() - cutAt)));
    for (const s of ['gateway', 'fetch-orchestrator', 'billing-ledger'] as const) {
      const res = await request(fleet.url(s)).get('/readyz');
      expect(`${s}: ${res.status}`).toBe(`${s}: 200`);
    }
    const late = await submit();
    note(late.status);
    if (late.status === 202) accepted.push((late.body as { id: string }).id);
    expect(Object.fromEntries(statuses)).toEqual({ 202: 17 });
    // The HTTP pages ran and wait only for their settlement; the browser page waits for its render job.
    // (The last one was accepted a moment ago: its stage may still be running.)
    const waiting = await eventually(
      () =>
        orchestratorRows<{ id: string; status: string; token_state: string }>(
          'SELECT id::text, status, token_state FROM data_requests WHERE id = ANY($1::uuid[])',
          [accepted],
        ),
      (rows) => rows.every((r) => r.id === browserId || (r.status !== 'pending' && r.status !== 'running')),
      15_000,
    );
    expect(waiting).toHaveLength(accepted.length);
    expect(waiting.filter((r) => r.id !== browserId).map((r) => `${r.status}/${r.token_state}`)).toEqual(
      Array(accepted.length - 1).fill('completed/settlement_pending'),
    );
    expect(waiting.find((r) => r.id === browserId)).toMatchObject({ status: 'pending', token_state: 'reserved' });

    proxy.restore();
    const restoredAt = Date.now();
    const final = await eventually(
      () =>
        orchestratorRows<{ status: string; token_state: string; n: number }>(
          'SELECT status, token_state, count(*)::int AS n FROM data_requests WHERE id = ANY($1::uuid[]) GROUP BY 1, 2',
          [accepted],
        ),
      (rows) => rows.length === 1 && rows[0]!.status === 'completed' && rows[0]!.token_state === 'settled',
      180_000,
      1_000,
    );
    expect(final[0]!.n).toBe(accepted.length);
    const holds = await queryRows<{ state: string; n: number }>(
      fleet.databases['billing-ledger'].url,
      'SELECT state, count(*)::int AS n FROM reservations WHERE request_id = ANY($1::uuid[]) GROUP BY 1',
      [accepted],
    );
    expect(holds).toEqual([{ state: 'settled', n: accepted.length }]);
    // The stream opened during the outage saw the request through to its end, and closed.
    await Promise.race([stream, sleep(30_000)]);
    expect(streamed.join('')).toContain('"status":"completed"');
    // Kafka consumers of the whole fleet are back (reported checks all ok).
    for (const s of SERVICE_NAMES)
      await eventually(
        () => allChecksOk(s),
        (v) => v === 'ok',
        90_000,
        1_000,
      );
    process.stdout.write(
      `kafka outage: ${accepted.length} accepted during ${Math.round((restoredAt - cutAt) / 1000)} s without a broker, all completed and settled ${Math.round((Date.now() - restoredAt) / 1000)} s after it came back\n`,
    );
  }, 420_000);
});
