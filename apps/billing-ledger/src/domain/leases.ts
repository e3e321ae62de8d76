import type { LeaseGrantBody, LedgerLeaseGrant, LedgerPriceRow } from '@wdr/contracts';
import { isUniqueViolation } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import type { Logger } from '@wdr/kit/log';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { tenantAccount } from './accounts.js';
import { applyBalanceAlert, noteExhaustedOnRefusal, reviewBalanceAlert } from './balance-alerts.js';
import { admissionOf, loadPriceBook, priceBookWith, type PriceBook } from './pricing.js';

type Tx = Prisma.TransactionClient;

/**
 * Credit leases (issue 24, item 2; docs/architecture.md, "Credit leases"). A lease is an account of
 * its own, `lease:<id>` (no overdraft), recorded in a `leases` row. Every token moves by a posted
 * transfer whose id is its idempotency key:
 *   lease:<id>:grant:<n>  tenant -> lease   (a grant; a top-up is the next n)
 *   use:<request id>      lease -> revenue  (settlement of a request admitted from the lease)
 *   lease:<id>:return     lease -> tenant   (what is left, once, at return_after)
 * so granted = used + returned + the lease account's balance, which is never negative.
 */
export const leaseAccountId = (leaseId: string) => `lease:${leaseId}`;
export const grantTransferId = (leaseId: string, n: number) => `lease:${leaseId}:grant:${n}`;
export const returnTransferId = (leaseId: string) => `lease:${leaseId}:return`;
export const useTransferId = (requestId: string) => `use:${requestId}`;

export interface LeaseTimes {
  /** How long a lease admits, from its first grant. */
  ttlSeconds: number;
  /** Then how long before what is left returns: above any request's life. */
  returnGraceSeconds: number;
}

interface LeaseRow {
  id: string;
  tenant_id: string;
  plan_id: string;
  pricing_version: number;
  granted: bigint;
  state: string;
  admit_until: Date;
  return_after: Date;
  admits: boolean;
}

const pricesOf = (book: PriceBook): LedgerPriceRow[] =>
  [...book.prices.entries()].map(([key, tokens]) => {
    const [network_class, tariff] = key.split(':') as [string, LedgerPriceRow['tariff']];
    return { network_class, tariff, tokens };
  });

/**
 * Grant (or top up) a lease: post min(block, available) from the tenant's balance to the lease, in
 * one transaction that also opens the lease on its first grant. Refused, with nothing written,
 * exactly as a reservation of the prompting request would be: its price (the pure pricing of
 * @wdr/kit/pricing) must fit in the balance. Idempotent on (lease_id, n): a replay answers the
 * amount first posted. A lease that no longer admits (past admit_until, or returned), and a plan
 * whose policy is not standard (leases serve only that), are answered with nothing granted.
 */
