import { PublicError } from '@wdr/kit/errors';
import type { Prisma } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

/**
 * System accounts, created by the migrations. They may go negative; tenant accounts never do.
 * Purchased tokens come from operator:funding, free ones from operator:grants, operator fixes
 * move against operator:corrections, and every charge lands on revenue:usage.
 */
export const FUNDING_ACCOUNT = 'operator:funding';
export const GRANTS_ACCOUNT = 'operator:grants';
export const CORRECTIONS_ACCOUNT = 'operator:corrections';
export const REVENUE_ACCOUNT = 'revenue:usage';

export const tenantAccountId = (tenantId: string) => `tenant:${tenantId}`;

export interface PlanRow {
  id: string;
  guardedPricing: boolean;
  lowBalanceThresholdTokens: number;
  worstCaseCaptchaSolves: number;
  worstCaseTrafficBytes: bigint;
}

export interface TenantAccount {
  id: string;
  tenantId: string;
  plan: PlanRow;
  /** The plan's price overrides for the pricing version asked for (empty when none was asked). */
  overrides: [string, 'http' | 'browser' | 'traffic_gib' | 'captcha', number][];
}

/**
 * The tenant's account (opened on first use, on the standard plan), its plan, and the plan's price
 * overrides for `pricingVersion`: one round trip on the admission path.
 */
