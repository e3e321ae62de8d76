import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { RenderUploadRef } from '@wdr/contracts';
import { stageRenderUpload, type RenderUploadDeps } from '../src/domain/render-uploads.js';

/** The page as browser-renderer sends it: the document, then its text, in `pieces` reads. */
export function uploadOf(body: Buffer, text: string): { bytes: Buffer; textBytes: Buffer; sha256: string } {
  const textBytes = Buffer.from(text, 'utf8');
  const bytes = Buffer.concat([body, textBytes]);
  return { bytes, textBytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Stage a rendered page through the upload path (as the route does) and answer the reference a result names. */
export async function stagePage(deps: RenderUploadDeps, requestId: string, body: Buffer | string, text = ''): Promise<RenderUploadRef> {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const { bytes, textBytes, sha256 } = uploadOf(b, text);
  const uploadId = randomUUID();
  const answer = await stageRenderUpload(
    deps,
    requestId,
    uploadId,
    { contentType: 'application/octet-stream', length: bytes.length, sha256 },
    Readable.from(piecesOf(bytes, 64 * 1024)),
  );
  if (answer.state !== 'stored') throw new Error(`the upload was not stored: ${answer.status}`);
  return { upload_id: uploadId, body_bytes: b.length, text_bytes: textBytes.length, sha256 };
}

/** `bytes` in reads of `size`, as a socket delivers them. */
export function piecesOf(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}
