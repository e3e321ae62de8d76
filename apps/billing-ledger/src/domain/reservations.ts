import type { LedgerQuote, LedgerReservation, LedgerReservationBatch, LedgerReservationDetail } from '@wdr/contracts';
import { isUniqueViolation } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import { Prisma, type PrismaClient, type Reservation } from '../generated/prisma/client.js';
import {
  availableBalance,
  credit,
  debit,
  debitWithAlert,
  insertTransfers,
  REVENUE_ACCOUNT,
  tenantAccount,
  tenantAccountId,
  type TenantAccount,
} from './accounts.js';
import { applyBalanceAlert, noteExhaustedOnRefusal, reviewBalanceAlert } from './balance-alerts.js';
import { admissionOf, priceBookWith, type Admission, type PriceBook } from './pricing.js';

type Tx = Prisma.TransactionClient;

export interface ReserveItem {
  request_id: string;
  route_mode: string;
  proxy_type: string | null;
  max_credits: number | null;
}

export interface ReserveCommand extends ReserveItem {
  tenant_id: string;
}

/**
 * The admission quote (guarded pricing policy only). All amounts in tokens.
 * - estimate_tokens: the base price of the cheapest stage the mode can end in (what a plain success costs);
 * - worst_case_tokens: the most the request can be charged: dearest stage + the plan's CAPTCHA and
 *   traffic allowances, capped by max_credits_per_request; this is what is held;
 * - balance_after_tokens: the available balance once the worst case is held;
 * - policy: `guarded`.
 */
export type Quote = LedgerQuote;

export type TokenState = 'reserved' | 'settled' | 'refunded';

/** What a reservation call answers (the internal contract's shape). */
export type ReservationView = LedgerReservation;

export type ReservationDetail = LedgerReservationDetail;

export const reservationTransferId = (requestId: string) => `reserve:${requestId}`;

/** Refused for want of tokens: carries what the refusal needs to announce an exhausted balance. */
class Refused extends PublicError {
  constructor(
    readonly accountId: string,
    readonly cheapest: number,
    message: string,
  ) {
    super('INSUFFICIENT_CREDITS', message);
  }
}

/** The facts of a reservation its views are made of (a stored row, or one just written). */
export type ReservationFacts = Pick<
  Reservation,
  | 'requestId'
  | 'tenantId'
  | 'pricingVersion'
  | 'planId'
  | 'routeMode'
  | 'proxyType'
  | 'amount'
  | 'heldTokens'
  | 'policy'
  | 'estimateTokens'
  | 'worstCaseTokens'
  | 'maxCredits'
  | 'state'
>;

/**
 * Admission: hold the request's price as a pending transfer from the tenant's account (the base,
 * or the worst case under the guarded policy). Refused, with nothing written, when the balance
 * cannot cover it or the ceiling is below the base price. Idempotent per request id: the hot path
 * does not look for an earlier reservation first; the primary key finds it, and any refusal checks
 * for one before answering, so a replay is free whatever the balance is now.
 *
 * Two ways to the same effects. The common case, a tenant whose plan this process has seen and
 * whose balance stays above its low-balance threshold, is one statement (`reserveInOneStatement`);
 * everything else (first sight of the account, a plan change, a balance near or below the
 * threshold, a refusal) runs the general transaction below.
 */
export async function reserve(db: PrismaClient, pricingVersion: number, cmd: ReserveCommand): Promise<ReservationView> {
  try {
    const known = knownAccounts.get(knownKey(cmd.tenant_id, pricingVersion));
    if (known && known.until > Date.now()) {
      const fast = await reserveInOneStatement(db, pricingVersion, known, cmd);
      if (fast) return fast;
    }
    reservePaths.transaction++;
    return await db.$transaction(async (tx) => {
      const account = await tenantAccount(tx, cmd.tenant_id, pricingVersion);
      const book = await priceBookWith(tx, account.plan.id, pricingVersion, account.overrides);
      remember(cmd.tenant_id, pricingVersion, account, book);
      const admission = admissionOf(book, account.plan, cmd);
      const debited = await debitWithAlert(tx, account.id, BigInt(admission.hold), 'pending');
      if (!debited) throw new Refused(account.id, admission.minBase, refusalMessage(admission.hold, account.plan.guardedPricing));
      const facts = await insertReservation(tx, account.id, cmd, account.plan.id, pricingVersion, account.plan.guardedPricing, admission);
      await applyBalanceAlert(tx, account.id, cmd.tenant_id, debited.available, debited.alert, account.plan.lowBalanceThresholdTokens);
      await credit(tx, REVENUE_ACCOUNT, BigInt(admission.hold), 'pending');
      return view(facts, Number(debited.available), false);
    });
  } catch (err) {
    if (isUniqueViolation(err) || err instanceof PublicError) {
      const existing = await db.reservation.findUnique({ where: { requestId: cmd.request_id } });
      if (existing) return replayView(db as unknown as Tx, existing, cmd.tenant_id);
    }
    if (isUniqueViolation(err)) return reserve(db, pricingVersion, cmd);
    if (err instanceof Refused) {
      await db.$transaction((tx) => noteExhaustedOnRefusal(tx, err.accountId, err.cheapest));
      throw new PublicError('INSUFFICIENT_CREDITS', err.message);
    }
    throw err;
  }
}

