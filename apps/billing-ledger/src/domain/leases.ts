import type { LeaseGrantBody, LeaseReleaseBody, LedgerLeaseGrant, LedgerLeaseRelease, LedgerPriceRow } from '@wdr/contracts';
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
 *   lease:<id>:release    lease -> tenant   (once it stopped admitting: what no request was admitted against)
 *   lease:<id>:return     lease -> tenant   (what is left, once, at return_after)
 * so granted = used + returned + the lease account's balance, which is never negative.
 */
export const leaseAccountId = (leaseId: string) => `lease:${leaseId}`;
export const grantTransferId = (leaseId: string, n: number) => `lease:${leaseId}:grant:${n}`;
export const returnTransferId = (leaseId: string) => `lease:${leaseId}:return`;
export const releaseTransferId = (leaseId: string) => `lease:${leaseId}:release`;
export const useTransferId = (requestId: string) => `use:${requestId}`;

export interface LeaseTerms {
  /** How long a lease admits, from its first grant. */
  ttlSeconds: number;
  /** Then how long before what is left returns: above any request's life. */
  returnGraceSeconds: number;
  /**
   * The most of the tenant's available balance one grant takes (0 < share <= 1), so a small
   * balance is not locked away in leases. A grant whose share would not cover the prompting
   * request is declined (402, nothing written, no balance alert): that tenant's requests are
   * reserved one by one.
   */
  maxBalanceShare: number;
}

