import type { LedgerStepAnswer } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { RawSql } from '@wdr/kit/db';
import { enqueueMany, makeEnvelope } from '@wdr/kit/kafka';
import type { Prisma, PrismaClient, Reservation } from '../generated/prisma/client.js';
import {
  debit,
  holdResolutions,
  insertTransfers,
  credit,
  REVENUE_ACCOUNT,
  tenantAccountId,
  type Hold,
  type TransferSpec,
} from './accounts.js';
import { applyBalanceAlert, reviewBalanceAlert } from './balance-alerts.js';
import {
  captchaPrice,
  costOf,
  priceBookWith,
  priceOf,
  terminalStageOf,
  trafficPricePerGib,
  trafficTokens,
  type NetworkClass,
  type PriceBook,
  type Stage,
  type Tariff,
  loadPriceBook,
} from './pricing.js';
import { leaseAccountId, useTransferId } from './leases.js';

type Tx = Prisma.TransactionClient;

export interface SettlementCommand {
  request_id: string;
  outcome: 'completed' | 'failed' | 'cancelled';
  route_mode: string;
  captcha_tokens: number;
  reason?: 'budget_exhausted' | undefined;
  terminal_stage?: Stage | undefined;
  captcha_solves?: number | undefined;
  traffic?:
    | {
        proxy_type: NetworkClass;
        measured: boolean;
        request_bytes: number;
        response_bytes: number;
      }
    | undefined;
  /** Admitted from a credit lease (command version 2): no reservation exists; these are its admission facts. */
  lease?: LeaseFacts | undefined;
}

export interface LeaseFacts {
  id: string;
  pricing_version: number;
  plan_id: string;
  network_class: NetworkClass;
  held_tokens: number;
}

/** What a settlement moved, filled in by settle() for metrics counted after commit. */
export interface SettlementFlows {
  /** Tokens charged: posted from the holds plus deferred items taken from the balance. */
  charged: number;
  /** Held tokens released back to the tenant. */
  released: number;
}

interface Locked {
  r: Reservation;
  overrides: [string, Tariff, number][];
  holds: Hold[];
  /** A request admitted from a lease: its price book (the lease's plan and version) and the lease. */
  book?: PriceBook;
  lease?: LockedLease;
}

const LOCK_COLUMNS = `r.request_id, r.tenant_id, r.transfer_id, r.amount, r.held_tokens, r.route_mode, r.proxy_type, r.pricing_version, r.plan_id, r.policy,
            r.max_credits, r.state,
            COALESCE((SELECT json_agg(json_build_array(pp.network_class, pp.tariff, pp.tokens)) FROM plan_prices pp
                       WHERE pp.plan_id = r.plan_id AND pp.pricing_version = r.pricing_version), '[]'::json) AS overrides,
            COALESCE((SELECT json_agg(json_build_array(t.id, t.amount::text, t.credit_account_id) ORDER BY t.created_at, t.id) FROM transfers t
                       WHERE t.request_id = r.request_id AND t.kind = 'pending' AND t.debit_account_id = 'tenant:' || r.tenant_id::text), '[]'::json) AS holds`;

function lockedOf(row: Record<string, unknown> & { overrides: unknown; holds: unknown }): Locked {
  const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
  const big = (v: unknown) => (v === null || v === undefined ? null : BigInt(v as bigint));
  const r = {
    requestId: row['request_id'] as string,
    tenantId: row['tenant_id'] as string,
    transferId: row['transfer_id'] as string,
    amount: big(row['amount'])!,
    heldTokens: big(row['held_tokens'])!,
    routeMode: row['route_mode'] as string,
    proxyType: row['proxy_type'] as string,
    pricingVersion: row['pricing_version'] as number,
    planId: row['plan_id'] as string,
    policy: row['policy'] as string,
    maxCredits: row['max_credits'] as number | null,
    state: row['state'] as string,
  } as Reservation;
  const accountId = tenantAccountId(r.tenantId);
  const holds = json<[string, string, string][]>(row.holds).map(([id, amount, creditAccountId]) => ({
    id,
    amount: BigInt(amount),
    debitAccountId: accountId,
    creditAccountId,
    requestId: r.requestId,
  }));
  return { r, overrides: json(row.overrides), holds };
}

