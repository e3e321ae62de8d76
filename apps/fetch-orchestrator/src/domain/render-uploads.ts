import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { parseOrThrow, PublicError } from '@wdr/kit/errors';
import type { PgPool } from '@wdr/kit/pg-listen';
import type { PgSql, PgStatement } from '@wdr/kit/pg-sql';
import {
  orchestratorApi,
  RENDER_OUTCOME_HEADER,
  RENDER_OUTCOME_HEADER_MAX,
  type RenderResult,
  type RenderUploadAnswer,
  type RenderUploadRef,
} from '@wdr/contracts';
import type { PrismaClient } from '../generated/prisma/client.js';
import { TERMINAL } from './requests/terminal.js';

/**
 * A rendered page arrives from browser-renderer as bytes (`renderUploadApi` in @wdr/contracts):
 * written to `render_upload_chunks` as it arrives, in chunks of about CHUNK_BYTES, hashed on the
 * way (SHA-256, incrementally: a few microseconds per network read), through plain node-postgres
 * connections that send each chunk as a binary parameter. Nothing here holds a larger page whole,
 * turns it to text, or parses it: the event loop stays free for the other calls while a 10 MB page
 * arrives. The finishing move (render-jobs.ts, requests/writes.ts) joins the chunks in Postgres.
 * A page within one chunk handed back in one call is read whole instead (receiveWholeUpload) and
 * stored by the finishing move from memory, never staged.
 */
export const CHUNK_BYTES = 1024 * 1024;

/** Staged uploads left behind (a renderer that died between its upload and its result) are purged after this. */
export const UPLOAD_RETENTION_MS = 3600_000;

export interface RenderUploadDeps {
  db: PrismaClient;
  /** Plain connections for the chunks (binary parameters); see `pgPoolFor`. */
  uploads: PgPool;
  /** Largest page the result store takes; an upload may carry its text besides (as much again). */
  maxResultBytes: number;
}