export async function grantLease(
  db: PrismaClient,
  pricingVersion: number,
  times: LeaseTimes,
  cmd: LeaseGrantBody,
): Promise<LedgerLeaseGrant> {
  try {
    return await db.$transaction(async (tx) => {
      const lease = await lockLease(tx, cmd.lease_id);
      if (lease && lease.tenant_id !== cmd.tenant_id) {
        throw new PublicError('IDEMPOTENCY_CONFLICT', 'This lease id belongs to another tenant.');
      }
      const account = await tenantAccount(tx, cmd.tenant_id, lease?.pricing_version ?? pricingVersion);
      // A lease keeps the plan and prices of its first grant, whatever the account moves to.
      const planId = lease?.plan_id ?? account.plan.id;
      const version = lease?.pricing_version ?? pricingVersion;
      const book =
        planId === account.plan.id ? await priceBookWith(tx, planId, version, account.overrides) : await loadPriceBook(tx, planId, version);
      // Leases serve the standard policy only; a lease whose tenant moved plan grows no more.
      const policy = account.plan.guardedPricing ? 'guarded' : 'standard';
      const answer = async (granted: bigint, total: bigint, l: { admit_until: Date; return_after: Date }, replay: boolean) => ({
        lease_id: cmd.lease_id,
        n: cmd.n,
        granted_tokens: Number(granted),
        lease_granted_tokens: Number(total),
        plan_id: planId,
        policy: policy as 'standard' | 'guarded',
        pricing_version: version,
        prices: pricesOf(book),
        admit_until: l.admit_until.toISOString(),
        return_after: l.return_after.toISOString(),
        balance_tokens: Number(await available(tx, account.id)),
        replay,
      });
      const replayed = await tx.$queryRawUnsafe<{ amount: bigint; credit_account_id: string }[]>(
        'SELECT amount, credit_account_id FROM transfers WHERE id = $1',
        grantTransferId(cmd.lease_id, cmd.n),
      );
      if (replayed[0] && lease) return answer(BigInt(replayed[0].amount), BigInt(lease.granted), lease, true);
      if (lease && (!lease.admits || planId !== account.plan.id)) return answer(0n, BigInt(lease.granted), lease, false);
      if (policy === 'guarded') {
        // Nothing opened: the orchestrator reserves this tenant's requests one by one until then.
        const until = new Date(Date.now() + times.ttlSeconds * 1000);
        return answer(0n, 0n, { admit_until: until, return_after: until }, false);
      }
      const admission = admissionOf(book, account.plan, { route_mode: cmd.route_mode, proxy_type: cmd.proxy_type, max_credits: null });
      const hold = admission.hold;
      // The account row, locked: what is available cannot change before the debit below.
      const room = (
        await tx.$queryRawUnsafe<{ available: bigint }[]>(
          'SELECT credits_posted - debits_posted - debits_pending AS available FROM accounts WHERE id = $1 FOR UPDATE',
          account.id,
        )
      )[0]!.available;
      const amount = BigInt(cmd.block_tokens) < BigInt(room) ? BigInt(cmd.block_tokens) : BigInt(room);
      if (amount < BigInt(hold) || amount <= 0n) throw new Refused(account.id, admission.minBase, hold);
      let l = lease;
      if (!l) {
        const rows = await tx.$queryRawUnsafe<LeaseRow[]>(
          `WITH a AS (
             INSERT INTO accounts (id, kind, no_overdraft) VALUES ($7, 'lease', true)
           )
           INSERT INTO leases (id, tenant_id, plan_id, pricing_version, admit_until, return_after)
           VALUES ($1::uuid, $2::uuid, $3, $4, now() + make_interval(secs => $5::float8), now() + make_interval(secs => $5::float8 + $6::float8))
           RETURNING id::text, tenant_id::text, plan_id, pricing_version, granted, state, admit_until, return_after, true AS admits`,
          cmd.lease_id,
          cmd.tenant_id,
          planId,
          version,
          times.ttlSeconds,
          times.returnGraceSeconds,
          leaseAccountId(cmd.lease_id),
        );
        l = rows[0]!;
      }
      const moved = await tx.$queryRawUnsafe<{ available: bigint; balance_alert: string; threshold: number }[]>(
        `WITH t AS (
           INSERT INTO transfers (id, debit_account_id, credit_account_id, amount, kind, code)
           VALUES ($1, $2, $3, $4, 'posted', 'lease_grant')
         ), c AS (
           UPDATE accounts SET credits_posted = credits_posted + $4 WHERE id = $3
         ), g AS (
           UPDATE leases SET granted = granted + $4 WHERE id = $5::uuid
         )
         UPDATE accounts a SET debits_posted = a.debits_posted + $4 FROM plans p
          WHERE a.id = $2 AND p.id = a.plan_id
          RETURNING a.credits_posted - a.debits_posted - a.debits_pending AS available, a.balance_alert, p.low_balance_threshold_tokens AS threshold`,
        grantTransferId(cmd.lease_id, cmd.n),
        account.id,
        leaseAccountId(cmd.lease_id),
        amount,
        cmd.lease_id,
      );
      const m = moved[0]!;
      await applyBalanceAlert(tx, account.id, cmd.tenant_id, BigInt(m.available), m.balance_alert, m.threshold);
      return answer(amount, BigInt(l.granted) + amount, l, false);
    });
  } catch (err) {
    if (err instanceof Refused) {
      await db.$transaction((tx) => noteExhaustedOnRefusal(tx, err.accountId, err.cheapest));
      throw new PublicError('INSUFFICIENT_CREDITS', err.message);
    }
    // Two first grants of one lease at once: the loser replays the winner's.
    if (isUniqueViolation(err)) return grantLease(db, pricingVersion, times, cmd);
    throw err;
  }
}

