import { EXTRACTION_END_KINDS, type StoredEventHistory } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../generated/prisma/client.js';
import { TERMINAL } from './requests/terminal.js';
import { textOfPage } from './result-text.js';

const notFound = () => new PublicError('NOT_FOUND', 'No such request.');

/**
 * A request's events after `afterSeq`, ascending, with its status read in the same snapshot: a
 * terminal status therefore always comes with its terminal event (the stream relies on it).
 */
export async function readEvents(db: PrismaClient, tenantId: string, id: string, afterSeq = 0): Promise<StoredEventHistory> {
  const [request, events, extractionEnd] = await db.$transaction(
    [
      db.dataRequest.findUnique({ where: { id }, select: { tenantId: true, status: true, options: true } }),
      db.requestEvent.findMany({ where: { requestId: id, seq: { gt: afterSeq } }, orderBy: { seq: 'asc' } }),
      db.requestEvent.findFirst({ where: { requestId: id, kind: { in: [...EXTRACTION_END_KINDS] } }, select: { status: true } }),
    ],
    { isolationLevel: 'RepeatableRead' },
  );
  // Another tenant's request is indistinguishable from a missing one.
  if (!request || request.tenantId !== tenantId) throw notFound();
  const extraction = asksForExtraction(request.options);
  return {
    // An extraction request is ready when its extraction ended, not when its page did.
    request_status: !extraction
      ? request.status
      : extractionEnd
        ? extractionEnd.status
        : TERMINAL.has(request.status)
          ? 'queued'
          : request.status,
    ...(extraction ? { extraction: true } : {}),
    events: events.map((e) => ({
      event_id: e.seq,
      kind: e.kind,
      status: e.status,
      payload: e.payload as Record<string, unknown>,
      created_at: e.createdAt.toISOString(),
    })),
  };
}

export function asksForExtraction(options: unknown): boolean {
  const e = (options as { extraction?: { recipe_id?: unknown } | null } | null)?.extraction;
  return typeof e?.recipe_id === 'string';
}

export type ResultFormat = 'html' | 'text';

export interface ResultBody {
  content_type: string;
  body: Buffer;
}

/** Told each time a result's text is derived from its page (once per stored result). */
export interface TextDerivations {
  inc(): void;
}

/**
 * The stored page of a completed request (the claim-check of the HTTP or browser stage), as
 * fetched (or rendered) or as readable text, until it expires.
 *
 * The text is derived once: a rendered page's was taken from the live DOM by the browser stage and
 * stored with it; an HTTP page's is derived from its body at the first `text` read (cheerio, of the
 * elements result_text_selector names when it was given) and stored in the same row, so every later
 * read (and every cache copy made after it) is served from the row without parsing the page again.
 * A `text` read of a stored text never loads the page's bytes.
 */
export async function readResult(
  db: PrismaClient,
  tenantId: string,
  id: string,
  format: ResultFormat,
  now = new Date(),
  derivations?: TextDerivations,
): Promise<ResultBody> {
  const request = await db.dataRequest.findUnique({ where: { id }, select: { tenantId: true, status: true, options: true } });
  if (!request || request.tenantId !== tenantId) throw notFound();
  if (!TERMINAL.has(request.status)) {
    throw new PublicError('RESULT_NOT_READY', `The request is ${request.status}; its result is not ready yet.`);
  }
  if (request.status !== 'completed') {
    throw new PublicError('CONFLICT', `The request ${request.status === 'failed' ? 'failed' : 'was cancelled'}; it has no result.`);
  }
  const expired = () => new PublicError('RESULT_EXPIRED', 'The result of this request has expired.');
  const live = (r: { expiresAt: Date } | null) => r !== null && r.expiresAt > now;
  if (format === 'text') {
    const stored = await db.requestResult.findUnique({ where: { requestId: id }, select: { text: true, expiresAt: true } });
    // Purged by retention, or past its expiry and not yet purged: gone either way.
    if (!stored || !live(stored)) throw expired();
    if (stored.text !== null) return textBody(stored.text);
  }
  const result = await db.requestResult.findUnique({
    where: { requestId: id },
    select: { contentType: true, body: true, text: true, expiresAt: true },
  });
  if (!result || !live(result)) throw expired();
  const body = Buffer.from(result.body);
  if (format === 'html') return { content_type: result.contentType ?? 'application/octet-stream', body };
  if (result.text !== null) return textBody(result.text);
  const selector = (request.options as { result_text_selector?: string }).result_text_selector;
  const text = textOfPage(body, result.contentType, selector);
  // Stored once: two first reads at once both derive it, and the first write stays.
  await db.requestResult.updateMany({ where: { requestId: id, text: null }, data: { text } });
  derivations?.inc();
  return textBody(text);
}

function textBody(text: string): ResultBody {
  return { content_type: 'text/plain; charset=utf-8', body: Buffer.from(text, 'utf8') };
}
