import type { EventData } from '@wdr/contracts';
import type { Prisma } from '../../generated/prisma/client.js';
import { appendEvent } from './events.js';

/**
 * Reflect the ledger's resolution of a request's reservation, in the caller's transaction: its
 * token_state, the CAPTCHA tokens charged, the base price of the stage it was settled at (`auto`
 * finished over HTTP, a cache hit: the detail's `base_tokens` becomes what was charged, no longer
 * the admission's price; a refund keeps the admission's, since nothing was charged), a workflow run's charge against its project's budget cap,
 * and a `tokens.<state>` event.
 */
export async function reflectResolvedReservation(
  tx: Prisma.TransactionClient,
  data: EventData<'billingEvents', 'billing.reservation_resolved'>,
): Promise<void> {
  // The ledger's cost lines are the truth for CAPTCHA tokens charged (debited at settlement).
  const [row] = await tx.dataRequest.updateManyAndReturn({
    where: { id: data.request_id },
    data: {
      tokenState: data.token_state,
      ...(data.captcha_tokens !== undefined ? { captchaTokens: data.captcha_tokens } : {}),
      ...(data.token_state === 'settled' && data.base_tokens !== undefined ? { baseTokens: data.base_tokens } : {}),
    },
  });
  if (!row) return; // a reservation whose request was never stored: nothing to reflect
  // A workflow run now holds what it was charged against its project's budget cap (0 when refunded).
  if (row.projectId) await tx.dataRequest.update({ where: { id: row.id }, data: { budgetCommitted: data.charged_tokens } });
  await appendEvent(tx, row, `tokens.${data.token_state}`, row.status, { charged_tokens: data.charged_tokens });
}