class Refused extends Error {
  constructor(
    readonly accountId: string,
    readonly cheapest: number,
    hold: number,
  ) {
    super(`The balance does not cover this request's ${hold} tokens.`);
  }
}

async function lockLease(tx: Tx, leaseId: string): Promise<LeaseRow | null> {
  const rows = await tx.$queryRawUnsafe<LeaseRow[]>(
    `SELECT id::text, tenant_id::text, plan_id, pricing_version, granted, state, admit_until, return_after,
            state = 'open' AND admit_until > now() AS admits
       FROM leases WHERE id = $1::uuid FOR UPDATE`,
    leaseId,
  );
  return rows[0] ?? null;
}

async function available(tx: Tx, accountId: string): Promise<bigint> {
  const rows = await tx.$queryRawUnsafe<{ available: bigint }[]>(
    'SELECT credits_posted - debits_posted - debits_pending AS available FROM accounts WHERE id = $1',
    accountId,
  );
  return rows[0] ? BigInt(rows[0].available) : 0n;
}

/**
 * Return what is left of every lease past its return_after to its tenant, once per lease
 * (`lease:<id>:return`, and the lease's state): exactly the tokens no settlement took. A
 * settlement arriving later finds the lease returned and takes its charge from the balance
 * (settleBatch). Answers the leases returned and the tokens they gave back (`onReturned`, after
 * each commit).
 */
export async function returnExpiredLeases(
  db: PrismaClient,
  log: Logger,
  limit = 100,
  onReturned?: (tokens: number) => void,
): Promise<number> {
  const due = await db.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id::text FROM leases WHERE state = 'open' AND return_after <= now() ORDER BY return_after LIMIT $1`,
    limit,
  );
  let returned = 0;
  for (const { id } of due) {
    const tokens = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ tenant_id: string; rest: bigint }[]>(
        `SELECT tenant_id::text, granted - used - returned AS rest FROM leases WHERE id = $1::uuid AND state = 'open' FOR UPDATE`,
        id,
      );
      const l = rows[0];
      if (!l) return null;
      const rest = BigInt(l.rest);
      const tenant = `tenant:${l.tenant_id}`;
      // Tenant before lease account: the order grants and settlements lock them in.
      await tx.$executeRawUnsafe(
        `WITH t AS (
           INSERT INTO transfers (id, debit_account_id, credit_account_id, amount, kind, code)
           VALUES ($1, $2, $3, $4, 'posted', 'lease_return')
         ), l AS (
           UPDATE leases SET state = 'returned', returned = returned + $4, returned_at = now() WHERE id = $5::uuid
         ), c AS (
           UPDATE accounts SET credits_posted = credits_posted + $4 WHERE id = $3
         )
         UPDATE accounts SET debits_posted = debits_posted + $4 WHERE id = $2`,
        returnTransferId(id),
        leaseAccountId(id),
        tenant,
        rest,
        id,
      );
      await reviewBalanceAlert(tx, tenant);
      return rest;
    });
    if (tokens === null) continue;
    returned++;
    onReturned?.(Number(tokens));
  }
  if (returned > 0) log.info({ returned }, 'expired leases returned');
  return returned;
}

/** Tokens on the tenant's open leases: granted, not yet used nor returned (shown as reserved). */
export async function leasedTokens(db: PrismaClient | Tx, tenantId: string): Promise<bigint> {
  const rows = await db.$queryRawUnsafe<{ held: bigint }[]>(
    `SELECT COALESCE(sum(granted - used - returned), 0)::bigint AS held FROM leases WHERE tenant_id = $1::uuid AND state = 'open'`,
    tenantId,
  );
  return BigInt(rows[0]?.held ?? 0n);
}
