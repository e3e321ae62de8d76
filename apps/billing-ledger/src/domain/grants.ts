import type { PrismaClient } from '../generated/prisma/client.js';
import { availableBalance, createTransfer, ensureTenantAccount, FUNDING_ACCOUNT } from './accounts.js';

/** Operator top-up: a posted transfer from the funding account; `reference` makes it idempotent. */
export async function grant(db: PrismaClient, tenantId: string, amount: number, reference: string): Promise<{ balance_tokens: number; created: boolean }> {
  return db.$transaction(async (tx) => {
    const accountId = await ensureTenantAccount(tx, tenantId);
    const { created } = await createTransfer(
      tx,
      { id: `grant:${reference}`, debitAccountId: FUNDING_ACCOUNT, creditAccountId: accountId, amount: BigInt(amount), code: 'grant' },
      'posted',
    );
    return { balance_tokens: Number(await availableBalance(tx, accountId)), created };
  });
}

export async function balanceOf(db: PrismaClient, tenantId: string): Promise<{ balance_tokens: number; reserved_tokens: number }> {
  const a = await db.account.findUnique({ where: { id: `tenant:${tenantId}` } });
  if (!a) return { balance_tokens: 0, reserved_tokens: 0 };
  return { balance_tokens: Number(a.creditsPosted - a.debitsPosted - a.debitsPending), reserved_tokens: Number(a.debitsPending) };
}
