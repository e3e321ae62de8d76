import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually, withDatabase } from '@wdr/testkit';
import { reservePaths } from '../src/domain/reservations.js';
import {
  balance,
  HEALTHY,
  invariants,
  newTenant,
  reserveBody,
  sendAndWait,
  settlementEnvelope,
  startLedger,
  type LedgerHarness,
} from './support.js';

/** The ledger in-process against the real Postgres and Kafka. */
let h: LedgerHarness;

beforeAll(async () => {
  h = await startLedger();
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const api = () => h.api();

describe('admission', () => {
  it('admits exactly as many of 200 concurrent reservations as the balance covers', async () => {
    const tenant = await newTenant(h, 50);
    const results = await Promise.all(Array.from({ length: 200 }, () => api().post('/internal/v1/reservations').send(reserveBody(tenant))));
    const statuses = results.map((r) => r.status);
    const counts: Record<number, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    // Every answer is either a reservation or a refusal, and exactly the balance's worth are reservations.
    expect({ counts, other: results.filter((r) => r.status !== 201 && r.status !== 402).map((r) => r.body as unknown) }).toEqual({
      counts: { 201: 50, 402: 150 },
      other: [],
    });
    expect(results.find((r) => r.status === 402)!.body).toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 0, reserved_tokens: 50 });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
    const rows = await withDatabase(
      h.database.url,
      async (c) => (await c.query('SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1', [tenant])).rows[0].n,
    );
    expect(rows).toBe(50);
  }, 60_000);

  it('prices modes from the table and replays a repeated reservation for free', async () => {
    const tenant = await newTenant(h, 100);
    const body = reserveBody(tenant, { route_mode: 'residential_browser' });
    const first = await api().post('/internal/v1/reservations').send(body).expect(201);
    expect(first.body).toMatchObject({
      base_tokens: 25,
      held_tokens: 25,
      charged_tokens: 25,
      pricing_version: 2,
      plan_id: 'standard',
      proxy_type: 'residential',
      quote: null,
      replay: false,
      token_state: 'reserved',
    });
    const again = await api().post('/internal/v1/reservations').send(body).expect(200);
    expect(again.body).toMatchObject({ base_tokens: 25, charged_tokens: 0, replay: true, balance_tokens: 75 });
    const browser = await api()
      .post('/internal/v1/reservations')
      .send(reserveBody(tenant, { route_mode: 'browser' }))
      .expect(201);
    expect(browser.body.base_tokens).toBe(5);
    // The same request id for another tenant is a conflict, never a free ride on someone's reservation.
    const other = await newTenant(h, 100);
    const stolen = await api()
      .post('/internal/v1/reservations')
      .send({ ...body, tenant_id: other });
    expect(stolen.status).toBe(409);
    expect(await balance(h, other)).toEqual({ balance_tokens: 100, reserved_tokens: 0 });
  });

  it('refuses a ceiling below the base price and an unpriced premium network, writing nothing', async () => {
    const tenant = await newTenant(h, 100);
    const low = await api()
      .post('/internal/v1/reservations')
      .send(reserveBody(tenant, { route_mode: 'browser', max_credits: 4 }));
    expect(low.status).toBe(422);
    expect(low.body).toMatchObject({ code: 'BUDGET_BELOW_BASE_PRICE', details: [{ field: 'max_credits_per_request' }] });
    const premium = await api()
      .post('/internal/v1/reservations')
      .send(reserveBody(tenant, { proxy_type: 'premium' }));
    expect(premium.status).toBe(422);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 100, reserved_tokens: 0 });
    const written = await withDatabase(
      h.database.url,
      async (c) => (await c.query('SELECT count(*)::int AS n FROM transfers WHERE debit_account_id = $1', [`tenant:${tenant}`])).rows[0].n,
    );
    expect(written).toBe(0);
  });
});

