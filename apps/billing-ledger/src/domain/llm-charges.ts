import type { LedgerLlmCharge, LlmChargeHoldBody, LlmChargeSettleBody, LlmOperationKind } from '@wdr/contracts';
import { isUniqueViolation } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import type { LlmCharge, Plan, Prisma, PrismaClient } from '../generated/prisma/client.js';
import {
  availableBalance,
  createTransfer,
  credit,
  debitWithAlert,
  insertTransfers,
  resolveHolds,
  REVENUE_ACCOUNT,
  tenantAccount,
} from './accounts.js';
import { applyBalanceAlert, reviewBalanceAlert } from './balance-alerts.js';

type Tx = Prisma.TransactionClient;

const holdId = (operationId: string) => `llm:${operationId}`;
const WHAT: Record<LlmOperationKind, string> = { recipe_generation: 'recipe generation', recipe_repair: 'recipe repair' };

/**
 * Paid LLM operations (recipe generation and automatic repair), billed per the plan's recipe
 * `billing` terms in two steps:
 *   preflight  before any model call, hold `preflight_required_balance_tokens` (a pending transfer
 *              `llm:<op>`, statement type `<kind>_hold`); 402 INSUFFICIENT_CREDITS with nothing
 *              written when the balance cannot cover it;
 *   settle     after the operation, the exact charge: the provider's cost of the model's usage with
 *              the plan's markup, in tokens of the plan's token value, rounded up, capped by
 *              `max_llm_charge_tokens`; 0 for a failed operation unless `failed_operations_charged`.
 *              Posted from the hold (the rest released); above the hold, a posted
 *              `llm:<op>:extra` for what the balance has, the remainder written off as uncollected.
 * Both are idempotent by the operation id; a settlement resolves the hold exactly once.
 */
export async function holdLlmCharge(db: PrismaClient, cmd: LlmChargeHoldBody): Promise<LedgerLlmCharge> {
  const existing = await db.llmCharge.findUnique({ where: { operationId: cmd.operation_id } });
  if (existing) return replay(db, existing, cmd.tenant_id);
  try {
    return await db.$transaction(async (tx) => {
      const account = await tenantAccount(tx, cmd.tenant_id);
      const plan = await tx.plan.findUniqueOrThrow({ where: { id: account.plan.id } });
      const hold = BigInt(plan.preflightRequiredBalanceTokens);
      const debited = await debitWithAlert(tx, account.id, hold, 'pending');
      if (!debited) {
        throw new PublicError(
          'INSUFFICIENT_CREDITS',
          `An LLM ${WHAT[cmd.kind]} needs ${hold} tokens available before it starts (preflight_required_balance_tokens); the balance is lower.`,
        );
      }
      await insertTransfers(tx, [
        {
          id: holdId(cmd.operation_id),
          debitAccountId: account.id,
          creditAccountId: REVENUE_ACCOUNT,
          amount: hold,
          kind: 'pending',
          code: `${cmd.kind}_hold`,
          memo: `${cmd.memo}: preflight hold`,
        },
      ]);
      const row = await tx.llmCharge.create({
        data: { operationId: cmd.operation_id, tenantId: cmd.tenant_id, kind: cmd.kind, state: 'held', heldTokens: hold },
      });
      await applyBalanceAlert(tx, account.id, cmd.tenant_id, debited.available, debited.alert, account.plan.lowBalanceThresholdTokens);
      await credit(tx, REVENUE_ACCOUNT, hold, 'pending');
      return view(row, debited.available, false);
    });
  } catch (err) {
    // Two first calls at once: the loser replays the winner.
    if (isUniqueViolation(err)) {
      const winner = await db.llmCharge.findUnique({ where: { operationId: cmd.operation_id } });
      if (winner) return replay(db, winner, cmd.tenant_id);
    }
    throw err;
  }
}

