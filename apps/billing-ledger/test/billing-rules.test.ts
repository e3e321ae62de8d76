import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { withDatabase } from '@wdr/testkit';
import type { SettlementCommand } from '../src/domain/settlement.js';
import {
  balance,
  HEALTHY,
  invariants,
  newTenant,
  operatorMovement,
  outboxEvents,
  reserveBody,
  sendAndWait,
  settlementEnvelope,
  startLedger,
  type LedgerHarness,
} from './support.js';

/** Pricing, settlement lines, the ceiling, quotes, alerts, statement and usage, against the real stack. */
let h: LedgerHarness;

beforeAll(async () => {
  h = await startLedger();
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const api = () => h.api();
const MIB = 1 << 20;

async function reserve(tenant: string, extra: Record<string, unknown> = {}) {
  const body = reserveBody(tenant, extra);
  const res = await api().post('/internal/v1/reservations').send(body);
  return { body, res };
}

async function settle(tenant: string, cmd: Omit<SettlementCommand, 'captcha_tokens'> & { captcha_tokens?: number }) {
  await sendAndWait(h, [settlementEnvelope(tenant, { captcha_tokens: 0, ...cmd })]);
  return (await api().get(`/internal/v1/reservations/${cmd.request_id}`).expect(200)).body as Record<string, unknown>;
}

async function transfersOf(requestId: string) {
  return withDatabase(h.database.url, async (c) =>
    (
      await c.query<{ kind: string; code: string; amount: string }>(
        'SELECT kind, code, amount FROM transfers WHERE request_id = $1 ORDER BY created_at, id',
        [requestId],
      )
    ).rows.map((t) => [t.kind, t.code, Number(t.amount)]),
  );
}

describe('settlement rule', () => {
  it('bills auto at the stage it ended in and releases the rest of the hold', async () => {
    const tenant = await newTenant(h, 100);
    const http = await reserve(tenant, { route_mode: 'auto' });
    expect(http.res.body).toMatchObject({ base_tokens: 5, held_tokens: 5 });
    const browser = await reserve(tenant, { route_mode: 'auto' });
    expect(
      (await settle(tenant, { request_id: http.body.request_id, outcome: 'completed', route_mode: 'auto', terminal_stage: 'http' }))
        .charged_tokens,
    ).toBe(1);
    expect(
      (await settle(tenant, { request_id: browser.body.request_id, outcome: 'completed', route_mode: 'browser' })).charged_tokens,
    ).toBe(5);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 94, reserved_tokens: 0 });
  });

  it('charges base + CAPTCHA + measured traffic, posting the part above the hold as a deferred charge', async () => {
    const tenant = await newTenant(h, 100);
    const { body } = await reserve(tenant);
    const detail = await settle(tenant, {
      request_id: body.request_id,
      outcome: 'completed',
      route_mode: 'http',
      captcha_solves: 1,
      traffic: { proxy_type: 'datacenter', measured: true, request_bytes: MIB, response_bytes: 2 * MIB },
    });
    // 1 (datacenter HTTP) + 10 (a solve) + ceil(3 MiB x 200 tokens/GiB) = 1 + 10 + 1.
    expect(detail).toMatchObject({
      token_state: 'settled',
      charged_tokens: 12,
      charged_base_tokens: 1,
      captcha_tokens: 10,
      traffic_tokens: 1,
      uncollected_tokens: 0,
    });
    expect((await transfersOf(body.request_id)).map((t) => t.join(':')).sort()).toEqual([
      'pending:reservation:1',
      'post_pending:settlement:1',
      'posted:deferred_charge:11',
    ]);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 88, reserved_tokens: 0 });
  });

  it('never charges above max_credits_per_request, also when the ceiling stopped execution', async () => {
    const tenant = await newTenant(h, 100);
    const done = await reserve(tenant, { max_credits: 5 });
    const stopped = await reserve(tenant, { max_credits: 5 });
    const lines = {
      route_mode: 'http',
      captcha_solves: 1,
      traffic: { proxy_type: 'datacenter' as const, measured: true, request_bytes: 0, response_bytes: 50 * MIB },
    };
    expect(await settle(tenant, { request_id: done.body.request_id, outcome: 'completed', ...lines })).toMatchObject({
      charged_tokens: 5,
      charged_base_tokens: 1,
      captcha_tokens: 4,
      traffic_tokens: 0,
    });
    // budget_exhausted is the tenant's own limit: charged (capped), not refunded.
    expect(
      await settle(tenant, { request_id: stopped.body.request_id, outcome: 'failed', reason: 'budget_exhausted', ...lines }),
    ).toMatchObject({
      token_state: 'settled',
      charged_tokens: 5,
      end_reason: 'budget_exhausted',
    });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 90, reserved_tokens: 0 });
  });

  it('refunds failed and cancelled requests in full, CAPTCHA and traffic included', async () => {
    const tenant = await newTenant(h, 100);
    const failed = await reserve(tenant, { route_mode: 'residential' });
    const cancelled = await reserve(tenant, { route_mode: 'browser' });
    const traffic = { proxy_type: 'residential' as const, measured: true, request_bytes: 1000, response_bytes: 9000 };
    expect(
      await settle(tenant, {
        request_id: failed.body.request_id,
        outcome: 'failed',
        route_mode: 'residential',
        captcha_solves: 2,
        traffic,
      }),
    ).toMatchObject({ token_state: 'refunded', charged_tokens: 0 });
    expect(await settle(tenant, { request_id: cancelled.body.request_id, outcome: 'cancelled', route_mode: 'browser' })).toMatchObject({
      token_state: 'refunded',
      charged_tokens: 0,
      end_reason: 'cancelled',
    });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 100, reserved_tokens: 0 });
  });

  it('takes what a short balance has for deferred items, records the rest as uncollected and never overdraws', async () => {
    const tenant = await newTenant(h, 3);
    const { body } = await reserve(tenant);
    const detail = await settle(tenant, { request_id: body.request_id, outcome: 'completed', route_mode: 'http', captcha_solves: 1 });
    expect(detail).toMatchObject({ charged_tokens: 3, uncollected_tokens: 8 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 0, reserved_tokens: 0 });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
    const exhausted = (await outboxEvents(h.database.url, 'billing.balance_exhausted')).filter((e) => e.tenant_id === tenant);
    expect(exhausted.map((e) => e.data)).toEqual([{ balance_tokens: 0, required_tokens: null }]);
  });
});

