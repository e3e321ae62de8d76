import type { LedgerStepAnswer } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { enqueue, makeEnvelope } from '@wdr/kit/kafka';
import type { Prisma, PrismaClient, Reservation } from '../generated/prisma/client.js';
import { createTransfer, debit, insertTransfers, credit, resolveHolds, REVENUE_ACCOUNT, tenantAccountId, type Hold } from './accounts.js';
import { reviewBalanceAlert } from './balance-alerts.js';
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
} from './pricing.js';

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
}

/**
 * Lock a reservation for the rest of the transaction (settlement and step holds serialise on it),
 * and read with it its plan's price overrides and its open holds: one round trip.
 */
async function lockReservation(tx: Tx, requestId: string): Promise<Locked | null> {
  const rows = await tx.$queryRawUnsafe<(Record<string, unknown> & { overrides: unknown; holds: unknown })[]>(
    `SELECT r.request_id, r.tenant_id, r.transfer_id, r.amount, r.held_tokens, r.route_mode, r.proxy_type, r.pricing_version, r.plan_id, r.policy,
            r.max_credits, r.state,
            COALESCE((SELECT json_agg(json_build_array(pp.network_class, pp.tariff, pp.tokens)) FROM plan_prices pp
                       WHERE pp.plan_id = r.plan_id AND pp.pricing_version = r.pricing_version), '[]'::json) AS overrides,
            COALESCE((SELECT json_agg(json_build_array(t.id, t.amount::text, t.credit_account_id) ORDER BY t.created_at, t.id) FROM transfers t
                       WHERE t.request_id = r.request_id AND t.kind = 'pending' AND t.debit_account_id = 'tenant:' || r.tenant_id::text), '[]'::json) AS holds
       FROM reservations r WHERE r.request_id = $1::uuid FOR UPDATE OF r`,
    requestId,
  );
  const row = rows[0];
  if (!row) return null;
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

/** Base of the terminal stage, in the admitted network class; a price gone missing falls back to the admission base. */
function basePrice(book: PriceBook, r: Reservation, cmd: SettlementCommand): bigint {
  let stage = cmd.terminal_stage;
  if (stage === undefined && r.routeMode === 'auto' && (cmd.route_mode === 'http' || cmd.route_mode === 'browser')) stage = cmd.route_mode;
  return BigInt(priceOf(book, r.proxyType, terminalStageOf(r.routeMode, stage)) ?? Number(r.amount));
}

/**
 * Resolve a reservation exactly once, inside the caller's transaction (the consumer's, which also
 * records the command as processed).
 *
 * The rule: a `completed` request, and one stopped at its ceiling (`budget_exhausted`, the
 * tenant's own limit), is charged base of its terminal stage + CAPTCHA solves + measured proxy
 * traffic, never more than max_credits_per_request. A `failed` or `cancelled` request is refunded
 * in full: the tenant pays nothing for a failure it did not cause. The charge is posted from the
 * request's holds and the rest released; a charge above the holds (deferred items) is debited from
 * the balance as far as it goes, and what it cannot cover is recorded as uncollected, never
 * overdrawn. Returns what happened (`duplicate` when it was already resolved); `flows`, when given,
 * receives the tokens charged and the held tokens released, for the caller to count once the
 * transaction committed (src/metrics.ts).
 */
export async function settle(tx: Tx, cmd: SettlementCommand, flows?: SettlementFlows): Promise<'settled' | 'refunded' | 'duplicate'> {
  const locked = await lockReservation(tx, cmd.request_id);
  if (!locked) throw new Error(`no reservation for request ${cmd.request_id}`);
  const { r } = locked;
  if (r.state !== 'reserved') return 'duplicate';

  const book = await priceBookWith(tx, r.planId, r.pricingVersion, locked.overrides);
  const charged = cmd.outcome === 'completed' || cmd.reason === 'budget_exhausted';
  const traffic = cmd.traffic;
  const trafficBytes = traffic?.measured ? BigInt(traffic.request_bytes) + BigInt(traffic.response_bytes) : 0n;
  const captchaSolves = cmd.captcha_solves ?? 0;
  const lines = charged
    ? costOf(
        {
          base: basePrice(book, r, cmd),
          captcha: cmd.captcha_solves === undefined ? BigInt(cmd.captcha_tokens) : BigInt(captchaSolves * captchaPrice(book)),
          traffic: traffic ? trafficTokens(trafficBytes, trafficPricePerGib(book, traffic.proxy_type)) : 0n,
        },
        r.maxCredits,
      )
    : { base: 0n, captcha: 0n, traffic: 0n, total: 0n };

  const accountId = tenantAccountId(r.tenantId);
  const fromHolds = await resolveHolds(tx, locked.holds, lines.total, charged ? 'settlement' : 'refund');
  let excessTaken = 0n;
  let uncollected = 0n;
  const excess = lines.total - fromHolds;
  if (excess > 0n) {
    // Deferred items beyond the holds: take what the balance has, record the rest.
    const available = BigInt(
      (
        await tx.$queryRawUnsafe<{ a: bigint }[]>(
          'SELECT credits_posted - debits_posted - debits_pending AS a FROM accounts WHERE id = $1 FOR UPDATE',
          accountId,
        )
      )[0]?.a ?? 0n,
    );
    excessTaken = available <= 0n ? 0n : available < excess ? available : excess;
    uncollected = excess - excessTaken;
    if (excessTaken > 0n) {
      await createTransfer(
        tx,
        {
          id: `charge:${r.requestId}:deferred`,
          debitAccountId: accountId,
          creditAccountId: REVENUE_ACCOUNT,
          amount: excessTaken,
          code: 'deferred_charge',
          requestId: r.requestId,
        },
        'posted',
      );
    }
  }
  const total = fromHolds + excessTaken;
  const state = charged ? 'settled' : 'refunded';
  await tx.$executeRawUnsafe(
    `UPDATE reservations SET state = $2, end_reason = $3, charged_tokens = $4, charged_base_tokens = $5, captcha_solves = $6, captcha_tokens = $7,
            traffic_proxy_type = $8, traffic_measured = $9, request_bytes = $10, response_bytes = $11, traffic_tokens = $12, uncollected_tokens = $13,
            resolved_at = now()
      WHERE request_id = $1::uuid`,
    r.requestId,
    state,
    cmd.reason ?? (charged ? null : cmd.outcome),
    total,
    lines.base,
    captchaSolves,
    lines.captcha,
    traffic?.proxy_type ?? null,
    traffic ? traffic.measured : null,
    traffic?.measured ? BigInt(traffic.request_bytes) : null,
    traffic?.measured ? BigInt(traffic.response_bytes) : null,
    lines.traffic,
    uncollected,
  );
  if (flows) {
    flows.charged = Number(total);
    flows.released = Number(locked.holds.reduce((sum, h) => sum + h.amount, 0n) - fromHolds);
  }
  await reviewBalanceAlert(tx, accountId);
  await enqueue(
    tx,
    'billingEvents',
    r.requestId,
    makeEnvelope('billingEvents', 'billing.reservation_resolved', r.tenantId, {
      request_id: r.requestId,
      token_state: state,
      charged_tokens: Number(total),
      base_tokens: Number(lines.base),
      captcha_tokens: Number(lines.captcha),
      traffic_tokens: Number(lines.traffic),
    }),
  );
  return state;
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