/**
 * A tenant's account as last read (its plan's terms and price book for one pricing version). Plans
 * and their prices only change with migrations; which plan an account is on can change at any time
 * (`set-plan`), so the one-statement path re-checks the account's plan id and falls back when it
 * moved. Entries are dropped after a minute and the map is bounded.
 */
/** How many reservations took each path in this process (read by the tests and bench/ledger.mjs). */
export const reservePaths = { oneStatement: 0, transaction: 0 };

interface KnownAccount {
  account: TenantAccount;
  book: PriceBook;
  until: number;
}
const knownAccounts = new Map<string, KnownAccount>();
const KNOWN_ACCOUNT_TTL_MS = 60_000;
const KNOWN_ACCOUNTS_MAX = 50_000;
const knownKey = (tenantId: string, pricingVersion: number) => `${tenantId}:${pricingVersion}`;

function remember(tenantId: string, pricingVersion: number, account: TenantAccount, book: PriceBook): void {
  const key = knownKey(tenantId, pricingVersion);
  knownAccounts.delete(key);
  if (knownAccounts.size >= KNOWN_ACCOUNTS_MAX) {
    const oldest = knownAccounts.keys().next();
    if (!oldest.done) knownAccounts.delete(oldest.value);
  }
  knownAccounts.set(key, { account, book, until: Date.now() + KNOWN_ACCOUNT_TTL_MS });
}

/**
 * The general transaction's effects in one statement, for the case where it has nothing else to do:
 * debit the hold (only while the account is on the plan it was priced with, its balance alert is
 * `none` and the balance stays at or above the plan's low-balance threshold, so no alert can
 * change), insert the pending transfer and the reservation, and credit revenue's pending side.
 * Answers null, having written nothing, when any of those conditions does not hold: the caller then
 * runs the general transaction, which also words a refusal. A duplicate request id fails the whole
 * statement with a unique violation (a replay), as in the general path.
 */
async function reserveInOneStatement(
  db: PrismaClient,
  pricingVersion: number,
  known: KnownAccount,
  cmd: ReserveCommand,
): Promise<ReservationView | null> {
  const { account } = known;
  let a: Admission;
  try {
    a = admissionOf(known.book, account.plan, cmd);
  } catch {
    // Priced with terms that may be stale (the account may have moved plan): the general path decides.
    return null;
  }
  const facts = factsOf(cmd, account.plan.id, pricingVersion, account.plan.guardedPricing, a);
  const rows = await db.$queryRawUnsafe<{ available: bigint }[]>(
    `WITH d AS (
       UPDATE accounts SET debits_pending = debits_pending + $4
        WHERE id = $2 AND plan_id = $11 AND balance_alert = 'none'
          AND credits_posted - debits_posted - debits_pending - $4 >= GREATEST($16::bigint, 1)
        RETURNING credits_posted - debits_posted - debits_pending AS available
     ), t AS (
       INSERT INTO transfers (id, debit_account_id, credit_account_id, amount, kind, code, request_id)
       SELECT $1, $2, $3, $4, 'pending', 'reservation', $5::uuid FROM d
     ), r AS (
       INSERT INTO reservations (request_id, tenant_id, transfer_id, amount, held_tokens, route_mode, proxy_type, pricing_version, plan_id, policy,
                                 estimate_tokens, worst_case_tokens, max_credits, state)
       SELECT $5::uuid, $6::uuid, $1, $7, $4, $8, $9, $10, $11, $12, $13, $14, $15, 'reserved' FROM d
     ), c AS (
       UPDATE accounts SET credits_pending = credits_pending + $4 WHERE id = $3 AND EXISTS (SELECT 1 FROM d)
     )
     SELECT available FROM d`,
    ...reservationParams(facts, account.id),
    BigInt(account.plan.lowBalanceThresholdTokens),
  );
  const row = rows[0];
  if (!row) return null;
  reservePaths.oneStatement++;
  return view(facts, Number(row.available), false);
}

/** $1..$15 of both reservation inserts: the transfer's id and accounts, then the reservation's columns. */
const reservationParams = (f: ReservationFacts, accountId: string) => [
  reservationTransferId(f.requestId),
  accountId,
  REVENUE_ACCOUNT,
  f.heldTokens,
  f.requestId,
  f.tenantId,
  f.amount,
  f.routeMode,
  f.proxyType,
  f.pricingVersion,
  f.planId,
  f.policy,
  f.estimateTokens,
  f.worstCaseTokens,
  f.maxCredits,
];

