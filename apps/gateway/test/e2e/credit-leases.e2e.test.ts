// Own fleet (not the shared one of ./shared/): credit leases on, and it SIGKILLs the orchestrator and the ledger.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  cabinetEnvironment,
  eventually,
  internalAgent,
  startFixtureSite,
  startFleet,
  startTcpProxy,
  startWebhookReceiver,
  queryRows,
  withDatabase,
} from '@wdr/testkit';
import type { Fleet, FixtureSite, TcpProxy } from '@wdr/testkit';

/**
 * Credit leases (issue 24, item 2) through the real fleet: LEASE_ENABLED on the orchestrator, one
 * slot of 8 tokens per tenant. Admission from a lease makes no ledger call; the ledger stays the
 * source of truth, and a crash of either side loses or doubles nothing.
 */
let fleet: Fleet;
let site: FixtureSite;
/** The orchestrator reaches the ledger through this relay (cut to lose a grant's answer). */
let ledgerPath: TcpProxy;
const BLOCK = 8;
let tenants = 0;

const gateway = () => request(fleet.url('gateway'));
const ledgerApi = () => internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger');
const orch = <T>(sql: string, params: unknown[] = []) => queryRows<T>(fleet.databases['fetch-orchestrator'].url, sql, params);
const ledgerDb = <T>(sql: string, params: unknown[] = []) => queryRows<T>(fleet.databases['billing-ledger'].url, sql, params);

interface Tenant {
  id: string;
  key: string;
}

async function newTenant(credits: number): Promise<Tenant> {
  const t = await adminCommand(fleet, ['create-tenant', '--name', `lease-${credits}-${++tenants}`, '--credits', String(credits)]);
  return { id: t['tenant_id'] as string, key: t['api_key'] as string };
}

async function submit(t: Tenant, path: string): Promise<string> {
  const res = await gateway()
    .post('/api/v1/data/requests')
    .set('X-API-Key', t.key)
    .send({ url: `${site.url}${path}`, mode: 'http' });
  expect(res.status).toBe(202);
  expect(res.body.charged_tokens).toBe(1);
  return res.body.id as string;
}

const detail = async (t: Tenant, id: string) =>
  (await gateway().get(`/api/v1/data/requests/${id}`).set('X-API-Key', t.key).expect(200)).body as Record<string, unknown>;
const ended = (d: Record<string, unknown>) => ['settled', 'refunded'].includes(d['token_state'] as string);

async function slot(t: Tenant) {
  return (
    await orch<{ lease_id: string | null; n: number; granted: string; held: string; pending_n: number | null }>(
      'SELECT lease_id::text, n, granted::text, held::text, pending_n FROM tenant_leases WHERE tenant_id = $1 AND slot = 0',
      [t.id],
    )
  )[0];
}

/** The tenant's slot holds a lease the ledger granted (the first submission asked for it). */
async function leaseReady(t: Tenant) {
  await submit(t, '/page?warm');
  const s = await eventually(
    () => slot(t),
    (x) => !!x && x.lease_id !== null && x.pending_n === null && Number(x.granted) > 0,
    30_000,
    100,
  );
  return s!;
}

const leasedIds = async (ids: string[]) =>
  (await orch<{ id: string }>('SELECT id::text FROM data_requests WHERE id = ANY($1::uuid[]) AND lease_id IS NOT NULL', [ids])).map(
    (r) => r.id,
  );

/** The ledger's sums for one lease: granted = used + returned + what it still has, and the slot agrees. */
async function leaseSums(leaseId: string) {
  const [l] = await ledgerDb<{ granted: string; used: string; returned: string; rest: string; state: string }>(
    `SELECT l.granted::text, l.used::text, l.returned::text, (a.credits_posted - a.debits_posted - a.debits_pending)::text AS rest, l.state
       FROM leases l JOIN accounts a ON a.id = 'lease:' || l.id::text WHERE l.id = $1`,
    [leaseId],
  );
  return l!;
}

