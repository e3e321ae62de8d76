import { PublicError } from '@wdr/kit/errors';
import { enqueue, makeEnvelope } from '@wdr/kit/kafka';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { availableBalance, createTransfer, ensureTenantAccount, resolvePending, REVENUE_ACCOUNT } from './accounts.js';
import { networkClassOf, priceOf, tariffOf, type NetworkClass } from './pricing.js';

export interface ReserveCommand {
  request_id: string;
  tenant_id: string;
  route_mode: string;
  proxy_type: string | null;
  max_credits: number | null;
}

export interface ReservationView {
  request_id: string;
  pricing_version: number;
  proxy_type: string;
  base_tokens: number;
  /** Tokens charged by this call: 0 when it replays an existing reservation. */
  charged_tokens: number;
  balance_tokens: number;
  quote: null;
  replay: boolean;
}

const reservationTransferId = (requestId: string) => `reserve:${requestId}`;

/**
 * Admission: reserve the base price of a request as a pending transfer from the tenant's account.
 * Refused (and nothing written) when the balance cannot cover it or the ceiling is below the price.
 * Idempotent per request id.
 */
export async function reserve(db: PrismaClient, pricingVersion: number, cmd: ReserveCommand): Promise<ReservationView> {
  try {
    return await db.$transaction(async (tx) => {
      const existing = await tx.reservation.findUnique({ where: { requestId: cmd.request_id } });
      const accountId = await ensureTenantAccount(tx, cmd.tenant_id);
      if (existing) {
        return view(existing, Number(await availableBalance(tx, accountId)), true);
      }
      const networkClass = networkClassOf(cmd.route_mode, cmd.proxy_type);
      const base = await priceOf(tx, pricingVersion, networkClass, tariffOf(cmd.route_mode, 'reserve'));
      if (cmd.max_credits !== null && cmd.max_credits < base) {
        throw new PublicError('BUDGET_BELOW_BASE_PRICE', `max_credits_per_request is below the base price of ${base} tokens.`, {
          details: [{ field: 'max_credits_per_request', issue: `must be >= ${base}` }],
        });
      }
      await createTransfer(
        tx,
        { id: reservationTransferId(cmd.request_id), debitAccountId: accountId, creditAccountId: REVENUE_ACCOUNT, amount: BigInt(base), code: 'reservation', requestId: cmd.request_id },
        'pending',
      );
      const created = await tx.reservation.create({
        data: {
          requestId: cmd.request_id,
          tenantId: cmd.tenant_id,
          transferId: reservationTransferId(cmd.request_id),
          amount: BigInt(base),
          routeMode: cmd.route_mode,
          proxyType: networkClass,
          pricingVersion,
          maxCredits: cmd.max_credits,
          state: 'reserved',
        },
      });
      return view(created, Number(await availableBalance(tx, accountId)), false);
    });
  } catch (err) {
    // Two concurrent admissions of one request id: the loser replays the winner's reservation.
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      return reserve(db, pricingVersion, cmd);
    }
    throw err;
  }
}

function view(
  r: { requestId: string; pricingVersion: number; proxyType: string; amount: bigint },
  balance: number,
  replay: boolean,
): ReservationView {
  return {
    request_id: r.requestId,
    pricing_version: r.pricingVersion,
    proxy_type: r.proxyType,
    base_tokens: Number(r.amount),
    charged_tokens: replay ? 0 : Number(r.amount),
    balance_tokens: balance,
    quote: null,
    replay,
  };
}

export interface SettlementCommand {
  request_id: string;
  outcome: 'completed' | 'failed' | 'cancelled';
  route_mode: string;
  captcha_tokens: number;
}

/**
 * Resolve a reservation exactly once, inside the caller's transaction: a completed request is
 * charged the base price of its terminal stage plus CAPTCHA tokens, capped by what was reserved
 * and by max_credits_per_request; failed and cancelled requests are refunded in full.
 */
export async function settle(tx: Prisma.TransactionClient, cmd: SettlementCommand): Promise<void> {
  const rows = await tx.$queryRawUnsafe<{ request_id: string }[]>(
    'SELECT request_id FROM reservations WHERE request_id = $1::uuid FOR UPDATE',
    cmd.request_id,
  );
  if (rows.length === 0) throw new Error(`no reservation for request ${cmd.request_id}`);
  const r = await tx.reservation.findUniqueOrThrow({ where: { requestId: cmd.request_id } });
  if (r.state !== 'reserved') return;

  let charge = 0n;
  if (cmd.outcome === 'completed') {
    const base = await priceOf(tx, r.pricingVersion, r.proxyType as NetworkClass, tariffOf(cmd.route_mode, 'settle'));
    charge = BigInt(base + cmd.captcha_tokens);
    if (r.maxCredits !== null && charge > BigInt(r.maxCredits)) charge = BigInt(r.maxCredits);
  }
  await resolvePending(tx, r.transferId, charge, cmd.outcome === 'completed' ? 'settlement' : 'refund');
  const posted = charge > r.amount ? r.amount : charge;
  const state = cmd.outcome === 'completed' ? 'settled' : 'refunded';
  await tx.reservation.update({
    where: { requestId: r.requestId },
    data: { state, chargedTokens: posted, resolvedAt: new Date() },
  });
  await enqueue(
    tx,
    'billingEvents',
    r.requestId,
    makeEnvelope('billingEvents', 'billing.reservation_resolved', r.tenantId, {
      request_id: r.requestId,
      token_state: state,
      charged_tokens: Number(posted),
    }),
  );
}
