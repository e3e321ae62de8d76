import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '@wdr/kit/log';
import { withDatabase } from '@wdr/testkit';
import { returnExpiredLeases } from '../src/domain/leases.js';
import type { LeaseFacts, SettlementCommand } from '../src/domain/settlement.js';
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

/** Credit leases (issue 24, item 2) at the ledger: grants, settlement from a lease, the return sweep. */
let h: LedgerHarness;
const log = createLogger('test', 'silent');

beforeAll(async () => {
  // A grant may take the whole available balance here; the share's cap has its own test below.
  h = await startLedger({ LEASE_MAX_BALANCE_PERCENT: '100' });
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const grantBody = (tenant: string, lease: string, n: number, block: number, extra: Record<string, unknown> = {}) => ({
  tenant_id: tenant,
  lease_id: lease,
  n,
  block_tokens: block,
  route_mode: 'http',
  proxy_type: null,
  ...extra,
});

/** POST /internal/v1/leases with this body, expecting this status. */
const grant = (body: object, status: number) => h.api().post('/internal/v1/leases').send(body).expect(status);

const q = <T>(sql: string, params: unknown[] = []) => withDatabase(h.database.url, async (c) => (await c.query(sql, params)).rows as T[]);
const leaseRow = async (id: string) =>
  (
    await q<{ granted: string; used: string; returned: string; state: string }>(
      'SELECT granted::text, used::text, returned::text, state FROM leases WHERE id = $1',
      [id],
    )
  )[0];
const facts = (lease: string, held: number, extra: Partial<LeaseFacts> = {}): LeaseFacts => ({
  id: lease,
  pricing_version: 2,
  plan_id: 'standard',
  network_class: 'datacenter',
  held_tokens: held,
  ...extra,
});
const settleLeased = (tenant: string, cmd: SettlementCommand) => sendAndWait(h, [settlementEnvelope(tenant, cmd)]);
const dueNow = (lease: string) => q(`UPDATE leases SET return_after = now() - interval '1 second' WHERE id = $1`, [lease]);

describe('grants', () => {
  it('posts min(block, available) to the lease, replays (lease_id, n) with the amount first posted, and tops up as the next n', async () => {
    const tenant = await newTenant(h, 100);
    const lease = randomUUID();
    const first = await grant(grantBody(tenant, lease, 1, 30), 201);
    expect(first.body).toMatchObject({
      lease_id: lease,
      n: 1,
      granted_tokens: 30,
      lease_granted_tokens: 30,
      plan_id: 'standard',
      policy: 'standard',
      pricing_version: 2,
      balance_tokens: 70,
      replay: false,
    });
    expect(first.body.prices).toEqual(expect.arrayContaining([{ network_class: 'datacenter', tariff: 'http', tokens: 1 }]));
    expect(Date.parse(first.body.return_after)).toBeGreaterThan(Date.parse(first.body.admit_until));
    // Leased tokens left the available balance and show as reserved.
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 70, reserved_tokens: 30 });

    // The same (lease_id, n) again, whatever the block asked: the amount first posted, nothing new.
    const replay = await grant(grantBody(tenant, lease, 1, 50), 200);
    expect(replay.body).toMatchObject({ granted_tokens: 30, lease_granted_tokens: 30, replay: true, balance_tokens: 70 });

    // A top-up larger than what is left takes what is left.
    const top = await grant(grantBody(tenant, lease, 2, 500), 201);
    expect(top.body).toMatchObject({ granted_tokens: 70, lease_granted_tokens: 100, balance_tokens: 0 });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 0, reserved_tokens: 100 });
    expect(await leaseRow(lease)).toMatchObject({ granted: '100', used: '0', returned: '0', state: 'open' });
    const grants = await q<{ id: string; amount: string }>(`SELECT id, amount::text FROM transfers WHERE id LIKE $1 ORDER BY id`, [
      `lease:${lease}:grant:%`,
    ]);
    expect(grants).toEqual([
      { id: `lease:${lease}:grant:1`, amount: '30' },
      { id: `lease:${lease}:grant:2`, amount: '70' },
    ]);
    // Nothing left: the next top-up is refused as a reservation would be, with nothing written.
    const refused = await grant(grantBody(tenant, lease, 3, 10), 402);
    expect(refused.body.code).toBe('INSUFFICIENT_CREDITS');
    expect(await leaseRow(lease)).toMatchObject({ granted: '100' });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });

  it('refuses, writing nothing, when the balance cannot cover the prompting request; grants nothing to a guarded plan', async () => {
    const tenant = await newTenant(h, 4);
    const lease = randomUUID();
    // A browser request costs 5: a balance of 4 cannot lease for it.
    const res = await grant(grantBody(tenant, lease, 1, 100, { route_mode: 'browser' }), 402);
    expect(res.body.code).toBe('INSUFFICIENT_CREDITS');
    expect(await leaseRow(lease)).toBeUndefined();
    expect(await q('SELECT id FROM accounts WHERE id = $1', [`lease:${lease}`])).toEqual([]);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 4, reserved_tokens: 0 });

    const guarded = await newTenant(h, 1000, 'business');
    const g = await grant(grantBody(guarded, randomUUID(), 1, 100), 201);
    expect(g.body).toMatchObject({ granted_tokens: 0, policy: 'guarded' });
    expect(await balance(h, guarded)).toEqual({ balance_tokens: 1000, reserved_tokens: 0 });
  });

  it('refuses a lease id of another tenant', async () => {
    const a = await newTenant(h, 50);
    const b = await newTenant(h, 50);
    const lease = randomUUID();
    await grant(grantBody(a, lease, 1, 10), 201);
    const res = await grant(grantBody(b, lease, 2, 10), 409);
    expect(res.body.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(await balance(h, b)).toEqual({ balance_tokens: 50, reserved_tokens: 0 });
  });

  it('grants nothing more to a lease past its admission end, but still replays its grants', async () => {
    const tenant = await newTenant(h, 50);
    const lease = randomUUID();
    await grant(grantBody(tenant, lease, 1, 10), 201);
    await q(`UPDATE leases SET admit_until = now() - interval '1 second' WHERE id = $1`, [lease]);
    const late = await grant(grantBody(tenant, lease, 2, 10), 201);
    expect(late.body).toMatchObject({ granted_tokens: 0, lease_granted_tokens: 10 });
    expect(Date.parse(late.body.admit_until)).toBeLessThan(Date.now());
    const replay = await grant(grantBody(tenant, lease, 1, 10), 200);
    expect(replay.body).toMatchObject({ granted_tokens: 10, replay: true });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 40, reserved_tokens: 10 });
  });

  it('grants each (lease_id, n) once under concurrent first grants', async () => {
    const tenant = await newTenant(h, 1000);
    const lease = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        h
          .api()
          .post('/internal/v1/leases')
          .send(grantBody(tenant, lease, 1, 25)),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(answers.every((a) => a.body.granted_tokens === 25)).toBe(true);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 975, reserved_tokens: 25 });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  });
});

