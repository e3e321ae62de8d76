import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Envelope } from '@wdr/contracts';
import { createLogger } from '@wdr/kit/log';
import { withDatabase } from '@wdr/testkit';
import { returnExpiredLeases } from '../src/domain/leases.js';
import type { SettlementCommand } from '../src/domain/settlement.js';
import {
  balance,
  HEALTHY,
  invariants,
  newTenant,
  operatorMovement,
  sendAndWait,
  settlementEnvelope,
  startLedger,
  type LedgerHarness,
} from './support.js';

/**
 * Model-based property test: random sequences of reserve / batch / settle / refund / top-up,
 * credit lease grant / use / return, and replays of each run against the real ledger (HTTP in-process, settlement over the real Kafka,
 * the real Postgres). A small model predicts every answer and balance from an independent
 * statement of the price list and the settlement rule; after every step the ledger's invariants
 * are checked: sums zero, no overdraft, each hold resolved at most once, holds match reservations.
 */
let h: LedgerHarness;
/** The ledger's LEASE_MAX_BALANCE_PERCENT in this test, as a fraction. */
const LEASE_SHARE = 0.5;

beforeAll(async () => {
  // Half the available balance at most per grant, so the model's grants meet the cap.
  h = await startLedger({ LEASE_MAX_BALANCE_PERCENT: String(LEASE_SHARE * 100) });
}, 60_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

// ---------------------------------------------------------------------------------------- the model
type Cls = 'datacenter' | 'residential' | 'premium';
type Mode = 'direct' | 'auto' | 'browser' | 'http' | 'residential' | 'residential_browser';
const GIB = 2 ** 30;
const MIB = 2 ** 20;
/** Pricing version 2 as published: standard prices; the business plan adds premium. */
const PRICES: Record<Cls, { http: number; browser: number; traffic: number } | undefined> = {
  datacenter: { http: 1, browser: 5, traffic: 200 },
  residential: { http: 10, browser: 25, traffic: 2000 },
  premium: { http: 50, browser: 125, traffic: 5000 },
};
const CAPTCHA = 10;
const ALLOWANCE = { captcha: 1, trafficBytes: 10 * MIB };

interface TenantModel {
  id: string;
  guarded: boolean;
  available: number;
  reserved: number;
}

interface ReservationModel {
  body: { request_id: string; tenant_id: string; route_mode: Mode; proxy_type: Cls | null; max_credits: number | null };
  tenant: number;
  cls: Cls;
  hold: number;
  state: 'reserved' | 'settled' | 'refunded';
}

/** A credit lease: granted = used + returned + rest. */
interface LeaseModel {
  id: string;
  tenant: number;
  n: number;
  grants: { n: number; amount: number }[];
  granted: number;
  used: number;
  returned: number;
  open: boolean;
}

interface Model {
  tenants: TenantModel[];
  reservations: ReservationModel[];
  topUps: { tenant: number; reference: string; amount: number }[];
  sent: { tenant: number; envelope: Envelope }[];
  leases: LeaseModel[];
}

const rest = (l: LeaseModel) => l.granted - l.used - l.returned;

const priceOf = (m: TenantModel, cls: Cls) => (cls === 'premium' && !m.guarded ? undefined : PRICES[cls]);
const classOf = (mode: Mode, proxy: Cls | null): Cls =>
  mode === 'residential' || mode === 'residential_browser' ? 'residential' : (proxy ?? 'datacenter');
const stagesOf = (mode: Mode): ('http' | 'browser')[] =>
  mode === 'browser' || mode === 'residential_browser' ? ['browser'] : mode === 'auto' ? ['http', 'browser'] : ['http'];
const traffic = (bytes: number, perGib: number) => (bytes <= 0 ? 0 : Math.ceil((bytes * perGib) / GIB));

/** What admission should answer: a status, and the hold when admitted. */
function admission(t: TenantModel, body: ReservationModel['body']): { status: number; hold?: number; cls: Cls } {
  const cls = classOf(body.route_mode, body.proxy_type);
  const p = priceOf(t, cls);
  if (!p) return { status: 422, cls };
  const stagePrices = stagesOf(body.route_mode).map((s) => p[s]);
  const min = Math.min(...stagePrices);
  const max = Math.max(...stagePrices);
  const ceiling = body.max_credits;
  if (ceiling !== null && ceiling < min) return { status: 422, cls };
  const cap = (n: number) => (ceiling === null ? n : Math.min(n, ceiling));
  const hold = t.guarded ? cap(max + ALLOWANCE.captcha * CAPTCHA + traffic(ALLOWANCE.trafficBytes, p.traffic)) : cap(max);
  return { status: t.available >= hold ? 201 : 402, hold, cls };
}

/** The settlement rule, restated: charged lines capped at the ceiling, from the holds first, then what the balance has. */
function applySettlement(m: Model, r: ReservationModel, cmd: SettlementCommand): void {
  if (r.state !== 'reserved') return;
  const t = m.tenants[r.tenant]!;
  const p = priceOf(t, r.cls)!;
  const charged = cmd.outcome === 'completed' || cmd.reason === 'budget_exhausted';
  let total = 0;
  if (charged) {
    const stage = r.body.route_mode === 'auto' ? (cmd.terminal_stage ?? 'http') : stagesOf(r.body.route_mode)[0]!;
    const bytes = cmd.traffic?.measured ? cmd.traffic.request_bytes + cmd.traffic.response_bytes : 0;
    total = p[stage] + (cmd.captcha_solves ?? 0) * CAPTCHA + (cmd.traffic ? traffic(bytes, p.traffic) : 0);
    if (r.body.max_credits !== null) total = Math.min(total, r.body.max_credits);
  }
  const fromHold = Math.min(total, r.hold);
  t.reserved -= r.hold;
  t.available += r.hold - fromHold;
  const take = Math.min(total - fromHold, Math.max(0, t.available));
  t.available -= take;
  r.state = charged ? 'settled' : 'refunded';
}

// ----------------------------------------------------------------------------------------- commands
type Real = LedgerHarness;
type Cmd = fc.AsyncCommand<Model, Real>;

async function checkInvariants(m: Model, r: Real) {
  expect(await invariants(r.database.url)).toEqual(HEALTHY);
  for (const [i, t] of m.tenants.entries()) {
    // Tokens on open leases show as reserved.
    const leased = m.leases.filter((l) => l.tenant === i && l.open).reduce((s, l) => s + rest(l), 0);
    expect(await balance(r, t.id)).toEqual({ balance_tokens: t.available, reserved_tokens: t.reserved + leased });
  }
}

class TopUp implements Cmd {
  constructor(
    readonly tenant: number,
    readonly amount: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const t = m.tenants[this.tenant]!;
    const reference = randomUUID();
    expect((await operatorMovement(r.deps.db, 'top_up', t.id, { amount: this.amount, reference })).status).toBe(201);
    t.available += this.amount;
    m.topUps.push({ tenant: this.tenant, reference, amount: this.amount });
    await checkInvariants(m, r);
  }
  toString = () => `TopUp(${this.tenant}, ${this.amount})`;
}

class ReplayTopUp implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.topUps.length > 0;
  async run(m: Model, r: Real) {
    const u = m.topUps[this.pick % m.topUps.length]!;
    const res = await operatorMovement(r.deps.db, 'top_up', m.tenants[u.tenant]!.id, { amount: u.amount, reference: u.reference });
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(false);
    await checkInvariants(m, r);
  }
  toString = () => `ReplayTopUp(${this.pick})`;
}

