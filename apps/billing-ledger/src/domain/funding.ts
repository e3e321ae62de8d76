import { PublicError } from '@wdr/kit/errors';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import {
  availableBalance,
  CORRECTIONS_ACCOUNT,
  createTransfer,
  FUNDING_ACCOUNT,
  GRANTS_ACCOUNT,
  tenantAccount,
  tenantAccountId,
} from './accounts.js';
import { reviewBalanceAlert } from './balance-alerts.js';
import { leasedTokens } from './leases.js';

type Tx = Prisma.TransactionClient;

/**
 * Operator movements on a tenant's balance. Each is a new posted transfer whose id is derived from
 * the operator's reference, so a repeated command changes nothing (and a reused reference with
 * other terms is a conflict). Nothing is ever edited in place: a wrong movement is answered by a
 * correction.
 *   top-up      purchased tokens, from operator:funding
 *   grant       free tokens, from operator:grants
 *   correction  +N credits or -N debits the tenant against operator:corrections
 */
export type FundingKind = 'top_up' | 'grant' | 'correction';

export interface FundingResult {
  transfer_id: string;
  created: boolean;
  balance_tokens: number;
}

export async function fund(
  db: PrismaClient,
  kind: FundingKind,
  cmd: { tenant_id: string; amount: number; reference: string; memo?: string | null },
): Promise<FundingResult> {
  if (!Number.isSafeInteger(cmd.amount) || cmd.amount === 0 || (kind !== 'correction' && cmd.amount < 0)) {
    throw new PublicError('VALIDATION_FAILED', 'The amount is not valid.', {
      details: [{ field: 'amount', issue: kind === 'correction' ? 'must be a non-zero integer' : 'must be >= 1' }],
    });
  }
  if (kind === 'correction' && !cmd.memo?.trim()) {
    throw new PublicError('VALIDATION_FAILED', 'A correction says why.', {
      details: [{ field: 'memo', issue: 'is required for a correction' }],
    });
  }
  return db.$transaction(async (tx: Tx) => {
    const { id: accountId } = await tenantAccount(tx, cmd.tenant_id);
    const counterpart = kind === 'top_up' ? FUNDING_ACCOUNT : kind === 'grant' ? GRANTS_ACCOUNT : CORRECTIONS_ACCOUNT;
    const id = `${kind}:${cmd.reference}`;
    const credits = cmd.amount > 0;
    const { created } = await createTransfer(
      tx,
      {
        id,
        debitAccountId: credits ? counterpart : accountId,
        creditAccountId: credits ? accountId : counterpart,
        amount: BigInt(Math.abs(cmd.amount)),
        code: kind,
        memo: cmd.memo ?? null,
      },
      'posted',
    );
    if (created) await reviewBalanceAlert(tx, accountId);
    return { transfer_id: id, created, balance_tokens: Number(await availableBalance(tx, accountId)) };
  });
}

export interface BalanceView {
  /** Available now: credited - charged - held. */
  balance_tokens: number;
  /** Held by reservations in flight, and what the tenant's open credit leases still have. */
  reserved_tokens: number;
  plan_id: string;
  low_balance_threshold_tokens: number;
}

export async function balanceOf(db: PrismaClient, tenantId: string): Promise<BalanceView> {
  const rows = await db.$queryRawUnsafe<{ available: bigint; pending: bigint; plan_id: string; threshold: number }[]>(
    `SELECT a.credits_posted - a.debits_posted - a.debits_pending AS available, a.debits_pending AS pending, p.id AS plan_id, p.low_balance_threshold_tokens AS threshold
       FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
    tenantAccountId(tenantId),
  );
  const r = rows[0];
  if (!r) {
    const standard = await db.plan.findUniqueOrThrow({ where: { id: 'standard' } });
    return {
      balance_tokens: 0,
      reserved_tokens: 0,
      plan_id: standard.id,
      low_balance_threshold_tokens: standard.lowBalanceThresholdTokens,
    };
  }
  return {
    balance_tokens: Number(r.available),
    reserved_tokens: Number(BigInt(r.pending) + (await leasedTokens(db, tenantId))),
    plan_id: r.plan_id,
    low_balance_threshold_tokens: r.threshold,
  };
}
