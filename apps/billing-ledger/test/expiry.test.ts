import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { eventually, withDatabase } from '@wdr/testkit';
import { STALE_RESERVATIONS_SQL } from '../src/domain/expiry.js';
import {
  balance,
  HEALTHY,
  invariants,
  newTenant,
  outboxEvents,
  sendAndWait,
  settlementEnvelope,
  startLedger,
  type LedgerHarness,
} from './support.js';

/** Reservations nobody settles are released after their time to live, exactly once. */
let h: LedgerHarness;

beforeAll(async () => {
  h = await startLedger({ RESERVATION_TTL_SECONDS: '2', RESERVATION_SWEEP_MS: '300' });
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

/** A new tenant with 10 credits and one browser reservation of 5 that nobody settles. */
async function unsettledReservation(): Promise<{ tenant: string; requestId: string; state: () => Promise<string> }> {
  const tenant = await newTenant(h, 10);
  const requestId = randomUUID();
  await h
    .api()
    .post('/internal/v1/reservations')
    .send({ request_id: requestId, tenant_id: tenant, route_mode: 'browser', proxy_type: null, max_credits: null })
    .expect(201);
  const state = () =>
    withDatabase(
      h.database.url,
      async (c) => (await c.query<{ state: string }>('SELECT state FROM reservations WHERE request_id = $1', [requestId])).rows[0]!.state,
    );
  return { tenant, requestId, state };
}

it('refunds a reservation left unresolved past its TTL, announces it once, and ignores a late settlement', async () => {
  const { tenant, requestId, state } = await unsettledReservation();
  expect(await balance(h, tenant)).toEqual({ balance_tokens: 5, reserved_tokens: 5 });
  await eventually(state, (s) => s === 'refunded', 20_000, 200);
  expect(await balance(h, tenant)).toEqual({ balance_tokens: 10, reserved_tokens: 0 });
  const resolved = (await outboxEvents(h.database.url, 'billing.reservation_resolved')).filter(
    (e) => (e.data as { request_id: string }).request_id === requestId,
  );
  expect(resolved).toHaveLength(1);
  expect(resolved[0]!.data).toMatchObject({ token_state: 'refunded', charged_tokens: 0 });

  // A settlement that arrives after the expiry changes nothing.
  await sendAndWait(h, [
    settlementEnvelope(tenant, { request_id: requestId, outcome: 'completed', route_mode: 'browser', captcha_tokens: 0 }),
  ]);
  expect(await balance(h, tenant)).toEqual({ balance_tokens: 10, reserved_tokens: 0 });
  expect(await state()).toBe('refunded');
  expect(await invariants(h.database.url)).toEqual(HEALTHY);
}, 60_000);

it('finds the open reservations past their TTL in the index of open ones, never reading the settled ones', async () => {
  const { requestId, state } = await unsettledReservation();
  await eventually(state, (s) => s === 'refunded', 20_000, 200);
  const plan = await withDatabase(h.database.url, async (c) => {
    // A ledger's history: thousands of settled reservations (copies of this refunded one).
    await c.query(
      `INSERT INTO reservations
       SELECT (jsonb_populate_record(r, jsonb_build_object('request_id', gen_random_uuid(), 'transfer_id', gen_random_uuid()::text))).*
       FROM reservations r, generate_series(1, 5000) WHERE r.request_id = $1`,
      [requestId],
    );
    await c.query('ANALYZE reservations');
    const explained = await c.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${STALE_RESERVATIONS_SQL}`, [2, 100]);
    return JSON.stringify(explained.rows[0]!['QUERY PLAN']);
  });
  expect(plan).toContain('"Index Name":"reservations_open_created_at_idx"');
  expect(plan).not.toContain('Seq Scan');
}, 60_000);