class Reserve implements Cmd {
  constructor(
    readonly tenant: number,
    readonly mode: Mode,
    readonly proxy: Cls | null,
    readonly maxCredits: number | null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const t = m.tenants[this.tenant]!;
    const body = { request_id: randomUUID(), tenant_id: t.id, route_mode: this.mode, proxy_type: this.proxy, max_credits: this.maxCredits };
    const expected = admission(t, body);
    const res = await r.api().post('/internal/v1/reservations').send(body);
    expect(res.status).toBe(expected.status);
    if (res.status === 201) {
      expect(res.body.held_tokens).toBe(expected.hold);
      expect(res.body.quote === null).toBe(!t.guarded);
      t.available -= expected.hold!;
      t.reserved += expected.hold!;
      m.reservations.push({ body, tenant: this.tenant, cls: expected.cls, hold: expected.hold!, state: 'reserved' });
    }
    await checkInvariants(m, r);
  }
  toString = () => `Reserve(${this.tenant}, ${this.mode}, ${this.proxy}, ${this.maxCredits})`;
}

class ReserveBatch implements Cmd {
  constructor(
    readonly tenant: number,
    readonly modes: Mode[],
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const t = m.tenants[this.tenant]!;
    const bodies = this.modes.map((mode) => ({
      request_id: randomUUID(),
      tenant_id: t.id,
      route_mode: mode,
      proxy_type: null,
      max_credits: null,
    }));
    const admissions = bodies.map((b) => admission({ ...t, available: Number.MAX_SAFE_INTEGER }, b));
    const sum = admissions.reduce((s, a) => s + a.hold!, 0);
    const res = await r
      .api()
      .post('/internal/v1/reservations/batch')
      .send({ tenant_id: t.id, items: bodies.map(({ tenant_id: _t, ...item }) => item) });
    expect(res.status).toBe(t.available >= sum ? 201 : 402);
    if (res.status === 201) {
      t.available -= sum;
      t.reserved += sum;
      bodies.forEach((body, i) =>
        m.reservations.push({ body, tenant: this.tenant, cls: admissions[i]!.cls, hold: admissions[i]!.hold!, state: 'reserved' }),
      );
    }
    await checkInvariants(m, r);
  }
  toString = () => `ReserveBatch(${this.tenant}, [${this.modes.join(',')}])`;
}