describe('settlement of a request admitted from a lease', () => {
  it('charges from the lease up to its hold, the rest from the balance; a refund moves nothing; a repeat changes nothing', async () => {
    const tenant = await newTenant(h, 100);
    const lease = randomUUID();
    await grant(grantBody(tenant, lease, 1, 20, { route_mode: 'auto' }), 201);
    const done = randomUUID();
    const failed = randomUUID();
    const captcha = randomUUID();
    // auto holds the dearest stage (browser, 5); it ended at HTTP (1).
    await settleLeased(tenant, {
      request_id: done,
      outcome: 'completed',
      route_mode: 'auto',
      captcha_tokens: 0,
      terminal_stage: 'http',
      lease: facts(lease, 5),
    });
    await settleLeased(tenant, { request_id: failed, outcome: 'failed', route_mode: 'http', captcha_tokens: 0, lease: facts(lease, 1) });
    // 1 + two CAPTCHA solves (20): 1 from the lease, 20 deferred from the balance.
    await settleLeased(tenant, {
      request_id: captcha,
      outcome: 'completed',
      route_mode: 'http',
      captcha_tokens: 0,
      captcha_solves: 2,
      lease: facts(lease, 1),
    });
    expect(await leaseRow(lease)).toMatchObject({ granted: '20', used: '2', returned: '0', state: 'open' });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 60, reserved_tokens: 18 });
    const rows = await q<{ request_id: string; state: string; charged_tokens: string; transfer_id: string }>(
      `SELECT request_id::text, state, charged_tokens::text, transfer_id FROM reservations WHERE request_id = ANY($1::uuid[])`,
      [[done, failed, captcha]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.request_id, [r.state, r.charged_tokens]]))).toEqual({
      [done]: ['settled', '1'],
      [failed]: ['refunded', '0'],
      [captcha]: ['settled', '21'],
    });
    const resolved = (await outboxEvents(h.database.url, 'billing.reservation_resolved')).filter((e) =>
      ([done, failed, captcha] as string[]).includes((e.data as { request_id: string }).request_id),
    );
    expect(resolved.map((e) => (e.data as { token_state: string }).token_state).sort()).toEqual(['refunded', 'settled', 'settled']);

    // A contradicting command for a settled request: a duplicate, nothing moves.
    await settleLeased(tenant, {
      request_id: done,
      outcome: 'completed',
      route_mode: 'browser',
      captcha_tokens: 0,
      lease: facts(lease, 5),
    });
    expect(await leaseRow(lease)).toMatchObject({ used: '2' });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 60, reserved_tokens: 18 });

    // The statement: grant and deferred charge move the balance; each use line is there, effect 0.
    const statement = (await h.api().get(`/internal/v1/accounts/${tenant}/statement`).expect(200)).body.items as {
      transfer_id: string;
      type: string;
      amount_tokens: number;
      balance_effect_tokens: number;
    }[];
    const lines = statement.map((i) => [i.transfer_id, i.type, i.amount_tokens, i.balance_effect_tokens]);
    expect(lines).toEqual(
      expect.arrayContaining([
        [`lease:${lease}:grant:1`, 'lease_grant', 20, -20],
        [`use:${done}`, 'lease_use', 1, 0],
        [`use:${captcha}`, 'lease_use', 1, 0],
        [`charge:${captcha}:deferred`, 'deferred_charge', 20, -20],
      ]),
    );
    expect(statement.reduce((s, i) => s + i.balance_effect_tokens, 0)).toBe(60);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 60_000);

  it('settles a batch of leased and ordinary commands together', async () => {
    const tenant = await newTenant(h, 100);
    const lease = randomUUID();
    await grant(grantBody(tenant, lease, 1, 10), 201);
    const reserved = randomUUID();
    await h
      .api()
      .post('/internal/v1/reservations')
      .send({ request_id: reserved, tenant_id: tenant, route_mode: 'browser', proxy_type: null, max_credits: null })
      .expect(201);
    const leased = Array.from({ length: 5 }, () => randomUUID());
    await sendAndWait(h, [
      settlementEnvelope(tenant, { request_id: reserved, outcome: 'completed', route_mode: 'browser', captcha_tokens: 0 }),
      ...leased.map((id) =>
        settlementEnvelope(tenant, { request_id: id, outcome: 'completed', route_mode: 'http', captcha_tokens: 0, lease: facts(lease, 1) }),
      ),
    ]);
    expect(await leaseRow(lease)).toMatchObject({ granted: '10', used: '5' });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 85, reserved_tokens: 5 });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 60_000);
});