/** What a new reservation records, from its admission. */
function factsOf(item: ReserveCommand, planId: string, pricingVersion: number, guarded: boolean, a: Admission): ReservationFacts {
  return {
    requestId: item.request_id,
    tenantId: item.tenant_id,
    pricingVersion,
    planId,
    routeMode: item.route_mode,
    proxyType: a.networkClass,
    amount: BigInt(a.base),
    heldTokens: BigInt(a.hold),
    policy: guarded ? 'guarded' : 'standard',
    estimateTokens: guarded ? BigInt(a.estimate) : null,
    worstCaseTokens: guarded ? BigInt(a.worstCase) : null,
    maxCredits: item.max_credits,
    state: 'reserved',
  };
}

/** The pending transfer and the reservation, in one statement. */
async function insertReservation(
  tx: Tx,
  accountId: string,
  item: ReserveCommand,
  planId: string,
  pricingVersion: number,
  guarded: boolean,
  a: Admission,
): Promise<ReservationFacts> {
  const facts = factsOf(item, planId, pricingVersion, guarded, a);
  await tx.$executeRawUnsafe(
    `WITH t AS (
       INSERT INTO transfers (id, debit_account_id, credit_account_id, amount, kind, code, request_id)
       VALUES ($1, $2, $3, $4, 'pending', 'reservation', $5::uuid)
     )
     INSERT INTO reservations (request_id, tenant_id, transfer_id, amount, held_tokens, route_mode, proxy_type, pricing_version, plan_id, policy,
                               estimate_tokens, worst_case_tokens, max_credits, state)
     VALUES ($5::uuid, $6::uuid, $1, $7, $4, $8, $9, $10, $11, $12, $13, $14, $15, 'reserved')`,
    ...reservationParams(facts, accountId),
  );
  return facts;
}

export interface BatchCommand {
  tenant_id: string;
  items: ReserveItem[];
}

export type BatchView = LedgerReservationBatch;

/**
 * Reserve every job of a batch, all or none: one debit of the sum (so the balance check is one
 * conditional UPDATE), then one pending transfer and reservation per job. Items already reserved
 * (a retried batch) replay for free; the rest are admitted together or not at all.
 */
