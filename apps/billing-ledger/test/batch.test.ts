import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { withDatabase } from '@wdr/testkit';
import { balance, HEALTHY, invariants, newTenant, startLedger, type LedgerHarness } from './support.js';

/** POST /internal/v1/reservations/batch: all jobs of a batch admitted together or none. */
let h: LedgerHarness;

beforeAll(async () => {
  h = await startLedger();
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const item = (extra: Record<string, unknown> = {}) => ({
  request_id: randomUUID(),
  route_mode: 'http',
  proxy_type: null,
  max_credits: null,
  ...extra,
});
const batch = (tenant: string, items: unknown[]) => h.api().post('/internal/v1/reservations/batch').send({ tenant_id: tenant, items });
const reservationsOf = (tenant: string) =>
  withDatabase(
    h.database.url,
    async (c) => (await c.query('SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1', [tenant])).rows[0].n as number,
  );

describe('batch reservation', () => {
  it('reserves every job at once, reports the sums, and replays the same batch for free', async () => {
    const tenant = await newTenant(h, 100);
    const items = [
      item(),
      item({ route_mode: 'browser' }),
      item({ route_mode: 'residential' }),
      item({ route_mode: 'auto', max_credits: 3 }),
    ];
    const first = await batch(tenant, items).expect(201);
    expect(first.body.items.map((i: { base_tokens: number }) => i.base_tokens)).toEqual([1, 5, 10, 3]);
    expect(first.body).toMatchObject({ balance_tokens: 81, base_tokens: 19, charged_tokens: 19, held_tokens: 19, replay: false });
    expect(first.body.items[0]).toMatchObject({
      request_id: items[0]!.request_id,
      pricing_version: 2,
      proxy_type: 'datacenter',
      charged_tokens: 1,
      replay: false,
      quote: null,
      token_state: 'reserved',
    });
    const again = await batch(tenant, items).expect(200);
    expect(again.body).toMatchObject({ balance_tokens: 81, base_tokens: 19, charged_tokens: 0, replay: true });
    // A retried batch with one more job reserves only the new one.
    const grown = await batch(tenant, [...items, item()]).expect(201);
    expect(grown.body).toMatchObject({ balance_tokens: 80, charged_tokens: 1 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 80, reserved_tokens: 20 });
  });

  it('refuses the whole batch with 402 when the sum does not fit, writing nothing', async () => {
    const tenant = await newTenant(h, 10);
    const res = await batch(tenant, [item(), item({ route_mode: 'browser' }), item({ route_mode: 'browser' })]);
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(await reservationsOf(tenant)).toBe(0);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 10, reserved_tokens: 0 });
  });

  it('refuses the whole batch when one job is invalid, naming the job', async () => {
    const tenant = await newTenant(h, 100);
    const res = await batch(tenant, [item(), item({ route_mode: 'browser', max_credits: 2 })]);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'BUDGET_BELOW_BASE_PRICE', details: [{ field: 'items.1.max_credits_per_request' }] });
    const dup = item();
    expect((await batch(tenant, [dup, dup])).body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'items.1.request_id' }] });
    expect((await batch(tenant, [])).status).toBe(422);
    expect(
      (
        await batch(
          tenant,
          Array.from({ length: 1001 }, () => item()),
        )
      ).status,
    ).toBe(422);
    expect(await reservationsOf(tenant)).toBe(0);
  });

  it('handles 1000 jobs in one call and admits exactly the batches that fit under concurrency', async () => {
    const tenant = await newTenant(h, 2500);
    const big = await batch(
      tenant,
      Array.from({ length: 1000 }, () => item()),
    ).expect(201);
    expect(big.body).toMatchObject({ base_tokens: 1000, balance_tokens: 1500 });
    // 20 concurrent batches of 100 tokens against 1500: exactly 15 fit.
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        batch(
          tenant,
          Array.from({ length: 20 }, () => item({ route_mode: 'browser' })),
        ),
      ),
    );
    // Every answer is a reservation or a refusal (none an error), and exactly 15 are reservations.
    expect({
      reserved: results.filter((r) => r.status === 201).length,
      refused: results.filter((r) => r.status === 402).length,
      other: results.filter((r) => r.status !== 201 && r.status !== 402).map((r) => [r.status, r.body as unknown]),
    }).toEqual({ reserved: 15, refused: 5, other: [] });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 0, reserved_tokens: 2500 });
    expect(await reservationsOf(tenant)).toBe(1000 + 15 * 20);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 60_000);
});