class ReplayReserve implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.reservations.length > 0;
  async run(m: Model, r: Real) {
    const rm = m.reservations[this.pick % m.reservations.length]!;
    const res = await r.api().post('/internal/v1/reservations').send(rm.body).expect(200);
    expect(res.body).toMatchObject({ replay: true, charged_tokens: 0, token_state: rm.state });
    await checkInvariants(m, r);
  }
  toString = () => `ReplayReserve(${this.pick})`;
}

class Settle implements Cmd {
  constructor(
    readonly pick: number,
    readonly outcome: SettlementCommand['outcome'],
    readonly budgetExhausted: boolean,
    readonly captchaSolves: number,
    readonly trafficBytes: number | null,
    readonly measured: boolean,
    readonly stage: 'http' | 'browser',
  ) {}
  check = (m: Readonly<Model>) => m.reservations.length > 0;
  async run(m: Model, r: Real) {
    const rm = m.reservations[this.pick % m.reservations.length]!;
    const cmd: SettlementCommand = {
      request_id: rm.body.request_id,
      outcome: this.outcome,
      route_mode: rm.body.route_mode,
      captcha_tokens: 0,
      captcha_solves: this.captchaSolves,
      ...(this.outcome === 'failed' && this.budgetExhausted ? { reason: 'budget_exhausted' as const } : {}),
      ...(rm.body.route_mode === 'auto' ? { terminal_stage: this.stage } : {}),
      ...(this.trafficBytes === null
        ? {}
        : {
            traffic: {
              proxy_type: rm.cls,
              measured: this.measured,
              request_bytes: Math.floor(this.trafficBytes / 4),
              response_bytes: this.trafficBytes - Math.floor(this.trafficBytes / 4),
            },
          }),
    };
    const envelope = settlementEnvelope(rm.body.tenant_id, cmd);
    await sendAndWait(r, [envelope]);
    applySettlement(m, rm, cmd);
    m.sent.push({ tenant: rm.tenant, envelope });
    await checkInvariants(m, r);
  }
  toString = () =>
    `Settle(${this.pick}, ${this.outcome}${this.budgetExhausted ? '/budget' : ''}, captcha ${this.captchaSolves}, traffic ${this.trafficBytes}${this.measured ? '' : ' unmeasured'}, ${this.stage})`;
}

class ReplaySettle implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.sent.length > 0;
  async run(m: Model, r: Real) {
    // The very same envelope again (a redelivery), then a fresh command for the same, resolved,
    // request on the same partition: once that one is processed, so is the redelivery.
    const { envelope } = m.sent[this.pick % m.sent.length]!;
    const requestId = (envelope.data as { request_id: string }).request_id;
    await r.deps.bus.send(r.deps.bus.topic('billingCommands'), [{ key: requestId, envelope }]);
    await sendAndWait(r, [
      settlementEnvelope(envelope.tenant_id, {
        request_id: requestId,
        outcome: 'completed',
        route_mode: 'http',
        captcha_tokens: 0,
        captcha_solves: 2,
      }),
    ]);
    await checkInvariants(m, r);
  }
  toString = () => `ReplaySettle(${this.pick})`;
}

