import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { withDatabase } from '@wdr/testkit';
import { balance, HEALTHY, invariants, newTenant, startLedger, type LedgerHarness } from './support.js';

/**
 * Paid LLM operations (recipe generation and repair) against the real Postgres: the preflight
 * hold, the exact charge from the provider's cost under the plan's terms (standard: markup 20 %,
 * 1 token = 100,000 nano-USD, at most 500 tokens, preflight 50, failed operations free).
 */
let h: LedgerHarness;

beforeAll(async () => {
  h = await startLedger();
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const hold = (tenant: string, operationId: string, kind = 'recipe_generation') =>
  h
    .api()
    .post('/internal/v1/llm-charges')
    .send({ tenant_id: tenant, operation_id: operationId, kind, memo: 'LLM recipe generation, recipe r1' });
const settle = (tenant: string, operationId: string, outcome: 'succeeded' | 'failed', costNanoUsd: number) =>
  h.api().post(`/internal/v1/llm-charges/${operationId}/settle`).send({
    tenant_id: tenant,
    outcome,
    calls: 2,
    prompt_tokens: 1200,
    completion_tokens: 300,
    provider_cost_nano_usd: costNanoUsd,
    memo: 'LLM recipe generation, recipe r1',
  });

async function statement(tenant: string) {
  return withDatabase(
    h.database.url,
    async (c) =>
      (
        await c.query<{ id: string; code: string; kind: string; amount: string; memo: string }>(
          'SELECT id, code, kind, amount::text, memo FROM transfers WHERE debit_account_id = $1 ORDER BY created_at, id',
          [`tenant:${tenant}`],
        )
      ).rows,
  );
}

describe('LLM charges', () => {
  it('holds the preflight amount, then charges exactly the marked-up cost once', async () => {
    const tenant = await newTenant(h, 1000);
    const op = `generation:${randomUUID()}`;
    const held = await hold(tenant, op).expect(201);
    expect(held.body).toMatchObject({
      operation_id: op,
      kind: 'recipe_generation',
      state: 'held',
      held_tokens: 50,
      charged_tokens: 0,
      balance_tokens: 950,
      replay: false,
    });
    // The same operation holds once.
    expect((await hold(tenant, op).expect(200)).body).toMatchObject({ replay: true, held_tokens: 50, balance_tokens: 950 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 950, reserved_tokens: 50 });

    // 1,000,000 nano-USD + 20 % = 1,200,000 nano-USD = 12 tokens.
    const settled = await settle(tenant, op, 'succeeded', 1_000_000).expect(200);
    expect(settled.body).toMatchObject({ state: 'charged', charged_tokens: 12, uncollected_tokens: 0, balance_tokens: 988, replay: false });
    expect((await settle(tenant, op, 'succeeded', 9_000_000).expect(200)).body).toMatchObject({
      replay: true,
      charged_tokens: 12,
      balance_tokens: 988,
    });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 988, reserved_tokens: 0 });

    const lines = await statement(tenant);
    expect(lines.map((l) => [l.code, l.kind, l.amount])).toEqual([
      ['recipe_generation_hold', 'pending', '50'],
      ['recipe_generation', 'post_pending', '12'],
    ]);
    expect(lines[1]!.memo).toBe('LLM recipe generation, recipe r1: 2 model call(s), 1200 prompt + 300 completion tokens');
    // Seen through the statement endpoint too, with what each line did to the balance.
    const page = (await h.api().get(`/internal/v1/accounts/${tenant}/statement`).expect(200)).body as {
      items: { type: string; balance_effect_tokens: number }[];
    };
    expect(page.items.filter((i) => i.type.startsWith('recipe_generation')).map((i) => [i.type, i.balance_effect_tokens])).toEqual([
      ['recipe_generation', 38],
      ['recipe_generation_hold', -50],
    ]);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });

  it('refuses the preflight with 402 INSUFFICIENT_CREDITS and writes nothing', async () => {
    const tenant = await newTenant(h, 30);
    const refused = await hold(tenant, `generation:${randomUUID()}`);
    expect([refused.status, refused.body.code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
    expect(refused.body.message).toContain('preflight_required_balance_tokens');
    expect(await statement(tenant)).toEqual([]);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 30, reserved_tokens: 0 });
  });

  it('releases a failed operation (failed_operations_charged false), and charges it when the plan says so', async () => {
    const tenant = await newTenant(h, 100);
    const op = `repair:${randomUUID()}`;
    await hold(tenant, op, 'recipe_repair').expect(201);
    expect((await settle(tenant, op, 'failed', 5_000_000).expect(200)).body).toMatchObject({ state: 'released', charged_tokens: 0 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 100, reserved_tokens: 0 });
    expect((await statement(tenant)).map((l) => [l.code, l.kind])).toEqual([
      ['recipe_repair_hold', 'pending'],
      ['recipe_repair', 'void_pending'],
    ]);

    await withDatabase(h.database.url, (c) => c.query(`UPDATE plans SET failed_operations_charged = true WHERE id = 'business'`));
    const business = await newTenant(h, 100, 'business');
    const op2 = `repair:${randomUUID()}`;
    await hold(business, op2, 'recipe_repair').expect(201);
    // business: markup 15 %: 5,000,000 × 1.15 / 100,000 = 57.5 -> 58 tokens (8 above the hold).
    expect((await settle(business, op2, 'failed', 5_000_000).expect(200)).body).toMatchObject({ state: 'charged', charged_tokens: 58 });
    expect(await balance(h, business)).toEqual({ balance_tokens: 42, reserved_tokens: 0 });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });

  it('caps the charge at max_llm_charge_tokens and never overdraws', async () => {
    const tenant = await newTenant(h, 200);
    const op = `generation:${randomUUID()}`;
    await hold(tenant, op).expect(201);
    // 1 USD of model usage is 12,000 tokens: capped at 500; the balance has 200 of them.
    const settled = await settle(tenant, op, 'succeeded', 1_000_000_000).expect(200);
    expect(settled.body).toMatchObject({ state: 'charged', charged_tokens: 200, uncollected_tokens: 300, balance_tokens: 0 });
    expect((await statement(tenant)).map((l) => [l.code, l.kind, l.amount])).toEqual([
      ['recipe_generation_hold', 'pending', '50'],
      ['recipe_generation', 'post_pending', '50'],
      ['recipe_generation', 'posted', '150'],
    ]);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });

  it('refuses another tenant settling an operation and an unknown operation', async () => {
    const tenant = await newTenant(h, 100);
    const op = `generation:${randomUUID()}`;
    await hold(tenant, op).expect(201);
    const other = await newTenant(h, 100);
    expect((await settle(other, op, 'succeeded', 1).expect(404)).body.code).toBe('NOT_FOUND');
    expect((await hold(other, op).expect(409)).body.code).toBe('IDEMPOTENCY_CONFLICT');
    expect((await settle(tenant, 'nope', 'succeeded', 1).expect(404)).body.code).toBe('NOT_FOUND');
    const bad = await h.api().post('/internal/v1/llm-charges').send({ tenant_id: tenant, operation_id: 'x', kind: 'other', memo: 'm' });
    expect([bad.status, bad.body.code]).toEqual([422, 'VALIDATION_FAILED']);
  });
});
