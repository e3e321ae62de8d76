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

/** A result being read: its type and length, and its bytes as they are read from the row. */
export interface ResultBody {
  content_type: string;
  length: number;
  /** The bytes, a chunk at a time (each read from the row when the previous one was taken). */
  chunks: AsyncIterable<Buffer>;
}

/** Told each time a result's text is derived from its page (once per stored result). */
export interface TextDerivations {
  inc(): void;
}

/**
 * How much of a stored page one read holds at a time: the page is read from its row in slices of
 * this size (`substring` of the bytea), each when the previous one was sent, so a reader holds one
 * slice in the orchestrator, never the page.
 */
export const RESULT_CHUNK_BYTES = 1024 * 1024;

const expired = () => new PublicError('RESULT_EXPIRED', 'The result of this request has expired.');

/**
 * The stored page of a completed request (the claim-check of the HTTP or browser stage), as
 * fetched (or rendered) or as readable text, until it expires.
 *
 * The page's bytes are read from the row a slice at a time as they are consumed (never the whole
 * page at once). A row purged while it is read ends the chunks with RESULT_EXPIRED.
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
  // The row without its page: octet_length reads the stored value's header, not the value.
  const [row] = await db.$queryRaw<{ content_type: string | null; length: number; has_text: boolean; expires_at: Date }[]>`
    SELECT content_type, octet_length(body)::int AS length, text IS NOT NULL AS has_text, expires_at
      FROM request_results WHERE request_id = ${id}::uuid`;
  // Purged by retention, or past its expiry and not yet purged: gone either way.
  if (!row || row.expires_at <= now) throw expired();
  if (format === 'html') {
    return { content_type: row.content_type ?? 'application/octet-stream', length: row.length, chunks: slicesOf(db, id, row.length) };
  }
  if (row.has_text) {
    const stored = await db.requestResult.findUnique({ where: { requestId: id }, select: { text: true } });
    if (stored?.text == null) throw expired();
    return textBody(stored.text);
  }
  const selector = (request.options as { result_text_selector?: string }).result_text_selector;
  // First reads at once on this replica share one derivation (one parse of the page, not one each).
  let pending = deriving.get(id);
  if (!pending) {
    pending = deriveText(db, id, selector, derivations).finally(() => deriving.delete(id));
    deriving.set(id, pending);
  }
  return textBody(await pending);
}

/** Derivations in progress on this replica, by request id. */
const deriving = new Map<string, Promise<string>>();

async function deriveText(db: PrismaClient, id: string, selector: string | undefined, derivations?: TextDerivations): Promise<string> {
  const result = await db.requestResult.findUnique({ where: { requestId: id }, select: { contentType: true, body: true, text: true } });
  if (!result) throw expired();
  // Stored since this read looked (a derivation that just ended): nothing to parse.
  if (result.text !== null) return result.text;
  const text = textOfPage(Buffer.from(result.body), result.contentType, selector);
  // Stored once: first reads on two replicas at once both derive it, and the first write stays.
  await db.requestResult.updateMany({ where: { requestId: id, text: null }, data: { text } });
  derivations?.inc();
  return text;
}

async function* slicesOf(db: PrismaClient, id: string, length: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < length; offset += RESULT_CHUNK_BYTES) {
    const size = Math.min(RESULT_CHUNK_BYTES, length - offset);
    // substring of a bytea is 1-based.
    const [slice] = await db.$queryRaw<{ part: Uint8Array | null }[]>`
      SELECT substring(body FROM ${offset + 1}::int FOR ${size}::int) AS part FROM request_results WHERE request_id = ${id}::uuid`;
    if (!slice?.part || slice.part.length !== size) throw expired();
    yield Buffer.from(slice.part.buffer, slice.part.byteOffset, slice.part.byteLength);
  }
}

function textBody(text: string): ResultBody {
  const body = Buffer.from(text, 'utf8');
  return {
    content_type: 'text/plain; charset=utf-8',
    length: body.length,
    chunks: (async function* () {
      if (body.length > 0) yield body;
    })(),
  };
}

/** A result's bytes read whole (tests, and callers that need the page in memory anyway). */
export async function bytesOf(result: ResultBody): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of result.chunks) parts.push(part);
  return Buffer.concat(parts);
}
