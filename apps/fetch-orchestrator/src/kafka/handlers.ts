import type { BatchHandler, EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import type { Logger } from '@wdr/kit/log';
import type { RawSql } from '@wdr/kit/db';
import { recordExtractionEnded } from '../domain/requests/extraction-ended.js';
import { reflectResolvedReservation, reflectResolvedReservations } from '../domain/requests/reservation-resolved.js';
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
  await ctx.transaction((tx) => reflectResolvedReservation(tx, envelope.data));
};

/**
 * billing.events, a run of resolutions at once (the ledger settles a batch of pages and announces
 * them together): one transaction and one statement for the run, the same effects as the single
 * handler's for each in turn.
 */
export const onReservationsResolved: BatchHandler<Tx, 'billing.reservation_resolved'> = async (envelopes, ctx) => {
  const reflect = (tx: RawSql, fresh: typeof envelopes) =>
    reflectResolvedReservations(
      tx,
      fresh.map((e) => ({ data: e.data, requestId: ctx.requestIdOf(e) })),
    );
  // One raw statement: on the consumer's node-postgres connections when it has them (kit/pg-sql.ts).
  await (ctx.transactionOnSql ? ctx.transactionOnSql(reflect) : ctx.transaction(reflect));
};

/** extraction.events -> the request's history gets its extraction end (once). */
export const onExtractionRunEnded =
  (log: Logger): EventHandler<Tx, 'extraction.run_ended'> =>
  async (envelope, ctx) => {
    await ctx.transaction(async (tx) => {
      await recordExtractionEnded(tx, log, envelope.tenant_id, envelope.data);
    });
  };
