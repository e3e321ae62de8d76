import { ledgerApi } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import type { ProxyTrafficUsage, StatementPage, TokenBalance } from '../../models/billing.js';

/**
 * The tenant's money, read from billing-ledger (the only owner of it). The ledger answers with
 * exactly the public shapes; nothing about providers, routes or the operator's accounts is in them.
 */
export async function readUsage(deps: Pick<GatewayDeps, 'ledger'>, tenantId: string): Promise<ProxyTrafficUsage> {
  return callInternal(deps.ledger, ledgerApi.usage, { params: { tenantId } });
}

export async function readBalance(deps: Pick<GatewayDeps, 'ledger'>, tenantId: string): Promise<TokenBalance> {
  const b = await callInternal(deps.ledger, ledgerApi.balance, { params: { tenantId } });
  return {
    balance_tokens: b.balance_tokens,
    reserved_tokens: b.reserved_tokens,
    plan_id: b.plan_id,
    low_balance_threshold_tokens: b.low_balance_threshold_tokens,
  };
}

export const STATEMENT_PAGE = { min: 1, max: 100, default: 50 } as const;

export async function readStatement(
  deps: Pick<GatewayDeps, 'ledger'>,
  tenantId: string,
  q: { cursor?: string | undefined; limit?: number | undefined },
): Promise<StatementPage> {
  const limit = q.limit ?? STATEMENT_PAGE.default;
  if (!Number.isInteger(limit) || limit < STATEMENT_PAGE.min || limit > STATEMENT_PAGE.max) {
    throw new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: [{ field: 'limit', issue: 'must be an integer 1..100' }],
    });
  }
  if (q.cursor !== undefined && !/^[A-Za-z0-9_-]{1,500}$/.test(q.cursor)) {
    throw new PublicError('VALIDATION_FAILED', 'The cursor is not valid.', {
      details: [{ field: 'cursor', issue: 'not a cursor from this API' }],
    });
  }
  return callInternal(deps.ledger, ledgerApi.statement, {
    params: { tenantId },
    query: { limit, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}) },
  });
}