export async function tenantAccount(tx: Tx, tenantId: string, pricingVersion = 0): Promise<TenantAccount> {
  const id = tenantAccountId(tenantId);
  const read = () =>
    tx.$queryRawUnsafe<
      {
        plan_id: string;
        guarded_pricing: boolean;
        low_balance_threshold_tokens: number;
        worst_case_captcha_solves: number;
        worst_case_traffic_bytes: bigint;
        overrides: TenantAccount['overrides'];
      }[]
    >(
      `SELECT p.id AS plan_id, p.guarded_pricing, p.low_balance_threshold_tokens, p.worst_case_captcha_solves, p.worst_case_traffic_bytes,
              COALESCE((SELECT json_agg(json_build_array(pp.network_class, pp.tariff, pp.tokens)) FROM plan_prices pp
                         WHERE pp.plan_id = p.id AND pp.pricing_version = $2), '[]'::json) AS overrides
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
      id,
      pricingVersion,
    );
  let rows = await read();
  if (rows.length === 0) {
    await tx.$executeRawUnsafe(
      `INSERT INTO accounts (id, kind, tenant_id, no_overdraft) VALUES ($1, 'tenant', $2::uuid, true) ON CONFLICT (id) DO NOTHING`,
      id,
      tenantId,
    );
    rows = await read();
  }
  const r = rows[0];
  if (!r) throw new Error(`account ${id} has no plan`);
  return {
    id,
    tenantId,
    plan: {
      id: r.plan_id,
      guardedPricing: r.guarded_pricing,
      lowBalanceThresholdTokens: r.low_balance_threshold_tokens,
      worstCaseCaptchaSolves: r.worst_case_captcha_solves,
      worstCaseTrafficBytes: BigInt(r.worst_case_traffic_bytes),
    },
    overrides: typeof r.overrides === 'string' ? (JSON.parse(r.overrides) as TenantAccount['overrides']) : r.overrides,
  };
}

export interface TransferSpec {
  id: string;
  debitAccountId: string;
  creditAccountId: string;
  amount: bigint;
  code: string;
  requestId?: string | null;
  pendingId?: string | null;
  memo?: string | null;
}

/**
 * Take `amount` from an account: one conditional UPDATE is both the overdraft check and the
 * change, so concurrent debits cannot overspend. Returns the available balance after it, or
 * null when the account forbids overdraft and cannot cover the amount (nothing changed).
 */
export async function debit(tx: Tx, accountId: string, amount: bigint, kind: 'posted' | 'pending'): Promise<bigint | null> {
  return (await debitWithAlert(tx, accountId, amount, kind))?.available ?? null;
}

/** `debit`, also answering the account's current balance alert (to review it without another read). */
export async function debitWithAlert(
  tx: Tx,
  accountId: string,
  amount: bigint,
  kind: 'posted' | 'pending',
): Promise<{ available: bigint; alert: string } | null> {
  const col = kind === 'posted' ? 'debits_posted' : 'debits_pending';
  const rows = await tx.$queryRawUnsafe<{ available: bigint; balance_alert: string }[]>(
    `UPDATE accounts SET ${col} = ${col} + $2
      WHERE id = $1 AND (NOT no_overdraft OR credits_posted - debits_posted - debits_pending >= $2)
      RETURNING credits_posted - debits_posted - debits_pending AS available, balance_alert`,
    accountId,
    amount,
  );
  const r = rows[0];
  return r ? { available: BigInt(r.available), alert: r.balance_alert } : null;
}

/** Credit side of a movement. Called last in a transaction: revenue:usage is the hottest row. */
export async function credit(tx: Tx, accountId: string, amount: bigint, kind: 'posted' | 'pending'): Promise<void> {
  const col = kind === 'posted' ? 'credits_posted' : 'credits_pending';
  await tx.$executeRawUnsafe(`UPDATE accounts SET ${col} = ${col} + $2 WHERE id = $1`, accountId, amount);
}

export async function insertTransfers(tx: Tx, specs: (TransferSpec & { kind: string })[]): Promise<void> {
  if (specs.length === 0) return;
  await tx.transfer.createMany({
    data: specs.map((s) => ({
      id: s.id,
      debitAccountId: s.debitAccountId,
      creditAccountId: s.creditAccountId,
      amount: s.amount,
      kind: s.kind,
      code: s.code,
      requestId: s.requestId ?? null,
      pendingId: s.pendingId ?? null,
      memo: s.memo ?? null,
    })),
  });
}

/**
 * Post or hold a movement between two accounts. `id` is the idempotency key: an existing transfer
 * with the same id changes nothing (`created: false`), and one with other terms is a conflict.
 */
export async function createTransfer(
  tx: Tx,
  spec: TransferSpec,
  kind: 'posted' | 'pending',
): Promise<{ created: boolean; available: bigint | null }> {
  if (spec.amount < 0n) throw new Error('transfer amount must be >= 0');
  const existing = await tx.transfer.findUnique({ where: { id: spec.id } });
  if (existing) {
    if (
      existing.amount !== spec.amount ||
      existing.debitAccountId !== spec.debitAccountId ||
      existing.creditAccountId !== spec.creditAccountId
    ) {
      throw new PublicError('IDEMPOTENCY_CONFLICT', 'This reference was already used for a different movement.');
    }
    return { created: false, available: null };
  }
  const available = await debit(tx, spec.debitAccountId, spec.amount, kind);
  if (available === null) throw new PublicError('INSUFFICIENT_CREDITS', 'The balance does not cover this request.');
  await insertTransfers(tx, [{ ...spec, kind }]);
  await credit(tx, spec.creditAccountId, spec.amount, kind);
  return { created: true, available };
}

export interface Hold {
  id: string;
  amount: bigint;
  debitAccountId: string;
  creditAccountId: string;
  requestId: string | null;
}

/**
 * How pending transfers resolve: post up to `amount` across them (in order) and release the rest.
 * Each resolution is the transfer `<pending id>:resolve` (its amount what it posts), so the primary
 * key forbids a second one. `held` is what the holds held, `posted` what they post together.
 */
export function holdResolutions(
  holds: Hold[],
  amount: bigint,
  code: string,
  memo: string | null = null,
): { resolutions: (TransferSpec & { kind: string })[]; held: bigint; posted: bigint } {
  let remaining = amount;
  let held = 0n;
  const resolutions: (TransferSpec & { kind: string })[] = [];
  for (const h of holds) {
    const posted = remaining < h.amount ? remaining : h.amount;
    remaining -= posted;
    held += h.amount;
    resolutions.push({
      id: `${h.id}:resolve`,
      debitAccountId: h.debitAccountId,
      creditAccountId: h.creditAccountId,
      amount: posted,
      kind: posted === 0n ? 'void_pending' : 'post_pending',
      pendingId: h.id,
      requestId: h.requestId,
      code,
      memo,
    });
  }
  return { resolutions, held, posted: amount - remaining };
}

/**
 * Resolve pending transfers exactly once (holdResolutions) and move the two accounts' pending and
 * posted sums. All holds must share their two accounts. Returns the amount posted.
 */
export async function resolveHolds(tx: Tx, holds: Hold[], amount: bigint, code: string, memo: string | null = null): Promise<bigint> {
  if (holds.length === 0) return 0n;
  const { resolutions, held, posted } = holdResolutions(holds, amount, code, memo);
  const { debitAccountId, creditAccountId } = holds[0]!;
  await insertTransfers(tx, resolutions);
  await tx.$executeRawUnsafe(
    `UPDATE accounts SET debits_pending = debits_pending - $2, debits_posted = debits_posted + $3 WHERE id = $1`,
    debitAccountId,
    held,
    posted,
  );
  await tx.$executeRawUnsafe(
    `UPDATE accounts SET credits_pending = credits_pending - $2, credits_posted = credits_posted + $3 WHERE id = $1`,
    creditAccountId,
    held,
    posted,
  );
  return posted;
}

export async function availableBalance(tx: Tx, accountId: string): Promise<bigint> {
  const rows = await tx.$queryRawUnsafe<{ available: bigint }[]>(
    'SELECT credits_posted - debits_posted - debits_pending AS available FROM accounts WHERE id = $1',
    accountId,
  );
  return rows[0] ? BigInt(rows[0].available) : 0n;
}
