import request from 'supertest';
import { internalAgent } from '@wdr/testkit';

/**
 * A tenant's available balance as the ledger answers it, read once nothing is held: an earlier
 * request's hold may still be on its way to the ledger (settlement is batched: a few hundred ms),
 * and a test compares balances with nothing in flight. After 15 s it answers whatever is there.
 * (A test that checks a hold itself, as batches.e2e does, reads the balance at once instead.)
 */
export async function settledBalance(fleet: { url: (service: 'billing-ledger') => string }, tenantId: string): Promise<number> {
  for (const deadline = Date.now() + 15_000; ;) {
    const res = await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger').get(
      `/internal/v1/accounts/${tenantId}/balance`,
    );
    const b = res.body as { balance_tokens: number; reserved_tokens: number };
    if (b.reserved_tokens === 0 || Date.now() > deadline) return b.balance_tokens;
    await new Promise((r) => setTimeout(r, 50));
  }
}