describe('expiry', () => {
  it('returns exactly the unconsumed tokens once; a settlement after the return takes from the balance without overdraft', async () => {
    const tenant = await newTenant(h, 12);
    const lease = randomUUID();
    await grant(grantBody(tenant, lease, 1, 12, { route_mode: 'browser' }), 201);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 0, reserved_tokens: 12 });
    await settleLeased(tenant, {
      request_id: randomUUID(),
      outcome: 'completed',
      route_mode: 'browser',
      captcha_tokens: 0,
      lease: facts(lease, 5),
    });

    await dueNow(lease);
    expect(await returnExpiredLeases(h.deps.db, log)).toBeGreaterThanOrEqual(1);
    expect(await leaseRow(lease)).toMatchObject({ granted: '12', used: '5', returned: '7', state: 'returned' });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 7, reserved_tokens: 0 });
    const ret = await q<{ amount: string; debit_account_id: string; credit_account_id: string }>(
      `SELECT amount::text, debit_account_id, credit_account_id FROM transfers WHERE id = $1`,
      [`lease:${lease}:return`],
    );
    expect(ret).toEqual([{ amount: '7', debit_account_id: `lease:${lease}`, credit_account_id: `tenant:${tenant}` }]);
    // A second sweep returns nothing more.
    await returnExpiredLeases(h.deps.db, log);
    expect(await leaseRow(lease)).toMatchObject({ returned: '7' });

    // A request admitted before the return (hold 5), settling after it: 5 from the balance (7 -> 2).
    const late = randomUUID();
    await settleLeased(tenant, {
      request_id: late,
      outcome: 'completed',
      route_mode: 'browser',
      captcha_tokens: 0,
      lease: facts(lease, 5),
    });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 2, reserved_tokens: 0 });
    // Another one: only 2 left; the balance goes to 0, never below, and the rest is uncollected.
    const later = randomUUID();
    await settleLeased(tenant, {
      request_id: later,
      outcome: 'completed',
      route_mode: 'browser',
      captcha_tokens: 0,
      lease: facts(lease, 5),
    });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 0, reserved_tokens: 0 });
    const rows = await q<{ request_id: string; charged_tokens: string; uncollected_tokens: string }>(
      `SELECT request_id::text, charged_tokens::text, uncollected_tokens::text FROM reservations WHERE request_id = ANY($1::uuid[])`,
      [[late, later]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.request_id, [r.charged_tokens, r.uncollected_tokens]]))).toEqual({
      [late]: ['5', '0'],
      [later]: ['2', '3'],
    });
    expect(await leaseRow(lease)).toMatchObject({ granted: '12', used: '5', returned: '7' });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 60_000);
});