describe('max_credits_per_request during execution (steps)', () => {
  it('holds each step that fits, refuses the one that would cross the ceiling, and is idempotent per step', async () => {
    const tenant = await newTenant(h, 100);
    const { body } = await reserve(tenant, { max_credits: 12 });
    const step = (b: Record<string, unknown>) => api().post(`/internal/v1/reservations/${body.request_id}/steps`).send(b).expect(200);
    const first = await step({ step_id: 'captcha-1', captcha_solves: 1 });
    expect(first.body).toEqual({
      allowed: true,
      reason: null,
      projected_tokens: 11,
      held_tokens: 11,
      max_credits: 12,
      remaining_tokens: 1,
    });
    expect((await step({ step_id: 'captcha-1', captcha_solves: 1 })).body).toMatchObject({ allowed: true, held_tokens: 11 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 89, reserved_tokens: 11 });
    const second = await step({ step_id: 'captcha-2', captcha_solves: 2 });
    expect(second.body).toMatchObject({ allowed: false, reason: 'budget_exhausted', projected_tokens: 21, held_tokens: 11 });
    const detail = await settle(tenant, {
      request_id: body.request_id,
      outcome: 'failed',
      reason: 'budget_exhausted',
      route_mode: 'http',
      captcha_solves: 1,
    });
    expect(detail).toMatchObject({ charged_tokens: 11, held_tokens: 11 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 89, reserved_tokens: 0 });
    expect(
      (await api().post(`/internal/v1/reservations/${body.request_id}/steps`).send({ step_id: 'late', captcha_solves: 1 })).status,
    ).toBe(409);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });

  it('answers insufficient_credits when the balance cannot hold the next step', async () => {
    const tenant = await newTenant(h, 5);
    const { body } = await reserve(tenant);
    const res = await api()
      .post(`/internal/v1/reservations/${body.request_id}/steps`)
      .send({ step_id: 's', captcha_solves: 1 })
      .expect(200);
    expect(res.body).toMatchObject({ allowed: false, reason: 'insufficient_credits', held_tokens: 1 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 4, reserved_tokens: 1 });
  });
});