beforeAll(async () => {
  site = await startFixtureSite();
  fleet = await startFleet({
    env: {
      'fetch-orchestrator': { LEASE_ENABLED: 'true', LEASE_BLOCK_TOKENS: String(BLOCK), LEASE_SLOTS: '1' },
      // Small balances here: a grant may take all that is available (the share's cap: leases.test).
      'billing-ledger': { LEASE_TTL_S: '600', LEASE_RETURN_GRACE_S: '600', LEASE_MAX_BALANCE_PERCENT: '100' },
    },
  });
  const ledgerPort = Number(new URL(fleet.url('billing-ledger')).port);
  ledgerPath = await startTcpProxy({ host: '127.0.0.1', port: ledgerPort });
  await fleet.kill('fetch-orchestrator', 'SIGTERM');
  await fleet.start('fetch-orchestrator', { LEDGER_URL: `http://127.0.0.1:${ledgerPath.port}` });
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  await ledgerPath?.close();
  await site?.close();
}, 60_000);

describe('admission from a lease', () => {
  it('completes leased requests, charges each its price once, and the balance and statement add up', async () => {
    const t = await newTenant(100);
    const s = await leaseReady(t);
    expect(Number(s.granted)).toBe(BLOCK);
    const ids = [await submit(t, '/page?a'), await submit(t, '/page?b'), await submit(t, '/page?c')];
    expect((await leasedIds(ids)).sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const d = await eventually(() => detail(t, id), ended, 30_000, 200);
      expect(d).toMatchObject({ status: 'completed', token_state: 'settled', base_tokens: 1 });
    }
    // At the ledger: one `use:<id>` of 1 per leased request, no reservation hold.
    const transfers = await ledgerDb<{ id: string; amount: string; code: string }>(
      'SELECT id, amount::text, code FROM transfers WHERE request_id = ANY($1::uuid[]) ORDER BY id',
      [ids],
    );
    expect(transfers).toEqual(
      ids.map((id) => ({ id: `use:${id}`, amount: '1', code: 'lease_use' })).sort((a, b) => (a.id < b.id ? -1 : 1)),
    );

    // The warm-up request reserved (1), the lease took 8, 3 of which were used.
    const balance = (await gateway().get('/api/v1/data/balance').set('X-API-Key', t.key).expect(200)).body;
    expect(balance).toMatchObject({ balance_tokens: 100 - 1 - BLOCK, reserved_tokens: BLOCK - 3 });
    const items = (await gateway().get('/api/v1/data/statement?limit=100').set('X-API-Key', t.key).expect(200)).body.items as {
      type: string;
      request_id: string | null;
      balance_effect_tokens: number;
    }[];
    expect(items.reduce((sum, i) => sum + i.balance_effect_tokens, 0)).toBe(balance.balance_tokens);
    expect(items.filter((i) => i.type === 'lease_grant').map((i) => i.balance_effect_tokens)).toEqual([-BLOCK]);
    for (const id of ids)
      expect(items.filter((i) => i.request_id === id).map((i) => [i.type, i.balance_effect_tokens])).toEqual([['lease_use', 0]]);
    const sums = await leaseSums(s.lease_id!);
    expect(sums).toMatchObject({ granted: String(BLOCK), used: '3', returned: '0', rest: String(BLOCK - 3), state: 'open' });
    expect(await slot(t)).toMatchObject({ granted: String(BLOCK), held: '3' });

    // A leased request that fails is refunded: its hold goes back to the slot, nothing moves at the ledger.
    const failed = await submit(t, '/status/503');
    expect(await leasedIds([failed])).toEqual([failed]);
    expect(await eventually(() => detail(t, failed), ended, 60_000, 200)).toMatchObject({ status: 'failed', token_state: 'refunded' });
    expect(await slot(t)).toMatchObject({ granted: String(BLOCK), held: '3' });
    expect(await ledgerDb('SELECT id FROM transfers WHERE request_id = $1', [failed])).toEqual([]);
    expect(await ledgerDb('SELECT state FROM reservations WHERE request_id = $1', [failed])).toEqual([{ state: 'refunded' }]);
    expect(await leaseSums(s.lease_id!)).toMatchObject({ used: '3', rest: String(BLOCK - 3) });
  }, 120_000);

  it('gives back at once what a lease that admits no more never held; what it held still settles from it', async () => {
    const t = await newTenant(100);
    const s = await leaseReady(t);
    const ids = [await submit(t, '/page?r1'), await submit(t, '/page?r2')];
    expect((await leasedIds(ids)).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await eventually(() => detail(t, id), ended, 30_000, 200)).toMatchObject({ token_state: 'settled' });
    expect(await leaseSums(s.lease_id!)).toMatchObject({ granted: String(BLOCK), used: '2', returned: '0', state: 'open' });
    // The lease's admission window ends (on both sides: this fleet's leases admit for 600 s).
    await ledgerDb(`UPDATE leases SET admit_until = now() - interval '5 seconds' WHERE id = $1`, [s.lease_id]);
    await orch(`UPDATE tenant_leases SET admit_until = now() - interval '5 seconds' WHERE tenant_id = $1 AND slot = 0`, [t.id]);
    // The orchestrator's release pass (every 10 s): granted 8, held 2, so 6 go back now, not at return_after.
    const sums = await eventually(
      () => leaseSums(s.lease_id!),
      (x) => x.returned !== '0',
      30_000,
      200,
    );
    expect(sums).toMatchObject({ granted: String(BLOCK), used: '2', returned: String(BLOCK - 2), rest: '0', state: 'open' });
    const balance = (await gateway().get('/api/v1/data/balance').set('X-API-Key', t.key).expect(200)).body;
    expect(balance).toMatchObject({ balance_tokens: 100 - 1 - 2, reserved_tokens: 0 });
    const [row] = await orch<{ release_lease_id: string | null; released_lease_id: string | null }>(
      'SELECT release_lease_id::text, released_lease_id::text FROM tenant_leases WHERE tenant_id = $1 AND slot = 0',
      [t.id],
    );
    expect(row).toEqual({ release_lease_id: null, released_lease_id: s.lease_id });
    const items = (await gateway().get('/api/v1/data/statement?limit=100').set('X-API-Key', t.key).expect(200)).body.items as {
      type: string;
      balance_effect_tokens: number;
    }[];
    expect(items.filter((i) => i.type === 'lease_return').map((i) => i.balance_effect_tokens)).toEqual([BLOCK - 2]);
    expect(items.reduce((sum, i) => sum + i.balance_effect_tokens, 0)).toBe(balance.balance_tokens);
  }, 120_000);

  it('releases a lease that a top-up replaced, and the new lease admits', async () => {
    const t = await newTenant(100);
    const old = await leaseReady(t);
    const id = await submit(t, '/page?o1');
    expect(await leasedIds([id])).toEqual([id]);
    expect(await eventually(() => detail(t, id), ended, 30_000, 200)).toMatchObject({ token_state: 'settled' });
    // The old lease stops admitting on both sides; the next submission finds no room in the slot
    // and its top-up replaces the lease, writing the old one down for release.
    await ledgerDb(`UPDATE leases SET admit_until = now() - interval '5 seconds' WHERE id = $1`, [old.lease_id]);
    await orch(`UPDATE tenant_leases SET admit_until = now() - interval '5 seconds' WHERE tenant_id = $1 AND slot = 0`, [t.id]);
    await submit(t, '/page?o2');
    const fresh = await eventually(
      () => slot(t),
      (x) => !!x && x.lease_id !== old.lease_id && x.pending_n === null && Number(x.granted) > 0,
      30_000,
      100,
    );
    // The old lease held 1 (one request): 7 of its 8 back, released, not left to its return_after.
    expect(
      await eventually(
        () => leaseSums(old.lease_id!),
        (x) => x.returned !== '0',
        30_000,
        200,
      ),
    ).toMatchObject({ granted: String(BLOCK), used: '1', returned: String(BLOCK - 1), rest: '0', state: 'open' });
    const next = await submit(t, '/page?o3');
    expect(await leasedIds([next])).toEqual([next]);
    expect((await orch<{ lease_id: string }>('SELECT lease_id::text FROM data_requests WHERE id = $1', [next]))[0]!.lease_id).toBe(
      fresh!.lease_id,
    );
  }, 120_000);

  it('leaves a guarded plan, and requests with a ceiling, to the synchronous reserve', async () => {
    const t = await newTenant(500);
    await adminCommand(fleet, ['set-plan', '--tenant', t.id, '--plan', 'business'], 'billing-ledger');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await gateway()
        .post('/api/v1/data/requests')
        .set('X-API-Key', t.key)
        .send({ url: `${site.url}/page?g=${i}`, mode: 'http' });
      expect(res.status).toBe(202);
      expect(res.body.quote).toMatchObject({ policy: 'guarded' });
      ids.push(res.body.id as string);
    }
    const standard = await newTenant(100);
    await leaseReady(standard);
    const capped = await gateway()
      .post('/api/v1/data/requests')
      .set('X-API-Key', standard.key)
      .send({ url: `${site.url}/page?capped`, mode: 'http', max_credits_per_request: 5 });
    expect(capped.status).toBe(202);
    ids.push(capped.body.id as string);
    expect(await leasedIds(ids)).toEqual([]);
    expect(await ledgerDb('SELECT id FROM leases WHERE tenant_id = $1', [t.id])).toEqual([]);
    for (const id of ids.slice(0, 3))
      expect(await eventually(() => detail(t, id), ended, 30_000, 200)).toMatchObject({ status: 'completed' });
  }, 120_000);
});

