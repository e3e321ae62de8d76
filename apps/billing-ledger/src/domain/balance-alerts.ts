import type { RawSql } from '@wdr/kit/db';
import { enqueue, makeEnvelope } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;
type Alert = 'none' | 'low' | 'exhausted';

const RANK: Record<Alert, number> = { none: 0, low: 1, exhausted: 2 };

/**
 * Announce a tenant's balance getting worse, once per dip: `billing.balance_low` when the available
 * balance falls under the plan's threshold, `billing.balance_exhausted` when it reaches zero. The
 * state only recovers when the balance is back at or above the threshold (a top-up), so a tenant
 * hovering near zero is not announced again on every settlement. Call it in the transaction that
 * changed the balance, after the change (the account row is already locked by it).
 */
export async function reviewBalanceAlert(tx: Tx, accountId: string): Promise<void> {
  const rows = await tx.$queryRawUnsafe<{ tenant_id: string | null; balance_alert: Alert; available: bigint; threshold: number }[]>(
    `SELECT a.tenant_id::text AS tenant_id, a.balance_alert, a.credits_posted - a.debits_posted - a.debits_pending AS available,
            p.low_balance_threshold_tokens AS threshold
       FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
    accountId,
  );
  const a = rows[0];
  if (!a?.tenant_id) return;
  await applyBalanceAlert(tx, accountId, a.tenant_id, BigInt(a.available), a.balance_alert, a.threshold);
}

/** The same review from figures the caller already has (the debit's RETURNING): no read. */
export async function applyBalanceAlert(
  tx: RawSql,
  accountId: string,
  tenantId: string,
  available: bigint,
  current: string,
  threshold: number,
): Promise<void> {
  const now = current as Alert;
  const desired: Alert = available <= 0n ? 'exhausted' : available < BigInt(threshold) ? 'low' : 'none';
  if (RANK[desired] > RANK[now]) {
    await tx.$executeRawUnsafe('UPDATE accounts SET balance_alert = $2 WHERE id = $1', accountId, desired);
    await announce(tx, tenantId, desired as Exclude<Alert, 'none'>, available, threshold, null);
  } else if (desired === 'none' && now !== 'none') {
    await tx.$executeRawUnsafe(`UPDATE accounts SET balance_alert = 'none' WHERE id = $1`, accountId);
  }
}

/**
 * A refused admission whose balance cannot pay even the cheapest stage: the tenant is out of
 * tokens whatever the balance says. Announced once (until a top-up), in its own small transaction:
 * nothing of the refused request itself is written.
 */
export async function noteExhaustedOnRefusal(tx: Tx, accountId: string, requiredTokens: number): Promise<void> {
  const rows = await tx.$queryRawUnsafe<{ tenant_id: string; available: bigint }[]>(
    `UPDATE accounts SET balance_alert = 'exhausted'
      WHERE id = $1 AND balance_alert <> 'exhausted' AND credits_posted - debits_posted - debits_pending < $2
      RETURNING tenant_id::text AS tenant_id, credits_posted - debits_posted - debits_pending AS available`,
    accountId,
    requiredTokens,
  );
  const r = rows[0];
  if (r) await announce(tx, r.tenant_id, 'exhausted', BigInt(r.available), 0, requiredTokens);
}

async function announce(
  tx: RawSql,
  tenantId: string,
  alert: Exclude<Alert, 'none'>,
  available: bigint,
  threshold: number,
  required: number | null,
) {
  const balance = Number(available < 0n ? 0n : available);
  const envelope =
    alert === 'low'
      ? makeEnvelope('billingAlerts', 'billing.balance_low', tenantId, { balance_tokens: balance, threshold_tokens: threshold })
      : makeEnvelope('billingAlerts', 'billing.balance_exhausted', tenantId, { balance_tokens: balance, required_tokens: required });
  // Keyed by tenant: a tenant's balance events stay in order.
  await enqueue(tx, 'billingAlerts', tenantId, envelope);
}
