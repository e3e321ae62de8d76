// Own fleet (not the shared one of ./shared/): it reads every service's debug log lines, which only a fleet of its own keeps apart.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, eventually, startFixtureSite, startFleet, type FixtureSite, type Fleet, type ServiceName } from '@wdr/testkit';

/**
 * Request ids through the real fleet: the id a tenant sends to the gateway is in the gateway's
 * access log, in the orchestrator's and the ledger's access-log lines for the internal calls it
 * caused, and in the log context of the Kafka consumers that handle the messages it produced
 * (the fetch job, then the settlement command the worker wrote). Every service's pino output is
 * captured from its stdout.
 */
let fleet: Fleet;
let site: FixtureSite;
let apiKey: string;
type Line = Record<string, unknown> & { msg?: string; request_id?: string };
const lines: Partial<Record<ServiceName, Line[]>> = {};
const untaps: (() => void)[] = [];

function capture(service: ServiceName): void {
  const out: Line[] = (lines[service] = []);
  let partial = '';
  untaps.push(
    fleet.tap(service, (chunk) => {
      const text = partial + chunk;
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const p of parts) {
        try {
          out.push(JSON.parse(p) as Line);
        } catch {
          // not a pino line
        }
      }
    }),
  );
}

const linesOf = (service: ServiceName, requestId: string) => (lines[service] ?? []).filter((l) => l.request_id === requestId);

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet({
    env: {
      all: { LOG_LEVEL: 'info' },
      // The consumers' per-message line ("message handled") is at debug.
      'fetch-orchestrator': { LOG_LEVEL: 'debug' },
      'billing-ledger': { LOG_LEVEL: 'debug' },
    },
  });
  for (const s of ['gateway', 'fetch-orchestrator', 'billing-ledger'] as const) capture(s);
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'request-ids', '--credits', '100']);
  apiKey = tenant['api_key'] as string;
}, 180_000);

afterAll(async () => {
  for (const u of untaps) u();
  await fleet?.stop();
  await site?.close();
}, 60_000);

describe('X-Request-Id', () => {
  it('follows a submission through internal HTTP calls and Kafka messages into every log line about it', async () => {
    const id = `e2e-${randomUUID()}`;
    const res = await request(fleet.url('gateway'))
      .post('/api/v1/data/requests')
      .set('X-API-Key', apiKey)
      .set('X-Request-Id', id)
      .send({ url: `${site.url}/page`, mode: 'http' });
    expect(res.status).toBe(202);
    expect(res.headers['x-request-id']).toBe(id);
    const dataRequestId = (res.body as { id: string }).id;

    // The gateway's access log.
    const gatewayAccess = await eventually(async () => linesOf('gateway', id).find((l) => l.msg === 'request answered'), Boolean, 10_000);
    expect(gatewayAccess).toMatchObject({ req: { method: 'POST', path: '/api/v1/data/requests' }, res: { status_code: 202 } });
    // The orchestrator's access log of the gateway's internal call, and the ledger's of the orchestrator's reservation.
    const orchestratorAccess = await eventually(
      async () => linesOf('fetch-orchestrator', id).find((l) => l.msg === 'request answered'),
      Boolean,
      10_000,
    );
    expect(orchestratorAccess).toMatchObject({ req: { method: 'POST', path: '/internal/v1/requests' } });
    const ledgerAccess = await eventually(
      async () => linesOf('billing-ledger', id).find((l) => l.msg === 'request answered'),
      Boolean,
      10_000,
    );
    expect((ledgerAccess!['req'] as { path: string }).path).toMatch(/^\/internal\/v1\//);

    // The HTTP stage, run where it was admitted (fetch-orchestrator/src/domain/local-runs.ts), with
    // the id in its log context, and the settlement command it wrote, by the ledger's consumer.
    const stage = await eventually(
      async () => linesOf('fetch-orchestrator', id).find((l) => l.msg === 'http stage finished'),
      Boolean,
      30_000,
    );
    expect(stage).toMatchObject({ request_id: id, requestId: dataRequestId, ok: true });
    const settlement = await eventually(
      async () => linesOf('billing-ledger', id).find((l) => l.msg === 'message handled' && l['type'] === 'billing.settlement_requested'),
      Boolean,
      30_000,
    );
    expect(settlement).toMatchObject({ request_id: id });

    // Another submission without an id gets its own, and its messages carry that one, not this.
    const other = await request(fleet.url('gateway'))
      .post('/api/v1/data/requests')
      .set('X-API-Key', apiKey)
      .send({ url: `${site.url}/page`, mode: 'http' });
    expect(other.status).toBe(202);
    const otherId = other.headers['x-request-id'] as string;
    expect(otherId).toMatch(/^[0-9a-f-]{36}$/);
    // (The same page: served from the result cache the first one filled, so no stage runs for it.)
    await eventually(async () => linesOf('fetch-orchestrator', otherId).some((l) => l.msg === 'request answered'), Boolean, 30_000);
    await eventually(async () => linesOf('billing-ledger', otherId).some((l) => l.msg === 'message handled'), Boolean, 30_000);
    expect(linesOf('fetch-orchestrator', id).filter((l) => l.msg === 'http stage finished')).toHaveLength(1);
    expect(
      linesOf('billing-ledger', id).filter((l) => l.msg === 'message handled' && l['type'] === 'billing.settlement_requested'),
    ).toHaveLength(1);
    expect(dataRequestId).not.toBe((other.body as { id: string }).id);
  }, 90_000);

  it('replaces an id that is not 8..128 of [A-Za-z0-9._-], and says which one it used', async () => {
    for (const bad of ['short', 'has spaces in it', `${'x'.repeat(129)}`, 'semi;colon-12345']) {
      const res = await request(fleet.url('gateway')).get('/api/v1/data/balance').set('X-API-Key', apiKey).set('X-Request-Id', bad);
      expect(res.status).toBe(200);
      const given = res.headers['x-request-id'] as string;
      expect(given).toMatch(/^[0-9a-f-]{36}$/);
      const access = await eventually(async () => linesOf('gateway', given).find((l) => l.msg === 'request answered'), Boolean, 10_000);
      expect(access).toMatchObject({ req: { method: 'GET', path: '/api/v1/data/balance' }, res: { status_code: 200 } });
      // The ledger answered the balance read under the same (replacement) id.
      await eventually(async () => linesOf('billing-ledger', given).some((l) => l.msg === 'request answered'), Boolean, 10_000);
    }
    // An error answer carries the id in its body too.
    const id = `e2e-${randomUUID()}`;
    const unauth = await request(fleet.url('gateway')).get('/api/v1/data/balance').set('X-Request-Id', id);
    expect(unauth.status).toBe(401);
    expect(unauth.body).toMatchObject({ code: 'UNAUTHENTICATED', request_id: id });
  }, 60_000);
});
