import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { eventually, withDatabase } from '@wdr/testkit';
import { newTenant, reserveBody, sendAndWait, settlementEnvelope, startLedger, type LedgerHarness } from './support.js';

/**
 * The token-flow counters (src/metrics.ts) read from the ledger's /metrics, against the real
 * Postgres and Kafka: what they count, that replays count nothing, and that an attempt whose
 * transaction rolled back is not counted (only the retry that committed is).
 */
let h: LedgerHarness;

beforeAll(async () => {
  h = await startLedger();
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 30_000);

const api = () => h.api();

async function flows(
  source: 'request' | 'llm' = 'request',
): Promise<{ reserved: number; charged: number; refundedSettled: number; refundedRefunded: number }> {
  const text = (await request(h.service.metricsApp).get('/metrics').expect(200)).text;
  const value = (name: string, labels: string[]): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)));
    if (!line) throw new Error(`${name}{${labels.join(',')}} not exported`);
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const src = `source="${source}"`;
  return {
    reserved: value('billing_ledger_tokens_reserved_total', [src]),
    charged: value('billing_ledger_tokens_charged_total', [src]),
    refundedSettled: value('billing_ledger_tokens_refunded_total', [src, 'state="settled"']),
    refundedRefunded: value('billing_ledger_tokens_refunded_total', [src, 'state="refunded"']),
  };
}

const chargedOf = (requestId: string) =>
  withDatabase(h.database.url, async (c) =>
    Number(
      (await c.query<{ n: string }>('SELECT charged_tokens::text AS n FROM reservations WHERE request_id = $1', [requestId])).rows[0]!.n,
    ),
  );