describe('admission in one statement', () => {
  const rowsOf = (url: string, tenant: string) =>
    withDatabase(url, async (c) => ({
      reservations: (
        await c.query(
          `SELECT amount::int, held_tokens::int, route_mode, proxy_type, pricing_version, plan_id, policy, estimate_tokens::int, worst_case_tokens::int, max_credits, state
             FROM reservations WHERE tenant_id = $1 ORDER BY created_at, request_id`,
          [tenant],
        )
      ).rows,
      transfers: (
        await c.query(
          `SELECT amount::int, kind, code FROM transfers WHERE debit_account_id = $1 AND kind = 'pending' ORDER BY created_at, id`,
          [`tenant:${tenant}`],
        )
      ).rows,
    }));

  it('writes for a known account exactly what the transaction writes', async () => {
    for (const plan of ['standard', 'business']) {
      const tenant = await newTenant(h, 5_000, plan);
      const before = { ...reservePaths };
      const bodies = [
        reserveBody(tenant, { route_mode: 'browser' }),
        reserveBody(tenant, { route_mode: 'browser' }),
        reserveBody(tenant, { route_mode: 'auto', max_credits: 7 }),
        reserveBody(tenant, { route_mode: 'auto', max_credits: 7 }),
      ];
      const answers = [];
      for (const b of bodies) answers.push((await api().post('/internal/v1/reservations').send(b).expect(201)).body);
      // The first of the account goes through the transaction (and teaches the process the plan), the rest in one statement.
      expect(reservePaths.transaction - before.transaction).toBe(1);
      expect(reservePaths.oneStatement - before.oneStatement).toBe(3);
      const strip = (a: Record<string, unknown>) => ({
        ...a,
        request_id: undefined,
        balance_tokens: undefined,
        quote: a['quote'] ? { ...(a['quote'] as object), balance_after_tokens: undefined } : null,
      });
      expect(strip(answers[1])).toEqual(strip(answers[0]));
      expect(strip(answers[3])).toEqual(strip(answers[2]));
      const { reservations, transfers } = await rowsOf(h.database.url, tenant);
      expect(reservations[1]).toEqual(reservations[0]);
      expect(reservations[3]).toEqual(reservations[2]);
      expect(transfers.map((t) => t.amount)).toEqual(answers.map((a) => a.held_tokens));
      const held = answers.reduce((n, a) => n + (a.held_tokens as number), 0);
      expect(await balance(h, tenant)).toEqual({ balance_tokens: 5_000 - held, reserved_tokens: held });
      expect(answers[3].balance_tokens).toBe(5_000 - held);
    }
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });

  it('leaves to the transaction what it cannot decide alone: a plan change, a balance near its threshold, a replay', async () => {
    const tenant = await newTenant(h, 1_000);
    await api().post('/internal/v1/reservations').send(reserveBody(tenant)).expect(201);
    // The standard plan does not price premium; moved to business, the next premium request is priced at once.
    await api()
      .post('/internal/v1/reservations')
      .send(reserveBody(tenant, { proxy_type: 'premium' }))
      .expect(422);
    await withDatabase(h.database.url, (c) => c.query(`UPDATE accounts SET plan_id = 'business' WHERE id = $1`, [`tenant:${tenant}`]));
    const premium = await api()
      .post('/internal/v1/reservations')
      .send(reserveBody(tenant, { proxy_type: 'premium' }))
      .expect(201);
    expect(premium.body).toMatchObject({ plan_id: 'business', proxy_type: 'premium', base_tokens: 50, quote: { policy: 'guarded' } });

    // Standard plan, threshold 100: the reservation that takes the balance under it announces balance_low.
    const low = await newTenant(h, 110);
    await api().post('/internal/v1/reservations').send(reserveBody(low)).expect(201);
    const before = { ...reservePaths };
    // 109 -> 104: still above the threshold, one statement; 104 -> 99: crosses it, the transaction announces it.
    await api()
      .post('/internal/v1/reservations')
      .send(reserveBody(low, { route_mode: 'browser' }))
      .expect(201);
    await api()
      .post('/internal/v1/reservations')
      .send(reserveBody(low, { route_mode: 'browser' }))
      .expect(201);
    expect(reservePaths.oneStatement - before.oneStatement).toBe(1);
    expect(reservePaths.transaction - before.transaction).toBe(1);
    const alerts = await withDatabase(h.database.url, async (c) =>
      (
        await c.query(`SELECT topic, envelope->>'type' AS type FROM outbox_messages WHERE envelope->>'tenant_id' = $1 ORDER BY id`, [low])
      ).rows.map((r) => [r.topic, r.type]),
    );
    // On billing.alerts, the webhook dispatcher's topic, not billing.events (every page's resolution).
    expect(alerts).toEqual([['billingAlerts', 'billing.balance_low']]);

    // A replay of a reservation made in one statement is still free.
    const body = reserveBody(tenant, { route_mode: 'browser' });
    await api().post('/internal/v1/reservations').send(body).expect(201);
    const again = await api().post('/internal/v1/reservations').send(body).expect(200);
    expect(again.body).toMatchObject({ replay: true, charged_tokens: 0 });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });
});

describe('settlement over Kafka', () => {
  it('resolves each reservation once, whatever is redelivered or replayed', async () => {
    const tenant = await newTenant(h, 10);
    const charged = reserveBody(tenant);
    const refunded = reserveBody(tenant);
    await api().post('/internal/v1/reservations').send(charged).expect(201);
    await api().post('/internal/v1/reservations').send(refunded).expect(201);
    const settle = (requestId: string, outcome: 'completed' | 'failed') =>
      settlementEnvelope(tenant, { request_id: requestId, outcome, route_mode: 'http', captcha_tokens: 0 });
    const a = settle(charged.request_id, 'completed');
    const b = settle(refunded.request_id, 'failed');
    const replay = settle(charged.request_id, 'failed');
    // The same envelope twice (redelivery) and a second command for the same request (replay).
    await sendAndWait(h, [a, a, b, replay]);

    const states = await withDatabase(
      h.database.url,
      async (c) =>
        (
          await c.query<{ request_id: string; state: string; charged_tokens: string | null }>(
            'SELECT request_id, state, charged_tokens FROM reservations WHERE tenant_id = $1',
            [tenant],
          )
        ).rows,
    );
    const byId = Object.fromEntries(states.map((r) => [r.request_id, r]));
    expect(byId[charged.request_id]).toMatchObject({ state: 'settled', charged_tokens: '1' });
    expect(byId[refunded.request_id]).toMatchObject({ state: 'refunded', charged_tokens: '0' });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 9, reserved_tokens: 0 });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
    const resolved = await withDatabase(
      h.database.url,
      async (c) =>
        (
          await c.query(
            "SELECT count(*)::int AS n FROM outbox_messages WHERE envelope->>'type' = 'billing.reservation_resolved' AND envelope->'data'->>'request_id' = ANY($1)",
            [[charged.request_id, refunded.request_id]],
          )
        ).rows[0].n,
    );
    expect(resolved).toBe(2);
    // The orchestrator learns the outcome over billing.events (published by the outbox relay).
    await eventually(
      () =>
        withDatabase(
          h.database.url,
          async (c) => (await c.query('SELECT count(*)::int AS n FROM outbox_messages WHERE published_at IS NULL')).rows[0].n as number,
        ),
      (n) => n === 0,
      30_000,
    );
    const detail = await api().get(`/internal/v1/reservations/${charged.request_id}`).expect(200);
    expect(detail.body).toMatchObject({ token_state: 'settled', charged_tokens: 1, charged_base_tokens: 1, held_tokens: 1 });
  }, 60_000);
});