describe('guarded pricing policy', () => {
  it('quotes the worst case, holds it, and refuses what the balance cannot cover at worst', async () => {
    const tenant = await newTenant(h, 20, 'business');
    const { res } = await reserve(tenant);
    // Worst case: 1 (datacenter HTTP) + 1 CAPTCHA allowance (10) + 10 MiB traffic allowance (ceil(10/1024 x 200) = 2).
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ base_tokens: 1, held_tokens: 13, charged_tokens: 1, balance_tokens: 7 });
    expect(res.body.quote).toEqual({
      policy: 'guarded',
      pricing_version: 2,
      estimate_tokens: 1,
      worst_case_tokens: 13,
      max_credits_per_request: null,
      balance_after_tokens: 7,
    });
    const refused = await reserve(tenant);
    expect(refused.res.status).toBe(402);
    expect(refused.res.body.message).toContain('worst case of 13 tokens');
    const capped = await reserve(tenant, { max_credits: 4 });
    expect(capped.res.body.quote).toMatchObject({ worst_case_tokens: 4, max_credits_per_request: 4, balance_after_tokens: 3 });
    // The plan prices premium; the standard plan does not.
    expect((await reserve(tenant, { proxy_type: 'premium' })).res.status).toBe(402);
    const rich = await newTenant(h, 1000, 'business');
    expect((await reserve(rich, { proxy_type: 'premium' })).res.body).toMatchObject({ proxy_type: 'premium', base_tokens: 50 });
    // Settling posts the actual cost and releases the rest of the worst case.
    expect((await settle(tenant, { request_id: capped.body.request_id, outcome: 'completed', route_mode: 'http' })).charged_tokens).toBe(1);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 6, reserved_tokens: 13 });
  });
});

describe('balance alerts', () => {
  it('announces low and exhausted once per dip and re-arms after a top-up past the threshold', async () => {
    const tenant = await newTenant(h, 150);
    const events = async () =>
      (await outboxEvents(h.database.url, 'billing.balance_%')).filter((e) => e.tenant_id === tenant).map((e) => [e.type, e.data]);
    for (let i = 0; i < 5; i++) await reserve(tenant, { route_mode: 'residential_browser' }); // 125, 100, 75 (low), 50, 25
    expect(await events()).toEqual([['billing.balance_low', { balance_tokens: 75, threshold_tokens: 100 }]]);
    await reserve(tenant, { route_mode: 'residential_browser' }); // 0: exhausted
    expect((await reserve(tenant)).res.status).toBe(402); // still exhausted: no second announcement
    expect(await events()).toEqual([
      ['billing.balance_low', { balance_tokens: 75, threshold_tokens: 100 }],
      ['billing.balance_exhausted', { balance_tokens: 0, required_tokens: null }],
    ]);
    expect((await operatorMovement(h.deps.db, 'top_up', tenant, { amount: 1000, reference: `again-${tenant}` })).status).toBe(201);
    expect((await reserve(tenant, { route_mode: 'residential_browser', max_credits: 2000 })).res.status).toBe(201);
    expect(
      (await operatorMovement(h.deps.db, 'correction', tenant, { amount: -950, reference: `fix-${tenant}`, memo: 'duplicate payment' }))
        .status,
    ).toBe(201);
    expect((await events()).map((e) => e[0])).toEqual(['billing.balance_low', 'billing.balance_exhausted', 'billing.balance_low']);
  });

  it('announces an exhausted balance when an admission is refused for want of even the cheapest stage', async () => {
    const tenant = await newTenant(h, 3);
    expect((await reserve(tenant, { route_mode: 'browser' })).res.status).toBe(402);
    const exhausted = (await outboxEvents(h.database.url, 'billing.balance_exhausted')).filter((e) => e.tenant_id === tenant);
    expect(exhausted.map((e) => e.data)).toEqual([{ balance_tokens: 3, required_tokens: 5 }]);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 3, reserved_tokens: 0 });
  });
});

