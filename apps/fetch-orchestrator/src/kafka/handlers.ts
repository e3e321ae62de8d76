import type { EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import { appendEvent } from '../domain/requests/events.js';
import { runHttpStage, type HttpStageDeps } from '../domain/run-http-stage.js';

type Tx = Prisma.TransactionClient;

/** fetch.jobs -> run the HTTP stage. */
export const onFetchJobRequested =
  (deps: HttpStageDeps): EventHandler<Tx, 'fetch.job_requested'> =>
  async (envelope, ctx) => {
    await runHttpStage(deps, envelope.data.request_id, ctx);
  };

/** billing.events -> reflect the resolved reservation in the request's token_state. */
export const onReservationResolved: EventHandler<Tx, 'billing.reservation_resolved'> = async (envelope, ctx) => {
  const { data } = envelope;
  await ctx.transaction(async (tx) => {
    // The ledger's cost lines are the truth for CAPTCHA tokens charged (debited at settlement).
    const [row] = await tx.dataRequest.updateManyAndReturn({
      where: { id: data.request_id },
      data: { tokenState: data.token_state, ...(data.captcha_tokens !== undefined ? { captchaTokens: data.captcha_tokens } : {}) },
    });
    if (!row) return; // a reservation whose request was never stored: nothing to reflect
    // A workflow run now holds what it was charged against its project's budget cap (0 when refunded).
    if (row.projectId) await tx.dataRequest.update({ where: { id: row.id }, data: { budgetCommitted: data.charged_tokens } });
    await appendEvent(tx, row, `tokens.${data.token_state}`, row.status, { charged_tokens: data.charged_tokens });
  });
};