interface LeaseRow {
  id: string;
  tenant_id: string;
  plan_id: string;
  pricing_version: number;
  granted: bigint;
  /** What the lease account still has: granted - used - returned. */
  rest: bigint;
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
 * Grant (or top up) a lease: post min(block, share of available) from the tenant's balance to the lease, in
 * one transaction that also opens the lease on its first grant. Refused, with nothing written,
 * exactly as a reservation of the prompting request would be: its price (the pure pricing of
 * @wdr/kit/pricing) must fit in the balance. Idempotent on (lease_id, n): a replay answers the
 * amount first posted. A lease that no longer admits (past admit_until, or returned), and a plan
 * whose policy is not standard (leases serve only that), are answered with nothing granted.
 */
export async function grantLease(
  db: PrismaClient,
  pricingVersion: number,
  terms: LeaseTerms,
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
        const until = new Date(Date.now() + terms.ttlSeconds * 1000);
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
      const free = BigInt(room);
      if (free < BigInt(hold) || free <= 0n) throw new Refused(account.id, admission.minBase, hold);
      const share = BigInt(Math.floor(Number(free) * terms.maxBalanceShare));
      const block = BigInt(cmd.block_tokens);
      const amount = block < share ? block : share;
      if (amount < BigInt(hold)) throw new Declined();
      let l = lease;
      if (!l) {
        const rows = await tx.$queryRawUnsafe<LeaseRow[]>(
          `WITH a AS (
             INSERT INTO accounts (id, kind, no_overdraft) VALUES ($7, 'lease', true)
           )
           INSERT INTO leases (id, tenant_id, plan_id, pricing_version, admit_until, return_after)
           VALUES ($1::uuid, $2::uuid, $3, $4, now() + make_interval(secs => $5::float8), now() + make_interval(secs => $5::float8 + $6::float8))
           RETURNING id::text, tenant_id::text, plan_id, pricing_version, granted, granted - used - returned AS rest, state, admit_until,
                     return_after, true AS admits`,
          cmd.lease_id,
          cmd.tenant_id,
          planId,
          version,
          terms.ttlSeconds,
          terms.returnGraceSeconds,
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
    if (err instanceof Declined) {
      throw new PublicError(
        'INSUFFICIENT_CREDITS',
        'The available balance is too small to lease from; its requests are reserved one by one.',
      );
    }
    if (err instanceof Refused) {
      await db.$transaction((tx) => noteExhaustedOnRefusal(tx, err.accountId, err.cheapest));
      throw new PublicError('INSUFFICIENT_CREDITS', err.message);
    }
    // Two first grants of one lease at once: the loser replays the winner's.
    if (isUniqueViolation(err)) return grantLease(db, pricingVersion, terms, cmd);
    throw err;
  }
}

/** The balance covers the request but is too small to lease from (LeaseTerms.maxBalanceShare). */
class Declined extends Error {}

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
    `SELECT id::text, tenant_id::text, plan_id, pricing_version, granted, granted - used - returned AS rest, state, admit_until,
            return_after, state = 'open' AND admit_until > now() AS admits
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
 * The early return of a lease that stopped admitting (its admit_until passed): what its slot never
 * held, granted - `held_tokens`, goes back to the tenant now (`lease:<id>:release`), so a busy
 * tenant's balance is not left in leases until their return_after. Safe whatever comes later:
 * each request admitted from the lease takes at most its own hold, so what stays (held - used)
 * covers every settlement still to come, and the sweep returns its rest at return_after. At most
 * what the lease still has; once per lease (a repeat answers the amount first released). Refused
 * (409) while the lease still admits; 404 for a lease this ledger does not have.
 */
export async function releaseLease(db: PrismaClient, leaseId: string, cmd: LeaseReleaseBody): Promise<LedgerLeaseRelease> {
  return db.$transaction(async (tx) => {
    const lease = await lockLease(tx, leaseId);
    if (!lease || lease.tenant_id !== cmd.tenant_id) throw new PublicError('NOT_FOUND', 'No such lease.');
    const done = await tx.$queryRawUnsafe<{ amount: bigint }[]>('SELECT amount FROM transfers WHERE id = $1', releaseTransferId(leaseId));
    if (done[0]) return { lease_id: leaseId, released_tokens: Number(done[0].amount), replay: true };
    if (lease.admits) throw new PublicError('CONFLICT', 'The lease still admits requests.');
    if (lease.state !== 'open') return { lease_id: leaseId, released_tokens: 0, replay: false };
    const unheld = BigInt(lease.granted) - BigInt(cmd.held_tokens);
    const rest = BigInt(lease.rest);
    const amount = unheld < rest ? unheld : rest;
    if (amount <= 0n) return { lease_id: leaseId, released_tokens: 0, replay: false };
    await moveBack(tx, releaseTransferId(leaseId), lease.tenant_id, leaseId, amount, false);
    return { lease_id: leaseId, released_tokens: Number(amount), replay: false };
  });
}

/**
 * Lease -> tenant: `amount` back to the tenant's balance by the transfer `transferId` (its
 * statement line is a `lease_return`), the lease's `returned` moved with it and, for the final
 * return, its state. Tenant before lease account: the order grants and settlements lock them in.
 */
async function moveBack(tx: Tx, transferId: string, tenantId: string, leaseId: string, amount: bigint, final: boolean): Promise<void> {
  const tenant = `tenant:${tenantId}`;
  await tx.$executeRawUnsafe(
    `WITH t AS (
       INSERT INTO transfers (id, debit_account_id, credit_account_id, amount, kind, code)
       VALUES ($1, $2, $3, $4, 'posted', 'lease_return')
     ), l AS (
       UPDATE leases SET returned = returned + $4,
              state = CASE WHEN $6 THEN 'returned' ELSE state END,
              returned_at = CASE WHEN $6 THEN now() ELSE returned_at END
        WHERE id = $5::uuid
     ), c AS (
       UPDATE accounts SET credits_posted = credits_posted + $4 WHERE id = $3
     )
     UPDATE accounts SET debits_posted = debits_posted + $4 WHERE id = $2`,
    transferId,
    leaseAccountId(leaseId),
    tenant,
    amount,
    leaseId,
    final,
  );
  await reviewBalanceAlert(tx, tenant);
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
      await moveBack(tx, returnTransferId(id), l.tenant_id, id, rest, true);
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
