import { EXTRACTION_END_KINDS, type EventData } from '@wdr/contracts';
import type { Logger } from '@wdr/kit/log';
import type { Prisma } from '../../generated/prisma/client.js';
import { asksForExtraction } from '../request-reads.js';
import { lockRequest } from '../run-http-stage.js';
import { appendEvent } from './events.js';

/**
 * recipe-extractor ended the run of an extraction request (`extraction.run_ended`, written in its
 * outbox with the run's end): the request's history gets `extraction.completed` or
 * `extraction.failed` (status: the run's, the request's readiness), once, in the consumer's
 * transaction. The event is mirrored on request.lifecycle like every other, so webhooks and SSE
 * streams see the extraction end; the stream of an extraction request ends with it. A repeat
 * (a republished outbox row, a redelivery) finds the end in the history and appends nothing.
 * An announcement for a request this service does not hold as an extraction request of that
 * tenant (purged, or not one) has nothing to mark: it is logged and dropped, never dead-lettered.
 */
export async function recordExtractionEnded(
  tx: Prisma.TransactionClient,
  log: Logger,
  tenantId: string,
  data: EventData<'extractionEvents', 'extraction.run_ended'>,
): Promise<{ appended: boolean }> {
  const requestId = data.request_id;
  const locked = await lockRequest(tx, requestId);
  const row = locked ? await tx.dataRequest.findUnique({ where: { id: requestId } }) : null;
  if (!row || row.tenantId !== tenantId || !asksForExtraction(row.options)) {
    log.warn({ request_id: requestId }, 'extraction end for a request that is not an extraction request of its tenant here: dropped');
    return { appended: false };
  }
  const seen = await tx.requestEvent.findFirst({ where: { requestId, kind: { in: [...EXTRACTION_END_KINDS] } }, select: { seq: true } });
  if (seen) return { appended: false };
  await appendEvent(tx, row, `extraction.${data.status}`, data.status, data.error ? { error: data.error } : {});
  return { appended: true };
}