export async function reserveBatch(db: PrismaClient, pricingVersion: number, cmd: BatchCommand): Promise<BatchView> {
  const ids = cmd.items.map((i) => i.request_id);
  const dup = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (dup >= 0) {
    throw new PublicError('VALIDATION_FAILED', 'The batch repeats a request id.', {
      details: [{ field: `items.${dup}.request_id`, issue: 'duplicate request id' }],
    });
  }
  try {
    return await db.$transaction(
      async (tx) => {
        const existing = new Map((await tx.reservation.findMany({ where: { requestId: { in: ids } } })).map((r) => [r.requestId, r]));
        for (const r of existing.values()) {
          if (r.tenantId !== cmd.tenant_id)
            throw new PublicError('IDEMPOTENCY_CONFLICT', 'A request id of this batch belongs to another reservation.');
        }
        const account = await tenantAccount(tx, cmd.tenant_id, pricingVersion);
        const book = await priceBookWith(tx, account.plan.id, pricingVersion, account.overrides);
        const fresh: [ReserveItem, Admission][] = [];
        cmd.items.forEach((item, i) => {
          if (existing.has(item.request_id)) return;
          try {
            fresh.push([item, admissionOf(book, account.plan, item)]);
          } catch (err) {
            if (err instanceof PublicError && err.details) {
              throw new PublicError(err.code, `items.${i}: ${err.message}`, {
                details: err.details.map((d) => ({ ...d, field: `items.${i}.${d.field}` })),
              });
            }
            throw err;
          }
        });
        const total = fresh.reduce((s, [, a]) => s + BigInt(a.hold), 0n);
        let available: bigint;
        let created = new Map<string, Reservation>();
        if (fresh.length > 0) {
          const after = await debit(tx, account.id, total, 'pending');
          if (after === null)
            throw new PublicError('INSUFFICIENT_CREDITS', `The balance does not cover the ${total} tokens this batch needs.`);
          available = after;
          const rows = await writeReservations(
            tx,
            account.id,
            cmd.tenant_id,
            account.plan.id,
            pricingVersion,
            account.plan.guardedPricing,
            fresh,
          );
          created = new Map(rows.map((r) => [r.requestId, r]));
          await reviewBalanceAlert(tx, account.id);
          await credit(tx, REVENUE_ACCOUNT, total, 'pending');
        } else {
          available = await availableBalance(tx, account.id);
        }
        const items = cmd.items.map((item) => {
          const fresh = created.get(item.request_id);
          return fresh ? view(fresh, Number(available), false) : view(existing.get(item.request_id)!, Number(available), true);
        });
        return {
          items,
          balance_tokens: Number(available),
          base_tokens: items.reduce((s, v) => s + v.base_tokens, 0),
          charged_tokens: items.reduce((s, v) => s + v.charged_tokens, 0),
          held_tokens: items.reduce((s, v) => s + (v.replay ? 0 : v.held_tokens), 0),
          replay: created.size === 0,
        };
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
  } catch (err) {
    if (isUniqueViolation(err)) return reserveBatch(db, pricingVersion, cmd);
    throw err;
  }
}

async function writeReservations(
  tx: Tx,
  accountId: string,
  tenantId: string,
  planId: string,
  pricingVersion: number,
  guarded: boolean,
  admitted: [ReserveItem, Admission][],
): Promise<Reservation[]> {
  await insertTransfers(
    tx,
    admitted.map(([item, a]) => ({
      id: reservationTransferId(item.request_id),
      debitAccountId: accountId,
      creditAccountId: REVENUE_ACCOUNT,
      amount: BigInt(a.hold),
      kind: 'pending',
      code: 'reservation',
      requestId: item.request_id,
    })),
  );
  const rows = admitted.map(([item, a]) => ({
    requestId: item.request_id,
    tenantId,
    transferId: reservationTransferId(item.request_id),
    amount: BigInt(a.base),
    heldTokens: BigInt(a.hold),
    routeMode: item.route_mode,
    proxyType: a.networkClass,
    pricingVersion,
    planId,
    policy: guarded ? 'guarded' : 'standard',
    estimateTokens: guarded ? BigInt(a.estimate) : null,
    worstCaseTokens: guarded ? BigInt(a.worstCase) : null,
    maxCredits: item.max_credits,
    state: 'reserved',
  }));
  if (rows.length === 1) return [await tx.reservation.create({ data: rows[0]! })];
  return tx.reservation.createManyAndReturn({ data: rows });
}

function refusalMessage(hold: number, guarded: boolean): string {
  return guarded
    ? `The balance does not cover this request's worst case of ${hold} tokens.`
    : `The balance does not cover this request's ${hold} tokens.`;
}

async function replayView(tx: Tx, r: ReservationFacts, tenantId: string): Promise<ReservationView> {
  if (r.tenantId !== tenantId) throw new PublicError('IDEMPOTENCY_CONFLICT', 'This request id belongs to another reservation.');
  return view(r, Number(await availableBalance(tx, tenantAccountId(tenantId))), true);
}

function quoteOf(r: ReservationFacts, balance: number): Quote | null {
  if (r.policy !== 'guarded' || r.estimateTokens === null || r.worstCaseTokens === null) return null;
  return {
    policy: 'guarded',
    pricing_version: r.pricingVersion,
    estimate_tokens: Number(r.estimateTokens),
    worst_case_tokens: Number(r.worstCaseTokens),
    max_credits_per_request: r.maxCredits,
    balance_after_tokens: balance,
  };
}

export function view(r: ReservationFacts, balance: number, replay: boolean): ReservationView {
  return {
    request_id: r.requestId,
    pricing_version: r.pricingVersion,
    plan_id: r.planId,
    route_mode: r.routeMode,
    proxy_type: r.proxyType,
    base_tokens: Number(r.amount),
    held_tokens: Number(r.heldTokens),
    charged_tokens: replay ? 0 : Number(r.amount),
    balance_tokens: balance,
    quote: quoteOf(r, balance),
    replay,
    token_state: r.state as TokenState,
  };
}

export async function readReservation(db: PrismaClient, requestId: string): Promise<ReservationDetail> {
  const r = await db.reservation.findUnique({ where: { requestId } });
  if (!r) throw new PublicError('NOT_FOUND', 'No such reservation.');
  const balance = Number(await availableBalance(db as unknown as Tx, tenantAccountId(r.tenantId)));
  const { charged_tokens: _c, replay: _r, ...base } = view(r, balance, true);
  return {
    ...base,
    tenant_id: r.tenantId,
    max_credits: r.maxCredits,
    end_reason: r.endReason,
    charged_tokens: r.chargedTokens === null ? null : Number(r.chargedTokens),
    charged_base_tokens: Number(r.chargedBaseTokens),
    captcha_solves: r.captchaSolves,
    captcha_tokens: Number(r.captchaTokens),
    traffic_tokens: Number(r.trafficTokens),
    uncollected_tokens: Number(r.uncollectedTokens),
    created_at: r.createdAt.toISOString(),
    resolved_at: r.resolvedAt ? r.resolvedAt.toISOString() : null,
  };
}