describe('early release', () => {
  const release = (lease: string, body: object, status: number) =>
    h.api().post(`/internal/v1/leases/${lease}/release`).send(body).expect(status);
  const admitsNoMore = (lease: string) => q(`UPDATE leases SET admit_until = now() - interval '1 second' WHERE id = $1`, [lease]);

  it('gives back at once what no request was admitted against, once; the requests held still settle from the lease, and the sweep returns their rest', async () => {
    const tenant = await newTenant(h, 100);
    const lease = randomUUID();
    await grant(grantBody(tenant, lease, 1, 40), 201);
    // Refused while the lease still admits: the orchestrator's holds could still grow.
    expect((await release(lease, { tenant_id: tenant, held_tokens: 3 }, 409)).body.code).toBe('CONFLICT');
    await admitsNoMore(lease);
    // Three requests of hold 1 were admitted from it; one settled before the release.
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await settleLeased(tenant, { request_id: a, outcome: 'completed', route_mode: 'http', captcha_tokens: 0, lease: facts(lease, 1) });
    const first = await release(lease, { tenant_id: tenant, held_tokens: 3 }, 200);
    expect(first.body).toEqual({ lease_id: lease, released_tokens: 37, replay: false });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 97, reserved_tokens: 2 });
    // A repeat, whatever it says, answers the first release and moves nothing.
    const again = await release(lease, { tenant_id: tenant, held_tokens: 0 }, 200);
    expect(again.body).toEqual({ lease_id: lease, released_tokens: 37, replay: true });
    expect(await leaseRow(lease)).toMatchObject({ granted: '40', used: '1', returned: '37', state: 'open' });
    // The other two settle from what stayed: one charged, one refunded.
    await settleLeased(tenant, { request_id: b, outcome: 'completed', route_mode: 'http', captcha_tokens: 0, lease: facts(lease, 1) });
    await settleLeased(tenant, { request_id: c, outcome: 'failed', route_mode: 'http', captcha_tokens: 0, lease: facts(lease, 1) });
    expect(await leaseRow(lease)).toMatchObject({ used: '2', returned: '37' });
    await dueNow(lease);
    await returnExpiredLeases(h.deps.db, log);
    expect(await leaseRow(lease)).toMatchObject({ granted: '40', used: '2', returned: '38', state: 'returned' });
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 98, reserved_tokens: 0 });
    const lines = await q<{ id: string; amount: string }>(`SELECT id, amount::text FROM transfers WHERE id LIKE $1 ORDER BY id`, [
      `lease:${lease}:re%`,
    ]);
    expect(lines).toEqual([
      { id: `lease:${lease}:release`, amount: '37' },
      { id: `lease:${lease}:return`, amount: '1' },
    ]);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 60_000);

  it('never gives back more than the lease still has; 404 for an unknown lease or another tenant', async () => {
    const tenant = await newTenant(h, 100);
    const lease = randomUUID();
    await grant(grantBody(tenant, lease, 1, 10), 201);
    await admitsNoMore(lease);
    // Settled uses of 4 (a request charged above the others' holds is the lease's at most its hold).
    for (let i = 0; i < 4; i++) {
      await settleLeased(tenant, {
        request_id: randomUUID(),
        outcome: 'completed',
        route_mode: 'http',
        captcha_tokens: 0,
        lease: facts(lease, 1),
      });
    }
    // held_tokens below what was used (an orchestrator that gave holds back): at most the rest, 6.
    expect((await release(lease, { tenant_id: tenant, held_tokens: 0 }, 200)).body.released_tokens).toBe(6);
    expect(await leaseRow(lease)).toMatchObject({ granted: '10', used: '4', returned: '6' });
    expect((await release(randomUUID(), { tenant_id: tenant, held_tokens: 0 }, 404)).body.code).toBe('NOT_FOUND');
    const other = await newTenant(h, 100);
    const theirs = randomUUID();
    await grant(grantBody(other, theirs, 1, 10), 201);
    await admitsNoMore(theirs);
    expect((await release(theirs, { tenant_id: tenant, held_tokens: 0 }, 404)).body.code).toBe('NOT_FOUND');
    expect(await leaseRow(theirs)).toMatchObject({ returned: '0' });
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 60_000);
});

