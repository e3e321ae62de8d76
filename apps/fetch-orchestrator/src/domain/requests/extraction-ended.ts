import { EXTRACTION_END_KINDS, type ExtractionEndedBody } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { asksForExtraction } from '../request-reads.js';
import { lockRequest } from '../run-http-stage.js';
import { appendEvent } from './events.js';

/**
 * recipe-extractor ended the run of an extraction request: the request's history gets
 * `extraction.completed` or `extraction.failed` (status: the run's, the request's readiness), once.
 * The event is mirrored on request.lifecycle like every other, so webhooks and SSE streams see the
 * extraction end; the stream of an extraction request ends with it. Repeats (a redelivered job)
 * answer `appended: false`.
 */
export async function recordExtractionEnded(
  db: PrismaClient,
  requestId: string,
  body: ExtractionEndedBody,
): Promise<{ appended: boolean }> {
  return db.$transaction(async (tx) => {
    const locked = await lockRequest(tx, requestId);
    const row = locked ? await tx.dataRequest.findUnique({ where: { id: requestId } }) : null;
    if (!row || row.tenantId !== body.tenant_id) throw new PublicError('NOT_FOUND', 'No such request.');
    if (!asksForExtraction(row.options)) throw new PublicError('CONFLICT', 'This request did not ask for extraction.');
    const seen = await tx.requestEvent.findFirst({ where: { requestId, kind: { in: [...EXTRACTION_END_KINDS] } }, select: { seq: true } });
    if (seen) return { appended: false };
    await appendEvent(tx, row, `extraction.${body.status}`, body.status, body.error ? { error: body.error } : {});
    return { appended: true };
  });
}