/** The hold of a standard-policy request without a ceiling: the dearest stage its mode can end in. */
const standardHold = (mode: Mode) => {
  const p = PRICES[classOf(mode, null)]!;
  return Math.max(...stagesOf(mode).map((s) => p[s]));
};

class GrantLease implements Cmd {
  constructor(
    readonly tenant: number,
    readonly pick: number | null,
    readonly block: number,
    readonly mode: Mode,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const t = m.tenants[this.tenant]!;
    const mine = m.leases.filter((l) => l.tenant === this.tenant);
    const lease: LeaseModel =
      this.pick === null || mine.length === 0
        ? { id: randomUUID(), tenant: this.tenant, n: 0, grants: [], granted: 0, used: 0, returned: 0, open: true }
        : mine[this.pick % mine.length]!;
    const n = lease.n + 1;
    const res = await r
      .api()
      .post('/internal/v1/leases')
      .send({ tenant_id: t.id, lease_id: lease.id, n, block_tokens: this.block, route_mode: this.mode, proxy_type: null });
    if (t.guarded || (lease.n > 0 && !lease.open)) {
      // Leases serve the standard policy only; a returned lease grows no more.
      expect(res.status).toBe(201);
      expect(res.body.granted_tokens).toBe(0);
    } else {
      // min(block, the share of what is available); refused when it cannot cover the request's hold.
      const amount = Math.min(this.block, Math.floor(t.available * LEASE_SHARE));
      const refused = amount < standardHold(this.mode) || amount <= 0;
      expect(res.status).toBe(refused ? 402 : 201);
      if (!refused) {
        expect(res.body.granted_tokens).toBe(amount);
        t.available -= amount;
        lease.granted += amount;
        lease.n = n;
        lease.grants.push({ n, amount });
        if (n === 1) m.leases.push(lease);
      }
    }
    await checkInvariants(m, r);
  }
  toString = () => `GrantLease(${this.tenant}, ${this.pick}, ${this.block}, ${this.mode})`;
}

class ReplayGrant implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.leases.length > 0;
  async run(m: Model, r: Real) {
    const lease = m.leases[this.pick % m.leases.length]!;
    const g = lease.grants[this.pick % lease.grants.length]!;
    const t = m.tenants[lease.tenant]!;
    const res = await r
      .api()
      .post('/internal/v1/leases')
      .send({ tenant_id: t.id, lease_id: lease.id, n: g.n, block_tokens: 1 + (this.pick % 100), route_mode: 'http', proxy_type: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ granted_tokens: g.amount, lease_granted_tokens: lease.granted, replay: true });
    await checkInvariants(m, r);
  }
  toString = () => `ReplayGrant(${this.pick})`;
}

/** Settlement of a request admitted from a lease (command version 2): from the lease up to its hold, the rest deferred. */
class UseLease implements Cmd {
  constructor(
    readonly pick: number,
    readonly mode: Mode,
    readonly outcome: SettlementCommand['outcome'],
    readonly captchaSolves: number,
    readonly stage: 'http' | 'browser',
  ) {}
  check = (m: Readonly<Model>) => m.leases.length > 0;
  async run(m: Model, r: Real) {
    const lease = m.leases[this.pick % m.leases.length]!;
    const t = m.tenants[lease.tenant]!;
    const cls = classOf(this.mode, null);
    const held = standardHold(this.mode);
    const cmd: SettlementCommand = {
      request_id: randomUUID(),
      outcome: this.outcome,
      route_mode: this.mode,
      captcha_tokens: 0,
      captcha_solves: this.captchaSolves,
      ...(this.mode === 'auto' ? { terminal_stage: this.stage } : {}),
      lease: { id: lease.id, pricing_version: 2, plan_id: 'standard', network_class: cls, held_tokens: held },
    };
    await sendAndWait(r, [settlementEnvelope(t.id, cmd)]);
    if (this.outcome === 'completed') {
      const stage = this.mode === 'auto' ? this.stage : stagesOf(this.mode)[0]!;
      const total = PRICES[cls]![stage] + this.captchaSolves * CAPTCHA;
      const fromLease = Math.min(total, held, lease.open ? rest(lease) : 0);
      lease.used += fromLease;
      t.available -= Math.min(total - fromLease, Math.max(0, t.available));
    }
    await checkInvariants(m, r);
  }
  toString = () => `UseLease(${this.pick}, ${this.mode}, ${this.outcome}, captcha ${this.captchaSolves}, ${this.stage})`;
}