describe('token flow metrics', () => {
  it('counts held tokens at reservation (not on replay), then charged and refunded tokens at settlement', async () => {
    // The counters exist before anything moved (a reserved counter without series would make rate() empty).
    const before = await flows();
    const tenant = await newTenant(h, 100);
    const done = reserveBody(tenant, { route_mode: 'browser' });
    const failed = reserveBody(tenant);
    const heldDone = (await api().post('/internal/v1/reservations').send(done).expect(201)).body.held_tokens as number;
    const heldFailed = (await api().post('/internal/v1/reservations').send(failed).expect(201)).body.held_tokens as number;
    await api().post('/internal/v1/reservations').send(done).expect(200); // replay: holds nothing new
    expect(heldDone).toBeGreaterThan(0);
    expect(heldFailed).toBeGreaterThan(0);
    const afterReserve = await flows();
    expect(afterReserve.reserved - before.reserved).toBe(heldDone + heldFailed);
    expect(afterReserve.charged).toBe(before.charged);

    // The browser request completes after its HTTP stage (cheaper than the browser hold): part of the hold comes back.
    await sendAndWait(h, [
      settlementEnvelope(tenant, {
        request_id: done.request_id,
        outcome: 'completed',
        route_mode: 'browser',
        terminal_stage: 'http',
        captcha_tokens: 0,
      }),
      settlementEnvelope(tenant, { request_id: failed.request_id, outcome: 'failed', route_mode: 'http', captcha_tokens: 0 }),
    ]);
    const charged = await chargedOf(done.request_id);
    expect(charged).toBeGreaterThan(0);
    const after = await flows();
    expect(after.charged - before.charged).toBe(charged);
    expect(after.refundedSettled - before.refundedSettled).toBe(heldDone - charged);
    expect(after.refundedRefunded - before.refundedRefunded).toBe(heldFailed);
    // Held in = charged + given back: nothing is left on hold.
    expect(after.reserved - before.reserved).toBe(
      after.charged -
        before.charged +
        (after.refundedSettled - before.refundedSettled) +
        (after.refundedRefunded - before.refundedRefunded),
    );

    // A redelivered settlement command resolves nothing and counts nothing.
    await sendAndWait(h, [
      settlementEnvelope(tenant, { request_id: failed.request_id, outcome: 'failed', route_mode: 'http', captcha_tokens: 0 }),
    ]);
    expect(await flows()).toEqual(after);
  }, 60_000);

  it('does not count a settlement attempt whose transaction rolled back, only the retry that committed', async () => {
    const tenant = await newTenant(h, 100);
    const body = reserveBody(tenant);
    const held = (await api().post('/internal/v1/reservations').send(body).expect(201)).body.held_tokens as number;
    const before = await flows();
    // The first two attempts fail at COMMIT (a deferred constraint trigger on settle()'s outbox
    // event), after every statement of the handler ran; the sequence survives the rollbacks and
    // counts them.
    await withDatabase(h.database.url, (c) =>
      c.query(`
        CREATE SEQUENCE token_metrics_attempts;
        CREATE FUNCTION token_metrics_fail() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.envelope->'data'->>'request_id' = '${body.request_id}' AND nextval('token_metrics_attempts') <= 2 THEN
            RAISE EXCEPTION 'token-metrics test: rolled back on purpose';
          END IF;
          RETURN NEW;
        END $$;
        CREATE CONSTRAINT TRIGGER token_metrics_fail AFTER INSERT ON outbox_messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION token_metrics_fail();`),
    );
    try {
      const attempts = () =>
        withDatabase(h.database.url, async (c) =>
          Number((await c.query<{ n: string }>('SELECT last_value::text AS n FROM token_metrics_attempts')).rows[0]!.n),
        );
      const envelope = settlementEnvelope(tenant, {
        request_id: body.request_id,
        outcome: 'failed',
        route_mode: 'http',
        captcha_tokens: 0,
      });
      await h.deps.bus.send(h.deps.bus.topic('billingCommands'), [{ key: body.request_id, envelope }]);
      await eventually(attempts, (n) => n >= 1, 20_000, 10);
      // One attempt rolled back: nothing counted, the reservation is still held.
      expect(await flows()).toEqual(before);
      await eventually(
        () =>
          withDatabase(
            h.database.url,
            async (c) =>
              (await c.query<{ state: string }>('SELECT state FROM reservations WHERE request_id = $1', [body.request_id])).rows[0]!.state,
          ),
        (s) => s === 'refunded',
        20_000,
        25,
      );
      expect(await attempts()).toBe(3);
      const after = await flows();
      expect(after.refundedRefunded - before.refundedRefunded).toBe(held);
      expect(after.charged).toBe(before.charged);
      expect(after.reserved).toBe(before.reserved);
    } finally {
      await withDatabase(h.database.url, (c) =>
        c.query(
          'DROP TRIGGER token_metrics_fail ON outbox_messages; DROP FUNCTION token_metrics_fail(); DROP SEQUENCE token_metrics_attempts;',
        ),
      );
    }
  }, 60_000);

  it('does not count a reservation whose transaction rolled back at commit', async () => {
    const tenant = await newTenant(h, 100);
    const body = reserveBody(tenant);
    const before = await flows();
    await withDatabase(h.database.url, (c) =>
      c.query(`
        CREATE FUNCTION token_metrics_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.request_id = '${body.request_id}' THEN RAISE EXCEPTION 'token-metrics test: rolled back on purpose'; END IF;
          RETURN NEW;
        END $$;
        CREATE CONSTRAINT TRIGGER token_metrics_refuse AFTER INSERT ON reservations DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION token_metrics_refuse();`),
    );
    try {
      const res = await api().post('/internal/v1/reservations').send(body);
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(await flows()).toEqual(before);
      const rows = await withDatabase(
        h.database.url,
        async (c) => (await c.query('SELECT 1 FROM reservations WHERE request_id = $1', [body.request_id])).rowCount,
      );
      expect(rows).toBe(0);
    } finally {
      await withDatabase(h.database.url, (c) =>
        c.query('DROP TRIGGER token_metrics_refuse ON reservations; DROP FUNCTION token_metrics_refuse();'),
      );
    }
    // The same reservation once the cause is gone: counted once.
    const held = (await api().post('/internal/v1/reservations').send(body).expect(201)).body.held_tokens as number;
    expect((await flows()).reserved - before.reserved).toBe(held);
  }, 60_000);

  it('counts LLM operations under source="llm": the preflight hold, then the charge and the rest of the hold', async () => {
    const tenant = await newTenant(h, 1000);
    const before = await flows('llm');
    const requestsBefore = await flows('request');
    const hold = (op: string) =>
      api()
        .post('/internal/v1/llm-charges')
        .send({ tenant_id: tenant, operation_id: op, kind: 'recipe_generation', memo: 'token metrics' });
    const settle = (op: string, outcome: 'succeeded' | 'failed', cost: number) =>
      api().post(`/internal/v1/llm-charges/${op}/settle`).send({
        tenant_id: tenant,
        outcome,
        calls: 1,
        prompt_tokens: 100,
        completion_tokens: 10,
        provider_cost_nano_usd: cost,
        memo: 'token metrics',
      });
    const charged = `generation:${randomUUID()}`;
    const failed = `generation:${randomUUID()}`;
    const heldA = (await hold(charged).expect(201)).body.held_tokens as number;
    const heldB = (await hold(failed).expect(201)).body.held_tokens as number;
    await hold(charged).expect(200); // replay
    expect((await flows('llm')).reserved - before.reserved).toBe(heldA + heldB);

    const a = (await settle(charged, 'succeeded', 1_000_000).expect(200)).body as { state: string; charged_tokens: number };
    const b = (await settle(failed, 'failed', 1_000_000).expect(200)).body as { state: string; charged_tokens: number };
    await settle(charged, 'succeeded', 1_000_000).expect(200); // replay
    expect(a).toMatchObject({ state: 'charged' });
    expect(b).toMatchObject({ state: 'released', charged_tokens: 0 });
    expect(a.charged_tokens).toBeGreaterThan(0);
    expect(a.charged_tokens).toBeLessThan(heldA);
    const after = await flows('llm');
    expect(after.charged - before.charged).toBe(a.charged_tokens);
    expect(after.refundedSettled - before.refundedSettled).toBe(heldA - a.charged_tokens);
    expect(after.refundedRefunded - before.refundedRefunded).toBe(heldB);
    // The request counters did not move.
    expect(await flows('request')).toEqual(requestsBefore);
  }, 60_000);
});