describe('balance alerts', () => {
  it("reach the tenant's webhook endpoint once per dip, leased tokens counted as spent", async () => {
    // The ledger announces on billing.alerts, the dispatcher reads it: producer and consumer of the
    // same topic, end to end (a unit test of either side sees only its own half).
    const receiver = await startWebhookReceiver();
    const { bodies } = receiver;
    try {
      // Standard plan: low under 100 tokens. 110 credits; each lease block takes 8 from the balance.
      const t = await newTenant(110);
      const cabinet = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t.id]))['cabinet_token'] as string;
      const { projectId, environmentId } = await cabinetEnvironment(fleet.url('gateway'), cabinet, 'Alerts');
      const hook = await gateway()
        .post(`/api/v1/client/browser/projects/${projectId}/environments/${environmentId}/webhooks`)
        .set('Authorization', `Bearer ${cabinet}`)
        .send({ url: `${receiver.url}/hooks/alerts`, event_types: ['billing.balance_low'] });
      expect(hook.status).toBe(201);
      // Two blocks leased: 110 - 16 = 94 available, under the threshold.
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await submit(t, `/page?alert=${i}`));
      for (const id of ids) await eventually(() => detail(t, id), ended, 30_000, 100);
      const alerts = await eventually(
        async () => bodies.filter((b) => b.type === 'billing.balance_low'),
        (xs) => xs.length >= 1,
        30_000,
        100,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // nothing more comes
      expect(bodies.filter((b) => b.type === 'billing.balance_low')).toHaveLength(1);
      expect(alerts[0]!.data).toMatchObject({ threshold_tokens: 100 });
      expect(Number(alerts[0]!.data['balance_tokens'])).toBeLessThan(100);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});