export async function settleLlmCharge(db: PrismaClient, operationId: string, cmd: LlmChargeSettleBody): Promise<LedgerLlmCharge> {
  return db.$transaction(async (tx) => {
    await tx.$queryRawUnsafe('SELECT 1 FROM llm_charges WHERE operation_id = $1 FOR UPDATE', operationId);
    const row = await tx.llmCharge.findUnique({ where: { operationId } });
    if (!row || row.tenantId !== cmd.tenant_id) throw new PublicError('NOT_FOUND', 'No such LLM operation.');
    const account = await tenantAccount(tx, cmd.tenant_id);
    if (row.state !== 'held') return view(row, await availableBalance(tx, account.id), true);
    const plan = await tx.plan.findUniqueOrThrow({ where: { id: account.plan.id } });
    const kind = row.kind as LlmOperationKind;
    const charge =
      cmd.outcome === 'failed' && !plan.failedOperationsCharged ? 0n : llmChargeTokens(plan, BigInt(cmd.provider_cost_nano_usd));
    const usage = `${cmd.calls} model call(s), ${cmd.prompt_tokens} prompt + ${cmd.completion_tokens} completion tokens`;
    const memo = `${cmd.memo}: ${cmd.outcome === 'failed' ? 'failed, ' : ''}${usage}`;
    const fromHold = await resolveHolds(
      tx,
      [{ id: holdId(operationId), amount: row.heldTokens, debitAccountId: account.id, creditAccountId: REVENUE_ACCOUNT, requestId: null }],
      charge,
      kind,
      memo,
    );
    let extra = 0n;
    if (charge > fromHold) {
      const available = await availableBalance(tx, account.id);
      extra = charge - fromHold < available ? charge - fromHold : available > 0n ? available : 0n;
      if (extra > 0n) {
        await createTransfer(
          tx,
          {
            id: `${holdId(operationId)}:extra`,
            debitAccountId: account.id,
            creditAccountId: REVENUE_ACCOUNT,
            amount: extra,
            code: kind,
            memo: `${memo} (above the preflight hold)`,
          },
          'posted',
        );
      }
    }
    const updated = await tx.llmCharge.update({
      where: { operationId },
      data: {
        state: fromHold + extra > 0n ? 'charged' : 'released',
        chargedTokens: fromHold + extra,
        uncollectedTokens: charge - fromHold - extra,
        calls: cmd.calls,
        promptTokens: BigInt(cmd.prompt_tokens),
        completionTokens: BigInt(cmd.completion_tokens),
        providerCostNanoUsd: BigInt(cmd.provider_cost_nano_usd),
        resolvedAt: new Date(),
      },
    });
    await reviewBalanceAlert(tx, account.id);
    return view(updated, await availableBalance(tx, account.id), false);
  });
}

/** Provider cost × (1 + markup) in tokens of the plan's value, rounded up, at most max_llm_charge_tokens. */
export function llmChargeTokens(
  plan: Pick<Plan, 'markupBasisPoints' | 'userTokenValueNanoUsd' | 'maxLlmChargeTokens'>,
  providerCostNanoUsd: bigint,
): bigint {
  const numerator = providerCostNanoUsd * BigInt(10_000 + plan.markupBasisPoints);
  const denominator = 10_000n * BigInt(plan.userTokenValueNanoUsd);
  const tokens = (numerator + denominator - 1n) / denominator;
  const cap = BigInt(plan.maxLlmChargeTokens);
  return tokens < cap ? tokens : cap;
}

async function replay(db: PrismaClient, row: LlmCharge, tenantId: string): Promise<LedgerLlmCharge> {
  if (row.tenantId !== tenantId) throw new PublicError('IDEMPOTENCY_CONFLICT', 'This operation id belongs to another tenant.');
  const account = await db.$transaction((tx: Tx) => tenantAccount(tx, tenantId));
  return view(row, await availableBalance(db as unknown as Tx, account.id), true);
}

function view(row: LlmCharge, balance: bigint, replayed: boolean): LedgerLlmCharge {
  return {
    operation_id: row.operationId,
    kind: row.kind as LlmOperationKind,
    state: row.state as LedgerLlmCharge['state'],
    held_tokens: Number(row.heldTokens),
    charged_tokens: Number(row.chargedTokens),
    uncollected_tokens: Number(row.uncollectedTokens),
    balance_tokens: Number(balance),
    replay: replayed,
  };
}