describe('the balance share (LEASE_MAX_BALANCE_PERCENT)', () => {
  let capped: LedgerHarness;
  beforeAll(async () => {
    capped = await startLedger({ LEASE_MAX_BALANCE_PERCENT: '5' });
  }, 60_000);
  afterAll(async () => {
    await capped?.stop();
  }, 60_000);
  const grantCapped = (body: object, status: number) => capped.api().post('/internal/v1/leases').send(body).expect(status);

  it('takes at most its share of what is available, each top-up of what is left; declines, writing nothing and alerting nothing, when the share cannot cover the request', async () => {
    const tenant = await newTenant(capped, 1000);
    const lease = randomUUID();
    // 5 % of 1000 is 50: the block of 1000 is cut to it.
    expect((await grantCapped(grantBody(tenant, lease, 1, 1000), 201)).body).toMatchObject({ granted_tokens: 50, balance_tokens: 950 });
    // The top-up takes 5 % of the 950 left.
    expect((await grantCapped(grantBody(tenant, lease, 2, 1000), 201)).body).toMatchObject({ granted_tokens: 47, balance_tokens: 903 });
    expect(await balance(capped, tenant)).toEqual({ balance_tokens: 903, reserved_tokens: 97 });

    // 5 % of 80 is 4: it covers an HTTP request (1) but not a browser one (5), which is declined.
    const small = await newTenant(capped, 80);
    expect((await grantCapped(grantBody(small, randomUUID(), 1, 1000), 201)).body).toMatchObject({ granted_tokens: 4 });
    const other = randomUUID();
    const declined = await grantCapped(grantBody(small, other, 1, 1000, { route_mode: 'browser' }), 402);
    expect(declined.body.code).toBe('INSUFFICIENT_CREDITS');
    expect(await q('SELECT id FROM leases WHERE id = $1', [other])).toEqual([]);
    expect(await balance(capped, small)).toEqual({ balance_tokens: 76, reserved_tokens: 4 });
    // The balance covers the request, so no balance_exhausted event was written for the decline.
    expect((await outboxEvents(capped.database.url, 'billing.balance_exhausted')).filter((e) => e.tenant_id === small)).toEqual([]);
    expect(await invariants(capped.database.url)).toEqual(HEALTHY);
  }, 60_000);
});
