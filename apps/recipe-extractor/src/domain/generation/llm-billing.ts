import { ledgerApi, type LlmOperationKind } from '@wdr/contracts';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';

/**
 * What the LLM calls of one generation or repair cost, and its bill at billing-ledger: a preflight
 * hold before the first model call (402 INSUFFICIENT_CREDITS refuses the operation there), the
 * exact charge after it. The heuristic never comes here: deterministic generation is not an LLM
 * operation. The operation id is the idempotency key of both steps (a redelivered repair or a
 * retried generation holds and charges once).
 */
export interface LlmPrices {
  promptNanoUsdPerToken: number;
  completionNanoUsdPerToken: number;
}

export interface LlmBillingDeps {
  ledger: ServiceClient;
  prices: LlmPrices;
}

export interface LlmUsage {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export class LlmBill {
  readonly usage: LlmUsage = { calls: 0, prompt_tokens: 0, completion_tokens: 0 };

  private constructor(
    private readonly deps: LlmBillingDeps,
    private readonly tenantId: string,
    readonly operationId: string,
    private readonly memo: string,
  ) {}

  /** The preflight: throws the ledger's PublicError (402 INSUFFICIENT_CREDITS) when the balance is short. */
  static async open(deps: LlmBillingDeps, tenantId: string, operationId: string, kind: LlmOperationKind, memo: string): Promise<LlmBill> {
    await callInternal(deps.ledger, ledgerApi.holdLlmCharge, { body: { tenant_id: tenantId, operation_id: operationId, kind, memo } });
    return new LlmBill(deps, tenantId, operationId, memo);
  }

  /** One model call (its usage as the provider reported it; a call without usage counts as made). */
  add(usage: { prompt_tokens: number; completion_tokens: number } | undefined): void {
    this.usage.calls += 1;
    this.usage.prompt_tokens += usage?.prompt_tokens ?? 0;
    this.usage.completion_tokens += usage?.completion_tokens ?? 0;
  }

  /** The exact charge; answers the tokens charged. */
  async settle(outcome: 'succeeded' | 'failed'): Promise<number> {
    const cost =
      this.usage.prompt_tokens * this.deps.prices.promptNanoUsdPerToken +
      this.usage.completion_tokens * this.deps.prices.completionNanoUsdPerToken;
    const settled = await callInternal(this.deps.ledger, ledgerApi.settleLlmCharge, {
      params: { operationId: this.operationId },
      body: { tenant_id: this.tenantId, outcome, ...this.usage, provider_cost_nano_usd: cost, memo: this.memo },
    });
    return settled.charged_tokens;
  }
}
