import { PublicError } from '@wdr/kit/errors';
import { Prisma } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

/** System accounts, created by the first migration. They may go negative; tenant accounts never do. */
export const FUNDING_ACCOUNT = 'operator:funding';
export const REVENUE_ACCOUNT = 'revenue:usage';

export const tenantAccountId = (tenantId: string) => `tenant:${tenantId}`;

export async function ensureTenantAccount(tx: Tx, tenantId: string): Promise<string> {
  const id = tenantAccountId(tenantId);
  await tx.account.upsert({
    where: { id },
    create: { id, kind: 'tenant', tenantId, noOverdraft: true },
    update: {},
  });
  return id;
}

export interface TransferSpec {
  id: string;
  debitAccountId: string;
  creditAccountId: string;
  amount: bigint;
  code: string;
  requestId?: string;
}

/**
 * Post or reserve a movement between two accounts. `id` is the idempotency key: an existing
 * transfer with the same id is returned unchanged. The overdraft check and the balance change are
 * one conditional UPDATE, so concurrent reservations cannot overspend.
 */
export async function createTransfer(tx: Tx, spec: TransferSpec, kind: 'posted' | 'pending'): Promise<{ created: boolean }> {
  if (spec.amount < 0n) throw new Error('transfer amount must be >= 0');
  const existing = await tx.transfer.findUnique({ where: { id: spec.id } });
  if (existing) return { created: false };
  const debitCol = kind === 'posted' ? 'debits_posted' : 'debits_pending';
  const creditCol = kind === 'posted' ? 'credits_posted' : 'credits_pending';
  const debited = await tx.$executeRawUnsafe(
    `UPDATE accounts SET ${debitCol} = ${debitCol} + $2
      WHERE id = $1 AND (NOT no_overdraft OR credits_posted - debits_posted - debits_pending >= $2)`,
    spec.debitAccountId,
    spec.amount,
  );
  if (debited === 0) throw new PublicError('INSUFFICIENT_CREDITS', 'The balance does not cover this request.');
  await tx.$executeRawUnsafe(`UPDATE accounts SET ${creditCol} = ${creditCol} + $2 WHERE id = $1`, spec.creditAccountId, spec.amount);
  await tx.transfer.create({
    data: {
      id: spec.id,
      debitAccountId: spec.debitAccountId,
      creditAccountId: spec.creditAccountId,
      amount: spec.amount,
      kind,
      code: spec.code,
      requestId: spec.requestId ?? null,
    },
  });
  return { created: true };
}

/**
 * Resolve a pending transfer exactly once: post `amount` (<= the pending amount) and release the
 * rest, or void it (amount 0). The resolving transfer's id is `<pending id>:resolve`, so a second
 * attempt finds it and changes nothing.
 */
export async function resolvePending(tx: Tx, pendingId: string, amount: bigint, code: string): Promise<{ resolved: boolean }> {
  const pending = await tx.transfer.findUnique({ where: { id: pendingId } });
  if (!pending || pending.kind !== 'pending') throw new Error(`no pending transfer ${pendingId}`);
  const resolveId = `${pendingId}:resolve`;
  if (await tx.transfer.findUnique({ where: { id: resolveId } })) return { resolved: false };
  const posted = amount > pending.amount ? pending.amount : amount;
  await tx.$executeRawUnsafe(
    `UPDATE accounts SET debits_pending = debits_pending - $2, debits_posted = debits_posted + $3 WHERE id = $1`,
    pending.debitAccountId,
    pending.amount,
    posted,
  );
  await tx.$executeRawUnsafe(
    `UPDATE accounts SET credits_pending = credits_pending - $2, credits_posted = credits_posted + $3 WHERE id = $1`,
    pending.creditAccountId,
    pending.amount,
    posted,
  );
  await tx.transfer.create({
    data: {
      id: resolveId,
      debitAccountId: pending.debitAccountId,
      creditAccountId: pending.creditAccountId,
      amount: posted,
      kind: posted === 0n ? 'void_pending' : 'post_pending',
      pendingId,
      requestId: pending.requestId,
      code,
    },
  });
  return { resolved: true };
}

export async function availableBalance(tx: Tx, accountId: string): Promise<bigint> {
  const a = await tx.account.findUnique({ where: { id: accountId } });
  if (!a) return 0n;
  return a.creditsPosted - a.debitsPosted - a.debitsPending;
}