describe('operator movements', () => {
  it('are idempotent per reference, refuse a reused reference with other terms, and never overdraw', async () => {
    const tenant = await newTenant(h, 0);
    const topUp = (amount: number, reference: string) => operatorMovement(h.deps.db, 'top_up', tenant, { amount, reference });
    const correct = (body: { amount: number; reference: string; memo?: string }) => operatorMovement(h.deps.db, 'correction', tenant, body);
    expect((await topUp(40, `p-${tenant}`)).status).toBe(201);
    expect((await topUp(40, `p-${tenant}`)).body).toMatchObject({ created: false, balance_tokens: 40 });
    expect((await topUp(41, `p-${tenant}`)).status).toBe(409);
    await api()
      .post(`/internal/v1/accounts/${tenant}/grants`)
      .send({ amount: 10, reference: `g-${tenant}`, memo: 'welcome' })
      .expect(201);
    const tooMuch = await correct({ amount: -51, reference: `c-${tenant}`, memo: 'x' });
    expect(tooMuch.status).toBe(402);
    expect((await correct({ amount: -5, reference: `c2-${tenant}` })).status).toBe(422);
    expect((await correct({ amount: -5, reference: `c2-${tenant}`, memo: 'manual fix' })).status).toBe(201);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 45, reserved_tokens: 0 });
    const sources = await withDatabase(
      h.database.url,
      async (c) =>
        (
          await c.query<{ code: string; debit_account_id: string; credit_account_id: string; memo: string | null }>(
            'SELECT code, debit_account_id, credit_account_id, memo FROM transfers WHERE $1 IN (debit_account_id, credit_account_id) ORDER BY created_at, id',
            [`tenant:${tenant}`],
          )
        ).rows,
    );
    expect(
      sources.map((s) => [
        s.code,
        s.debit_account_id.startsWith('tenant:') ? 'tenant' : s.debit_account_id,
        s.credit_account_id.startsWith('tenant:') ? 'tenant' : s.credit_account_id,
        s.memo,
      ]),
    ).toEqual([
      ['top_up', 'operator:funding', 'tenant', null],
      ['grant', 'operator:grants', 'tenant', 'welcome'],
      ['correction', 'tenant', 'operator:corrections', 'manual fix'],
    ]);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });
});