const silent = createLogger('test', 'silent');

/** The lease's return is due: the sweep gives back exactly what no settlement took, once. */
class ReturnLease implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.leases.length > 0;
  async run(m: Model, r: Real) {
    const lease = m.leases[this.pick % m.leases.length]!;
    await withDatabase(r.database.url, (c) => c.query(`UPDATE leases SET return_after = now() WHERE id = $1`, [lease.id]));
    await returnExpiredLeases(r.deps.db, silent);
    if (lease.open) {
      m.tenants[lease.tenant]!.available += rest(lease);
      lease.returned += rest(lease);
      lease.open = false;
    }
    await checkInvariants(m, r);
  }
  toString = () => `ReturnLease(${this.pick})`;
}

const tenantIdx = fc.integer({ min: 0, max: 1 });
const mode = fc.constantFrom<Mode>('direct', 'auto', 'browser', 'http', 'residential', 'residential_browser');
const commands = [
  fc.tuple(tenantIdx, fc.integer({ min: 1, max: 60 })).map(([t, a]) => new TopUp(t, a)),
  fc.nat().map((p) => new ReplayTopUp(p)),
  fc
    .tuple(
      tenantIdx,
      mode,
      fc.constantFrom<Cls | null>(null, 'datacenter', 'residential', 'premium'),
      fc.option(fc.integer({ min: 1, max: 40 }), { nil: null }),
    )
    .map(([t, md, p, c]) => new Reserve(t, md, p, c)),
  fc
    .tuple(tenantIdx, fc.array(fc.constantFrom<Mode>('http', 'browser', 'auto'), { minLength: 1, maxLength: 4 }))
    .map(([t, ms]) => new ReserveBatch(t, ms)),
  fc.nat().map((p) => new ReplayReserve(p)),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom<SettlementCommand['outcome']>('completed', 'completed', 'failed', 'cancelled'),
      fc.boolean(),
      fc.integer({ min: 0, max: 2 }),
      fc.option(fc.integer({ min: 0, max: 40 * MIB }), { nil: null }),
      fc.boolean(),
      fc.constantFrom<'http' | 'browser'>('http', 'browser'),
    )
    .map(([p, o, b, c, t, ms, s]) => new Settle(p, o, b, c, t, ms, s)),
  fc.nat().map((p) => new ReplaySettle(p)),
  fc
    .tuple(tenantIdx, fc.option(fc.nat(), { nil: null }), fc.integer({ min: 1, max: 30 }), fc.constantFrom<Mode>('http', 'auto', 'browser'))
    .map(([t, p, b, md]) => new GrantLease(t, p, b, md)),
  fc.nat().map((p) => new ReplayGrant(p)),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom<Mode>('http', 'auto', 'browser', 'residential'),
      fc.constantFrom<SettlementCommand['outcome']>('completed', 'completed', 'failed'),
      fc.integer({ min: 0, max: 1 }),
      fc.constantFrom<'http' | 'browser'>('http', 'browser'),
    )
    .map(([p, md, o, c, s]) => new UseLease(p, md, o, c, s)),
  fc.nat().map((p) => new ReturnLease(p)),
];

it('keeps every invariant and the model under random reserve / settle / refund / top-up / lease grant, use and return / replay sequences', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.commands(commands, { maxCommands: 16, size: 'large' }),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 200 }),
      async (cmds, standardStart, businessStart) => {
        const tenants: TenantModel[] = [
          { id: await newTenant(h, standardStart), guarded: false, available: standardStart, reserved: 0 },
          { id: await newTenant(h, businessStart, 'business'), guarded: true, available: businessStart, reserved: 0 },
        ];
        await fc.asyncModelRun(() => ({ model: { tenants, reservations: [], topUps: [], sent: [], leases: [] }, real: h }), cmds);
      },
    ),
    { numRuns: 50 },
  );
}, 300_000);