describe('crash safety', () => {
  it('an orchestrator SIGKILLed holding a lease: after restart granted = used + returned + held, nothing charged twice', async () => {
    const t = await newTenant(100);
    const s = await leaseReady(t);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await submit(t, `/slow?ms=1500&lease=${i}`));
    expect((await leasedIds(ids)).length).toBe(4);
    await fleet.kill('fetch-orchestrator', 'SIGKILL');
    await fleet.start('fetch-orchestrator');
    for (const id of ids)
      expect(await eventually(() => detail(t, id), ended, 60_000, 250)).toMatchObject({ status: 'completed', token_state: 'settled' });

    const sums = await leaseSums(s.lease_id!);
    const after = await slot(t);
    // The slot holds what its requests took; the ledger used exactly that, once each.
    expect(Number(sums.granted)).toBe(Number(after!.granted));
    expect(Number(sums.granted)).toBe(Number(sums.used) + Number(sums.returned) + Number(sums.rest));
    expect(Number(sums.used)).toBe(Number(after!.held));
    expect(Number(sums.used)).toBe(4);
    const uses = await ledgerDb<{ request_id: string; n: number }>(
      `SELECT request_id::text, count(*)::int AS n FROM transfers WHERE request_id = ANY($1::uuid[]) GROUP BY request_id`,
      [ids],
    );
    expect(uses.map((u) => u.n)).toEqual([1, 1, 1, 1]);
    const balance = (await ledgerApi().get(`/internal/v1/accounts/${t.id}/balance`).expect(200)).body;
    // 100 - the warm-up's 1 - what the lease holds (granted, of which 4 were used).
    expect(balance.balance_tokens + balance.reserved_tokens).toBe(100 - 1 - 4);
  }, 180_000);

  it('a ledger SIGKILLed during a top-up, the grant committed and its answer lost: the retry replays it, one grant', async () => {
    const t = await newTenant(100);
    const s = await leaseReady(t);
    const leaseId = s.lease_id!;
    // Hold the tenant's account at the ledger: the next top-up's grant waits on it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = withDatabase(fleet.databases['billing-ledger'].url, async (c) => {
      await c.query('BEGIN');
      await c.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [`tenant:${t.id}`]);
      locked();
      await released;
      await c.query('COMMIT');
    });
    await lockTaken;
    try {
      // Leased admissions take the slot under its low-water mark (8 / 4): a top-up (n = 2) is asked.
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push(await submit(t, `/page?topup=${i}`));
      await eventually(
        () => slot(t),
        (x) => x?.pending_n === 2,
        20_000,
        50,
      );
      await eventually(
        () =>
          ledgerDb<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          ),
        (r) => r[0]!.n >= 1,
        20_000,
        50,
      );
      // The answer is lost: the orchestrator's connection is cut while the ledger still works on it.
      ledgerPath.cut();
      release();
      await holder;
      await eventually(
        () => ledgerDb<{ id: string }>('SELECT id FROM transfers WHERE id = $1', [`lease:${leaseId}:grant:2`]),
        (r) => r.length === 1,
        20_000,
        20,
      );
      await fleet.kill('billing-ledger', 'SIGKILL');
      expect((await slot(t))!.pending_n).toBe(2);
      expect(Number((await slot(t))!.granted)).toBe(BLOCK);
      ledgerPath.restore();
      await fleet.start('billing-ledger');
      // The next admission finds the slot low and asks again: the same (lease_id, 2), replayed.
      ids.push(await submit(t, '/page?after'));
      const credited = await eventually(
        () => slot(t),
        (x) => x?.pending_n === null && x.n === 2,
        30_000,
        100,
      );
      const grants = await ledgerDb<{ id: string; amount: string }>(`SELECT id, amount::text FROM transfers WHERE id LIKE $1 ORDER BY id`, [
        `lease:${leaseId}:grant:%`,
      ]);
      expect(grants.map((g) => g.id)).toEqual([`lease:${leaseId}:grant:1`, `lease:${leaseId}:grant:2`]);
      expect(Number(credited!.granted)).toBe(grants.reduce((sum, g) => sum + Number(g.amount), 0));
      for (const id of ids) await eventually(() => detail(t, id), ended, 60_000, 250);
      const sums = await leaseSums(leaseId);
      expect(Number(sums.granted)).toBe(Number(credited!.granted));
      expect(Number(sums.granted)).toBe(Number(sums.used) + Number(sums.returned) + Number(sums.rest));
    } finally {
      ledgerPath.restore();
      release();
      await holder.catch(() => undefined);
    }
  }, 180_000);
});