/** What the renderer declared for an upload: Content-Length and the digest header. */
export interface DeclaredUpload {
  contentType: string | undefined;
  length: number | undefined;
  sha256: string | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
const INSERT_CHUNK = 'INSERT INTO render_upload_chunks (request_id, upload_id, seq, chunk) VALUES';
const LIST_WHOLE = 'INSERT INTO render_uploads (request_id, upload_id, bytes, sha256) VALUES';

/** The declared content type, length and digest of an upload, checked before a byte is read. */
function checkDeclared(declared: DeclaredUpload, maxResultBytes: number): { length: number; sha256: string } {
  if (declared.contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/octet-stream') {
    throw new PublicError('MALFORMED_REQUEST', 'An upload is application/octet-stream.');
  }
  const { length, sha256 } = declared;
  if (length === undefined || !Number.isSafeInteger(length) || length < 0) {
    throw new PublicError('MALFORMED_REQUEST', 'An upload declares its Content-Length.');
  }
  if (length > 2 * maxResultBytes) {
    throw new PublicError('PAYLOAD_TOO_LARGE', `An upload carries at most ${2 * maxResultBytes} bytes.`);
  }
  if (sha256 === undefined || !SHA256_HEX.test(sha256)) {
    throw new PublicError('MALFORMED_REQUEST', 'An upload declares its SHA-256 (hex).');
  }
  return { length, sha256 };
}

/** An upload received whole in memory (receiveWholeUpload): its bytes, as checked. */
export interface WholeUpload {
  state: 'stored';
  bytes: number;
  sha256: string;
  page: Buffer;
}

/**
 * The one-call hand-back of a page within one chunk (CHUNK_BYTES; most pages): the upload read
 * whole into memory and checked as a staged one is (declared type, length and digest first, then
 * the bytes against them), not staged: the finishing move stores it from here (render-jobs.ts),
 * where staging wrote it to `render_upload_chunks`, copied it into the result and deleted it, three
 * writes of the page in Postgres for one. Undefined when the declared length is over one chunk:
 * the caller stages it (stageRenderUpload), nothing of the body read.
 */
export async function receiveWholeUpload(
  deps: Pick<RenderUploadDeps, 'maxResultBytes'>,
  declared: DeclaredUpload,
  body: Readable,
): Promise<WholeUpload | undefined> {
  const { length, sha256 } = checkDeclared(declared, deps.maxResultBytes);
  if (length > CHUNK_BYTES) return undefined;
  const parts: Buffer[] = [];
  let total = 0;
  for await (const piece of body) {
    const b = piece as Buffer;
    total += b.length;
    if (total > length) {
      body.destroy();
      throw new PublicError('VALIDATION_FAILED', `The upload is longer than its declared ${length} bytes.`);
    }
    parts.push(b);
  }
  if (total !== length) throw new PublicError('VALIDATION_FAILED', `The upload has ${total} bytes, not the declared ${length}.`);
  const page = parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
  const measured = createHash('sha256').update(page).digest('hex');
  if (measured !== sha256) throw new PublicError('VALIDATION_FAILED', 'The upload does not match its declared SHA-256.');
  return { state: 'stored', bytes: total, sha256: measured, page };
}

/**
 * Stage one upload of `requestId`: the declared length and digest are checked first (a missing or
 * unreasonable one is refused before a byte is read), then the bytes are streamed in. A length or
 * digest that does not match what arrived is refused with VALIDATION_FAILED and nothing stays. A
 * request already terminal answers `skip` without reading the body. The same upload id sent again
 * replaces what it staged before.
 */
export async function stageRenderUpload(
  deps: RenderUploadDeps,
  requestId: string,
  uploadId: string,
  declared: DeclaredUpload,
  body: Readable,
): Promise<RenderUploadAnswer> {
  const { length, sha256 } = checkDeclared(declared, deps.maxResultBytes);
  // Plain statements on the upload pool, as few as can be (two for a page within one chunk): the
  // request's status in the same statement that clears a repeated upload under the same id.
  const found = await deps.uploads.query<{ status: string }>(
    `WITH c AS (DELETE FROM render_upload_chunks WHERE request_id = $1::uuid AND upload_id = $2::uuid),
          u AS (DELETE FROM render_uploads WHERE request_id = $1::uuid AND upload_id = $2::uuid)
     SELECT status FROM data_requests WHERE id = $1::uuid`,
    [requestId, uploadId],
  );
  const row = found.rows[0];
  if (!row) throw new PublicError('NOT_FOUND', 'No such request.');
  if (TERMINAL.has(row.status)) return { state: 'skip', status: row.status };

  const discard = () =>
    deps.uploads.query('DELETE FROM render_upload_chunks WHERE request_id = $1::uuid AND upload_id = $2::uuid', [requestId, uploadId]);
  const hash = createHash('sha256');
  let total = 0;
  let seq = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const take = (): Buffer => {
    const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    return chunk;
  };
  const flush = async () => {
    if (pendingBytes > 0)
      await deps.uploads.query(`${INSERT_CHUNK} ($1::uuid, $2::uuid, $3::int, $4::bytea)`, [requestId, uploadId, seq++, take()]);
  };
  try {
    // Reading waits while a chunk is written: the sender is paced by the database, not buffered here.
    for await (const piece of body) {
      const b = piece as Buffer;
      total += b.length;
      if (total > length) throw new PublicError('VALIDATION_FAILED', `The upload is longer than its declared ${length} bytes.`);
      hash.update(b);
      pending.push(b);
      pendingBytes += b.length;
      if (pendingBytes >= CHUNK_BYTES) await flush();
    }
    if (total !== length) throw new PublicError('VALIDATION_FAILED', `The upload has ${total} bytes, not the declared ${length}.`);
    const measured = hash.digest('hex');
    if (measured !== sha256) throw new PublicError('VALIDATION_FAILED', 'The upload does not match its declared SHA-256.');
    if (seq === 0) {
      // A page within one chunk (most pages): the chunk and the upload's listing in one statement.
      await deps.uploads.query(
        `WITH c AS (${INSERT_CHUNK} ($1::uuid, $2::uuid, 0, $3::bytea)) ${LIST_WHOLE} ($1::uuid, $2::uuid, $4::int, $5)`,
        [requestId, uploadId, take(), total, measured],
      );
    } else {
      await flush();
      await deps.uploads.query(`${LIST_WHOLE} ($1::uuid, $2::uuid, $3::int, $4)`, [requestId, uploadId, total, measured]);
    }
    return { state: 'stored', bytes: total, sha256: measured };
  } catch (err) {
    body.destroy();
    await discard().catch(() => undefined);
    throw err;
  }
}

/**
 * The staged upload a completed outcome names, checked against it: the upload must have arrived
 * whole, with the referenced length (body and text) and digest; else VALIDATION_FAILED, and the
 * request stays as it is (the renderer's job fails and is repeated).
 */
export async function checkStagedUpload(db: PrismaClient, requestId: string, ref: RenderUploadRef): Promise<void> {
  const staged = await db.renderUpload.findUnique({ where: { requestId_uploadId: { requestId, uploadId: ref.upload_id } } });
  if (!staged) throw new PublicError('VALIDATION_FAILED', 'The result names an upload that did not arrive whole.');
  checkUploadRef(ref, staged);
}

/** The reference against what was staged: the same length (body and text together) and digest. */
export function checkUploadRef(ref: RenderUploadRef, staged: { bytes: number; sha256: string }): void {
  if (staged.bytes !== ref.body_bytes + ref.text_bytes || staged.sha256 !== ref.sha256) {
    throw new PublicError('VALIDATION_FAILED', 'The result does not match the length or the SHA-256 of its upload.');
  }
}

/**
 * The outcome of a one-call hand-back (`orchestratorApi.renderJobHandBack`), from its header:
 * base64url of the `RenderResult` JSON, at most RENDER_OUTCOME_HEADER_MAX characters, a completed
 * outcome naming this upload with the length and digest the upload declares. Anything else is
 * refused here, before the body is read: MALFORMED_REQUEST for a header that is missing, too long
 * or not such JSON, VALIDATION_FAILED for an outcome that is not a completed one or names another
 * upload.
 */
export function handBackOutcome(header: string | undefined, uploadId: string, declared: DeclaredUpload): CompletedRender {
  if (header === undefined || header.length > RENDER_OUTCOME_HEADER_MAX || !/^[A-Za-z0-9_-]+$/.test(header)) {
    throw new PublicError('MALFORMED_REQUEST', `A hand-back carries its outcome in ${RENDER_OUTCOME_HEADER} (base64url JSON).`);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    throw new PublicError('MALFORMED_REQUEST', `${RENDER_OUTCOME_HEADER} is not base64url JSON.`);
  }
  const result = parseOrThrow(orchestratorApi.renderJobResult.body, json);
  if (result.outcome !== 'completed') throw new PublicError('VALIDATION_FAILED', 'A hand-back with bytes is a completed outcome.');
  const ref = result.upload;
  if (ref.upload_id !== uploadId || ref.body_bytes + ref.text_bytes !== declared.length || ref.sha256 !== declared.sha256) {
    throw new PublicError('VALIDATION_FAILED', 'The outcome does not name this upload, its length or its SHA-256.');
  }
  return result;
}

type CompletedRender = Extract<RenderResult, { outcome: 'completed' }>;

/** Statements that drop every staged upload of a request (run with its finishing move). */
export function dropStagedStatements(sql: PgSql, requestId: string): PgStatement<unknown>[] {
  return [
    sql.count(
      'WITH c AS (DELETE FROM render_upload_chunks WHERE request_id = $1::uuid) DELETE FROM render_uploads WHERE request_id = $1::uuid',
      [requestId],
    ),
  ];
}

/** The retention purge: staged uploads older than UPLOAD_RETENTION_MS (their request ended otherwise). */
export async function purgeStaleUploads(db: PrismaClient, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - UPLOAD_RETENTION_MS);
  const chunks = await db.renderUploadChunk.deleteMany({ where: { createdAt: { lt: before } } });
  await db.renderUpload.deleteMany({ where: { createdAt: { lt: before } } });
  return chunks.count;
}