/**
 * Lock a reservation for the rest of the transaction (settlement and step holds serialise on it),
 * and read with it its plan's price overrides and its open holds: one round trip.
 */
async function lockReservation(tx: Tx, requestId: string): Promise<Locked | null> {
  const rows = await tx.$queryRawUnsafe<(Record<string, unknown> & { overrides: unknown; holds: unknown })[]>(
    `SELECT ${LOCK_COLUMNS} FROM reservations r WHERE r.request_id = $1::uuid FOR UPDATE OF r`,
    requestId,
  );
  return rows[0] ? lockedOf(rows[0]) : null;
}

/** Lock many reservations at once, in request id order (two batches lock in the same order), by request id. */
async function lockReservations(tx: RawSql, requestIds: string[]): Promise<Map<string, Locked>> {
  const rows = await tx.$queryRawUnsafe<(Record<string, unknown> & { overrides: unknown; holds: unknown })[]>(
    `SELECT ${LOCK_COLUMNS} FROM reservations r WHERE r.request_id = ANY($1::uuid[]) ORDER BY r.request_id FOR UPDATE OF r`,
    requestIds,
  );
  return new Map(rows.map((row) => [(row['request_id'] as string).toLowerCase(), lockedOf(row)]));
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** A lease of the batch, locked: what it still has (`rest`) and what the batch takes from it (`used`). */
interface LockedLease {
  id: string;
  tenantId: string;
  state: string;
  rest: bigint;
  used: bigint;
}

/**
 * The commands of a batch admitted from a lease and not yet resolved (no reservation row): lock
 * their leases (id order, after the reservations, before the tenants' accounts: the order grants
 * and returns take too) and make each a reservation to resolve, from the command's admission facts.
 * Its row is inserted by recordLeased(), then resolved with the rest. A lease unknown here throws
 * (the batch rolls back), as a missing reservation does.
 */
async function leasedReservations(tx: RawSql, cmds: SettlementCommand[], locked: Map<string, Locked>): Promise<Map<string, LockedLease>> {
  const todo = cmds.filter((c) => c.lease && !locked.has(c.request_id.toLowerCase()));
  const leases = new Map<string, LockedLease>();
  if (todo.length === 0) return leases;
  const rows = await tx.$queryRawUnsafe<{ id: string; tenant_id: string; state: string; rest: bigint }[]>(
    `SELECT id::text, tenant_id::text, state, granted - used - returned AS rest FROM leases WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
    [...new Set(todo.map((c) => c.lease!.id.toLowerCase()))],
  );
  for (const row of rows) leases.set(row.id, { id: row.id, tenantId: row.tenant_id, state: row.state, rest: BigInt(row.rest), used: 0n });
  const books = new Map<string, PriceBook>();
  for (const cmd of todo) {
    const f = cmd.lease!;
    const lease = leases.get(f.id.toLowerCase());
    if (!lease) throw new Error(`no lease ${f.id} for request ${cmd.request_id}`);
    const bookKey = `${f.plan_id}:${f.pricing_version}`;
    let book = books.get(bookKey);
    if (!book) books.set(bookKey, (book = await loadPriceBook(tx, f.plan_id, f.pricing_version)));
    const r = {
      requestId: cmd.request_id.toLowerCase(),
      tenantId: lease.tenantId,
      transferId: useTransferId(cmd.request_id.toLowerCase()),
      amount: BigInt(f.held_tokens),
      heldTokens: BigInt(f.held_tokens),
      routeMode: cmd.route_mode,
      proxyType: f.network_class,
      pricingVersion: f.pricing_version,
      planId: f.plan_id,
      policy: 'standard',
      maxCredits: null,
      state: 'reserved',
    } as Reservation;
    locked.set(cmd.request_id.toLowerCase(), { r, overrides: [], holds: [], book, lease });
  }
  return leases;
}

/** The reservation rows of the batch's leased requests, and what the batch took from each lease. */
async function recordLeased(tx: RawSql, leases: Map<string, LockedLease>, rows: Reservation[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRawUnsafe(
    `INSERT INTO reservations (request_id, tenant_id, transfer_id, amount, held_tokens, route_mode, proxy_type, pricing_version, plan_id, policy, state)
     SELECT u.request_id, u.tenant_id, u.transfer_id, u.amount, u.amount, u.route_mode, u.proxy_type, u.pricing_version, u.plan_id, 'standard', 'reserved'
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::int[], $8::text[])
            AS u(request_id, tenant_id, transfer_id, amount, route_mode, proxy_type, pricing_version, plan_id)`,
    rows.map((r) => r.requestId),
    rows.map((r) => r.tenantId),
    rows.map((r) => r.transferId),
    rows.map((r) => r.amount.toString()),
    rows.map((r) => r.routeMode),
    rows.map((r) => r.proxyType),
    rows.map((r) => r.pricingVersion),
    rows.map((r) => r.planId),
  );
  const used = [...leases.values()].filter((l) => l.used > 0n);
  if (used.length > 0) {
    await tx.$executeRawUnsafe(
      `UPDATE leases l SET used = l.used + u.used FROM unnest($1::uuid[], $2::bigint[]) AS u(id, used) WHERE l.id = u.id`,
      used.map((l) => l.id),
      used.map((l) => l.used.toString()),
    );
  }
}

/** Base of the terminal stage, in the admitted network class; a price gone missing falls back to the admission base. */
function basePrice(book: PriceBook, r: Reservation, cmd: SettlementCommand): bigint {
  let stage = cmd.terminal_stage;
  if (stage === undefined && r.routeMode === 'auto' && (cmd.route_mode === 'http' || cmd.route_mode === 'browser')) stage = cmd.route_mode;
  return BigInt(priceOf(book, r.proxyType, terminalStageOf(r.routeMode, stage)) ?? Number(r.amount));
}

/** What settling one command came to: its outcome and, for a resolution, the tokens it moved. */
export interface SettlementResult {
  outcome: 'settled' | 'refunded' | 'duplicate';
  flows: SettlementFlows;
}

/**
 * Resolve a reservation exactly once, inside the caller's transaction: settleBatch() of one command.
 * Returns what happened (`duplicate` when it was already resolved); `flows`, when given, receives
 * the tokens charged and the held tokens released, for the caller to count once the transaction
 * committed (src/metrics.ts).
 */
export async function settle(tx: Tx, cmd: SettlementCommand, flows?: SettlementFlows): Promise<'settled' | 'refunded' | 'duplicate'> {
  const [result] = await settleBatch(tx, [cmd]);
  if (flows && result!.outcome !== 'duplicate') Object.assign(flows, result!.flows);
  return result!.outcome;
}

/** The per-account sums of a batch's movements. */
interface Deltas {
  debitsPending: bigint;
  debitsPosted: bigint;
  creditsPending: bigint;
  creditsPosted: bigint;
}

/**
 * Resolve many reservations exactly once, in the caller's transaction (the consumer's, which also
 * records the commands as processed), in a fixed number of statements whatever the batch's size:
 * lock the reservations (request id order) and the tenants' accounts (account id order), insert
 * every resolution transfer, move every tenant's balance, mark the reservations, review the balance
 * alerts, write the outbox events, and move the revenue account last (the hottest row, held for the
 * shortest time). The result for each command is what settling them one by one, in order, gives;
 * a command for a request already resolved (before, or earlier in the batch) is `duplicate`. A
 * command without a reservation throws: the whole batch rolls back.
 *
 * The rule: a `completed` request, and one stopped at its ceiling (`budget_exhausted`, the
 * tenant's own limit), is charged base of its terminal stage + CAPTCHA solves + measured proxy
 * traffic, never more than max_credits_per_request. A `failed` or `cancelled` request is refunded
 * in full: the tenant pays nothing for a failure it did not cause. The charge is posted from the
 * request's holds and the rest released; a charge above the holds (deferred items) is debited from
 * the balance as far as it goes (the balance after every release of the batch), and what it cannot
 * cover is recorded as uncollected, never overdrawn.
 *
 * `requestIds[i]`, when given, is the request id command i's outbox event carries (its message's).
 */
export async function settleBatch(tx: RawSql, cmds: SettlementCommand[], requestIds?: (string | undefined)[]): Promise<SettlementResult[]> {
  const keyOf = (cmd: SettlementCommand) => cmd.request_id.toLowerCase();
  const locked = await lockReservations(tx, [...new Set(cmds.map(keyOf))]);
  const leased = await leasedReservations(tx, cmds, locked);
  const results: SettlementResult[] = [];
  const transfers: (TransferSpec & { kind: string })[] = [];
  const deltas = new Map<string, Deltas>();
  const delta = (accountId: string) => {
    let d = deltas.get(accountId);
    if (!d) deltas.set(accountId, (d = { debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n }));
    return d;
  };
  interface Resolution {
    index: number;
    r: Reservation;
    state: 'settled' | 'refunded';
    cmd: SettlementCommand;
    lines: { base: bigint; captcha: bigint; traffic: bigint; total: bigint };
    fromHolds: bigint;
    held: bigint;
    excessTaken: bigint;
    uncollected: bigint;
    leased?: boolean;
  }
  const resolutions: Resolution[] = [];
  const resolved = new Set<string>();
  for (const [index, cmd] of cmds.entries()) {
    const l = locked.get(keyOf(cmd));
    if (!l) throw new Error(`no reservation for request ${cmd.request_id}`);
    const { r } = l;
    if (r.state !== 'reserved' || resolved.has(keyOf(cmd))) {
      results.push({ outcome: 'duplicate', flows: { charged: 0, released: 0 } });
      continue;
    }
    resolved.add(keyOf(cmd));
    const book = l.book ?? (await priceBookWith(tx, r.planId, r.pricingVersion, l.overrides));
    const charged = cmd.outcome === 'completed' || cmd.reason === 'budget_exhausted';
    const traffic = cmd.traffic;
    const trafficBytes = traffic?.measured ? BigInt(traffic.request_bytes) + BigInt(traffic.response_bytes) : 0n;
    const lines = charged
      ? costOf(
          {
            base: basePrice(book, r, cmd),
            captcha: cmd.captcha_solves === undefined ? BigInt(cmd.captcha_tokens) : BigInt(cmd.captcha_solves * captchaPrice(book)),
            traffic: traffic ? trafficTokens(trafficBytes, trafficPricePerGib(book, traffic.proxy_type)) : 0n,
          },
          r.maxCredits,
        )
      : { base: 0n, captcha: 0n, traffic: 0n, total: 0n };
    const state = charged ? 'settled' : 'refunded';
    const lease = l.lease;
    if (lease) {
      // Admitted from a lease: take up to the request's own hold from it (never more than it still
      // has, nothing once returned); the rest is a deferred charge from the balance, below.
      const rest = lease.state === 'open' ? lease.rest : 0n;
      const fromLease = min(min(lines.total, r.heldTokens), rest);
      lease.rest -= fromLease;
      lease.used += fromLease;
      if (fromLease > 0n) {
        transfers.push({
          id: useTransferId(r.requestId),
          debitAccountId: leaseAccountId(lease.id),
          creditAccountId: REVENUE_ACCOUNT,
          amount: fromLease,
          kind: 'posted',
          code: 'lease_use',
          requestId: r.requestId,
        });
        delta(leaseAccountId(lease.id)).debitsPosted += fromLease;
        delta(REVENUE_ACCOUNT).creditsPosted += fromLease;
      }
      resolutions.push({
        index,
        r,
        state,
        cmd,
        lines,
        fromHolds: fromLease,
        held: fromLease,
        excessTaken: 0n,
        uncollected: 0n,
        leased: true,
      });
      results.push({ outcome: state, flows: { charged: 0, released: 0 } });
      continue;
    }
    // Post up to the total across the holds, in order, and release the rest (holdResolutions).
    const holdMoves = holdResolutions(l.holds, lines.total, charged ? 'settlement' : 'refund');
    const { held, posted: fromHolds } = holdMoves;
    l.holds.forEach((h, i) => {
      const posted = holdMoves.resolutions[i]!.amount;
      const debit = delta(h.debitAccountId);
      debit.debitsPending -= h.amount;
      debit.debitsPosted += posted;
      const credit = delta(h.creditAccountId);
      credit.creditsPending -= h.amount;
      credit.creditsPosted += posted;
    });
    transfers.push(...holdMoves.resolutions);
    resolutions.push({ index, r, state, cmd, lines, fromHolds, held, excessTaken: 0n, uncollected: 0n });
    results.push({ outcome: state, flows: { charged: 0, released: 0 } });
  }
  if (resolutions.length === 0) return results;

  // The tenants' accounts, locked in id order, with what is available before this batch.
  const tenantAccounts = [...new Set(resolutions.map((x) => tenantAccountId(x.r.tenantId)))].sort();
  const before = await tx.$queryRawUnsafe<{ id: string; available: bigint }[]>(
    'SELECT id, credits_posted - debits_posted - debits_pending AS available FROM accounts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
    tenantAccounts,
  );
  // Deferred items beyond the holds: taken from what the balance has once the batch's holds are
  // resolved (a release makes tokens available again), in command order; the rest is uncollected.
  const available = new Map(
    before.map((a) => [a.id, BigInt(a.available) - (deltas.get(a.id)?.debitsPending ?? 0n) - (deltas.get(a.id)?.debitsPosted ?? 0n)]),
  );
  for (const x of resolutions) {
    const excess = x.lines.total - x.fromHolds;
    if (excess <= 0n) continue;
    const accountId = tenantAccountId(x.r.tenantId);
    const room = available.get(accountId) ?? 0n;
    x.excessTaken = room <= 0n ? 0n : room < excess ? room : excess;
    x.uncollected = excess - x.excessTaken;
    if (x.excessTaken === 0n) continue;
    available.set(accountId, room - x.excessTaken);
    transfers.push({
      id: `charge:${x.r.requestId}:deferred`,
      debitAccountId: accountId,
      creditAccountId: REVENUE_ACCOUNT,
      amount: x.excessTaken,
      kind: 'posted',
      code: 'deferred_charge',
      requestId: x.r.requestId,
    });
    delta(accountId).debitsPosted += x.excessTaken;
    delta(REVENUE_ACCOUNT).creditsPosted += x.excessTaken;
  }

  // The batch's writes read nothing the others write: they are sent together, in this order (one
  // round trip on a pipelined connection, kit/pg-sql.ts; one after another on Prisma's), and
  // awaited together. The accounts they lock were locked above, in id order; the revenue account
  // still comes last.
  const inserted =
    transfers.length > 0
      ? tx.$executeRawUnsafe(
          `INSERT INTO transfers (id, debit_account_id, credit_account_id, amount, kind, code, request_id, pending_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::uuid[], $8::text[])`,
          transfers.map((t) => t.id),
          transfers.map((t) => t.debitAccountId),
          transfers.map((t) => t.creditAccountId),
          transfers.map((t) => t.amount.toString()),
          transfers.map((t) => t.kind),
          transfers.map((t) => t.code),
          transfers.map((t) => t.requestId ?? null),
          transfers.map((t) => t.pendingId ?? null),
        )
      : undefined;
  // Tenants' balances in one statement; it answers what the balance alerts need.
  const tenantDeltas = tenantAccounts.map((id) => [id, deltas.get(id)] as const).filter((e): e is readonly [string, Deltas] => !!e[1]);
  const updated = tx.$queryRawUnsafe<{ id: string; tenant_id: string; available: bigint; balance_alert: string; threshold: number }[]>(
    `UPDATE accounts a SET debits_pending = a.debits_pending + u.dpend, debits_posted = a.debits_posted + u.dpost
       FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u(id, dpend, dpost), plans p
      WHERE a.id = u.id AND p.id = a.plan_id
      RETURNING a.id, a.tenant_id::text AS tenant_id, a.credits_posted - a.debits_posted - a.debits_pending AS available, a.balance_alert,
                p.low_balance_threshold_tokens AS threshold`,
    tenantDeltas.map(([id]) => id),
    tenantDeltas.map(([, d]) => d.debitsPending.toString()),
    tenantDeltas.map(([, d]) => d.debitsPosted.toString()),
  );
  const leasedRecorded = recordLeased(
    tx,
    leased,
    resolutions.filter((x) => x.leased).map((x) => x.r),
  );
  const resolvedRows = tx.$executeRawUnsafe(
    `UPDATE reservations r SET state = u.state, end_reason = u.end_reason, charged_tokens = u.charged, charged_base_tokens = u.base,
            captcha_solves = u.solves, captcha_tokens = u.captcha, traffic_proxy_type = u.proxy_type, traffic_measured = u.measured,
            request_bytes = u.req_bytes, response_bytes = u.res_bytes, traffic_tokens = u.traffic, uncollected_tokens = u.uncollected,
            resolved_at = now()
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::int[], $7::bigint[], $8::text[], $9::boolean[],
                   $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
            AS u(request_id, state, end_reason, charged, base, solves, captcha, proxy_type, measured, req_bytes, res_bytes, traffic, uncollected)
      WHERE r.request_id = u.request_id`,
    resolutions.map((x) => x.r.requestId),
    resolutions.map((x) => x.state),
    resolutions.map((x) => x.cmd.reason ?? (x.state === 'settled' ? null : x.cmd.outcome)),
    resolutions.map((x) => (x.fromHolds + x.excessTaken).toString()),
    resolutions.map((x) => x.lines.base.toString()),
    resolutions.map((x) => x.cmd.captcha_solves ?? 0),
    resolutions.map((x) => x.lines.captcha.toString()),
    resolutions.map((x) => x.cmd.traffic?.proxy_type ?? null),
    resolutions.map((x) => (x.cmd.traffic ? x.cmd.traffic.measured : null)),
    resolutions.map((x) => (x.cmd.traffic?.measured ? String(x.cmd.traffic.request_bytes) : null)),
    resolutions.map((x) => (x.cmd.traffic?.measured ? String(x.cmd.traffic.response_bytes) : null)),
    resolutions.map((x) => x.lines.traffic.toString()),
    resolutions.map((x) => x.uncollected.toString()),
  );
  const [, after] = await Promise.all([inserted, updated, leasedRecorded, resolvedRows]);
  for (const a of after) {
    if (a.tenant_id) await applyBalanceAlert(tx, a.id, a.tenant_id, BigInt(a.available), a.balance_alert, a.threshold);
  }
  // The announcements and the revenue side, together as well (the revenue account last).
  const announced = enqueueMany(
    tx,
    resolutions.map((x) => {
      const total = x.fromHolds + x.excessTaken;
      return {
        topic: 'billingEvents' as const,
        key: x.r.requestId,
        envelope: makeEnvelope('billingEvents', 'billing.reservation_resolved', x.r.tenantId, {
          request_id: x.r.requestId,
          token_state: x.state,
          charged_tokens: Number(total),
          base_tokens: Number(x.lines.base),
          captcha_tokens: Number(x.lines.captcha),
          traffic_tokens: Number(x.lines.traffic),
        }),
        ...(requestIds ? { requestId: requestIds[x.index] } : {}),
      };
    }),
  );
  // The other side of every movement (revenue:usage), last.
  const others = [...deltas.entries()].filter(([id]) => !tenantAccounts.includes(id)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const revenue =
    others.length > 0
      ? tx.$executeRawUnsafe(
          `UPDATE accounts a SET debits_pending = a.debits_pending + u.dpend, debits_posted = a.debits_posted + u.dpost,
              credits_pending = a.credits_pending + u.cpend, credits_posted = a.credits_posted + u.cpost
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS u(id, dpend, dpost, cpend, cpost)
        WHERE a.id = u.id`,
          others.map(([id]) => id),
          others.map(([, d]) => d.debitsPending.toString()),
          others.map(([, d]) => d.debitsPosted.toString()),
          others.map(([, d]) => d.creditsPending.toString()),
          others.map(([, d]) => d.creditsPosted.toString()),
        )
      : undefined;
  await Promise.all([announced, revenue]);
  for (const x of resolutions) {
    results[x.index] = {
      outcome: x.state,
      flows: { charged: Number(x.fromHolds + x.excessTaken), released: Number(x.held - x.fromHolds) },
    };
  }
  return results;
}

export interface StepCommand {
  /** Idempotency key of the step, unique within the request. */
  step_id: string;
  /** The stage running or about to run (`auto` escalating to the browser says `browser`). */
  stage?: Stage | undefined;
  /** Totals so far, including the step about to be taken. */
  captcha_solves: number;
  traffic_bytes: number;
}

export type StepAnswer = LedgerStepAnswer;

/**
 * May the request take its next step (a CAPTCHA solve, the browser stage of `auto`, more proxy
 * traffic)? The projected total (base of the stage + CAPTCHA + traffic so far) is checked against
 * max_credits_per_request, which covers immediate and deferred debits alike; when it fits, the
 * part above what is already held is held now (a pending transfer, so it can never overdraw).
 * Idempotent per step id.
 */
export async function authorizeStep(db: PrismaClient, requestId: string, cmd: StepCommand, flows?: { held: number }): Promise<StepAnswer> {
  return db.$transaction(async (tx) => {
    const locked = await lockReservation(tx, requestId);
    if (!locked) throw new PublicError('NOT_FOUND', 'No such reservation.');
    const { r } = locked;
    if (r.state !== 'reserved') throw new PublicError('CONFLICT', 'The reservation is already resolved.');
    const book = await priceBookWith(tx, r.planId, r.pricingVersion, locked.overrides);
    const projected =
      BigInt(priceOf(book, r.proxyType, terminalStageOf(r.routeMode, cmd.stage)) ?? Number(r.amount)) +
      BigInt(cmd.captcha_solves * captchaPrice(book)) +
      trafficTokens(BigInt(cmd.traffic_bytes), trafficPricePerGib(book, r.proxyType));
    const answer = (allowed: boolean, reason: StepAnswer['reason'], held: bigint): StepAnswer => ({
      allowed,
      reason,
      projected_tokens: Number(projected),
      held_tokens: Number(held),
      max_credits: r.maxCredits,
      remaining_tokens: r.maxCredits === null ? null : Math.max(0, r.maxCredits - Number(projected)),
    });
    const holdId = `${r.transferId}:step:${cmd.step_id}`;
    if (await tx.transfer.findUnique({ where: { id: holdId } })) return answer(true, null, r.heldTokens);
    if (r.maxCredits !== null && projected > BigInt(r.maxCredits)) return answer(false, 'budget_exhausted', r.heldTokens);
    const extra = projected - r.heldTokens;
    if (extra <= 0n) return answer(true, null, r.heldTokens);
    const accountId = tenantAccountId(r.tenantId);
    if ((await debit(tx, accountId, extra, 'pending')) === null) return answer(false, 'insufficient_credits', r.heldTokens);
    await insertTransfers(tx, [
      {
        id: holdId,
        debitAccountId: accountId,
        creditAccountId: REVENUE_ACCOUNT,
        amount: extra,
        kind: 'pending',
        code: 'step_hold',
        requestId: r.requestId,
      },
    ]);
    await tx.reservation.update({ where: { requestId }, data: { heldTokens: projected } });
    await reviewBalanceAlert(tx, accountId);
    await credit(tx, REVENUE_ACCOUNT, extra, 'pending');
    if (flows) flows.held = Number(extra); // counted by the caller once this transaction committed
    return answer(true, null, projected);
  });
}