describe('statement, usage and plan', () => {
  it('itemises every transfer with its request id, pages with a cursor, and adds up to the balance', async () => {
    const tenant = await newTenant(h, 100);
    const a = await reserve(tenant, { route_mode: 'auto' });
    const b = await reserve(tenant);
    await settle(tenant, {
      request_id: a.body.request_id,
      outcome: 'completed',
      route_mode: 'auto',
      terminal_stage: 'http',
      captcha_solves: 1,
    });
    await settle(tenant, { request_id: b.body.request_id, outcome: 'failed', route_mode: 'http' });
    const items: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: Record<string, unknown>[]; next_cursor: string | null } } = await api()
        .get(`/internal/v1/accounts/${tenant}/statement`)
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .expect(200);
      items.push(...res.body.items);
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(items).toHaveLength(6);
    expect(items.reduce((s, i) => s + (i['balance_effect_tokens'] as number), 0)).toBe((await balance(h, tenant)).balance_tokens);
    expect(
      items
        .filter((i) => i['request_id'] === a.body.request_id)
        .map((i) => [i['type'], i['kind'], i['amount_tokens'], i['balance_effect_tokens']])
        .sort(),
    ).toEqual(
      [
        ['deferred_charge', 'posted', 6, -6],
        ['reservation', 'pending', 5, -5],
        ['settlement', 'post_pending', 5, 0],
      ].sort(),
    );
    expect(items.at(-1)).toMatchObject({ type: 'top_up', balance_effect_tokens: 100, request_id: null });
    expect(JSON.stringify(items)).not.toContain('operator:');
    expect((await api().get(`/internal/v1/accounts/${tenant}/statement`).query({ cursor: 'garbage' })).status).toBe(422);
  });

  it('reports 30 days of proxy traffic by type, counting unmeasured jobs apart and never as zero bytes', async () => {
    const tenant = await newTenant(h, 1000);
    const run = async (mode: string, traffic: SettlementCommand['traffic'], outcome: 'completed' | 'failed' = 'completed') => {
      const { body } = await reserve(tenant, { route_mode: mode });
      await settle(tenant, { request_id: body.request_id, outcome, route_mode: mode, traffic });
    };
    await run('http', { proxy_type: 'datacenter', measured: true, request_bytes: 1000, response_bytes: 3 * MIB });
    await run('residential', { proxy_type: 'residential', measured: true, request_bytes: 2000, response_bytes: MIB });
    await run('residential', { proxy_type: 'residential', measured: false, request_bytes: 0, response_bytes: 0 });
    await run('residential', { proxy_type: 'residential', measured: true, request_bytes: 10, response_bytes: 90 }, 'failed');
    await run('http', undefined);
    const usage = (await api().get(`/internal/v1/accounts/${tenant}/usage`).expect(200)).body;
    expect(usage.period_days).toBe(30);
    expect(Date.parse(usage.period_end) - Date.parse(usage.period_start)).toBe(30 * 86_400_000);
    const dc = {
      request_bytes: 1000,
      response_bytes: 3 * MIB,
      total_bytes: 1000 + 3 * MIB,
      charged_tokens: 1,
      charged_jobs: 1,
      measurement_unavailable_jobs: 0,
    };
    // 2000 + 1 MiB at 2000 tokens/GiB -> 2; the failed one is refunded (bytes counted, nothing charged).
    const res = {
      request_bytes: 2010,
      response_bytes: MIB + 90,
      total_bytes: 2100 + MIB,
      charged_tokens: 2,
      charged_jobs: 1,
      measurement_unavailable_jobs: 1,
    };
    expect(usage.proxy_traffic).toEqual({
      request_bytes: 3010,
      response_bytes: 4 * MIB + 90,
      total_bytes: 3100 + 4 * MIB,
      charged_tokens: 3,
      charged_jobs: 2,
      measurement_unavailable_jobs: 1,
      by_proxy_type: [
        { proxy_type: 'datacenter', ...dc },
        { proxy_type: 'residential', ...res },
        {
          proxy_type: 'premium',
          request_bytes: 0,
          response_bytes: 0,
          total_bytes: 0,
          charged_tokens: 0,
          charged_jobs: 0,
          measurement_unavailable_jobs: 0,
        },
      ],
    });
  });

  it('serves the plan, its effective prices and the recipe billing values from plan data', async () => {
    const tenant = await newTenant(h, 0, 'business');
    const plan = (await api().get(`/internal/v1/accounts/${tenant}/plan`).expect(200)).body;
    expect(plan).toMatchObject({ plan_id: 'business', pricing_version: 2, guarded_pricing: true });
    expect(plan.prices).toEqual(
      expect.arrayContaining([
        { network_class: 'premium', tariff: 'http', tokens: 50 },
        { network_class: 'datacenter', tariff: 'browser', tokens: 5 },
      ]),
    );
    expect(plan.recipe_billing).toEqual({
      plan_id: 'business',
      charge_currency: 'tokens',
      charge_basis: 'llm_usage',
      user_token_value_nano_usd: 100000,
      markup_basis_points: 1500,
      max_llm_charge_tokens: 2000,
      preflight_required_balance_tokens: 50,
      exact_charge_available_after_completion: true,
      failed_operations_charged: false,
      deterministic_execution_uses_standard_scrape_pricing: true,
    });
    const unknown = (await api().get(`/internal/v1/accounts/${'00000000-0000-4000-8000-000000000000'}/plan`).expect(200)).body;
    expect(unknown.plan_id).toBe('standard');
    expect(unknown.prices.some((p: { network_class: string }) => p.network_class === 'premium')).toBe(false);
  });
});
