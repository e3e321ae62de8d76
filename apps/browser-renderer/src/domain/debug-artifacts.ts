import { PublicError } from '@wdr/kit/errors';
import type { Sealer } from '@wdr/kit/sealing';
import type { DebugArtifactBody, DebugArtifactListing } from '@wdr/contracts';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { FailureEvidence } from './render-job.js';

const aad = (requestId: string, name: string) => `${requestId}/${name}`;

/**
 * Store what a failed render left (opt-in): sealed with AES-256-GCM, bound to the request and the
 * artifact's name, kept with its tenant, expiring after the retention. Idempotent: a repeated job
 * replaces its own artifacts.
 */
export async function storeDebugArtifacts(
  deps: { db: PrismaClient; sealer: Sealer; retentionHours: number },
  ids: { requestId: string; tenantId: string },
  evidence: FailureEvidence,
): Promise<DebugArtifactListing> {
  const expiresAt = new Date(Date.now() + deps.retentionHours * 3600_000);
  const files: { name: string; contentType: string; bytes: Buffer }[] = [
    ...(evidence.screenshot ? [{ name: 'screenshot.png', contentType: 'image/png', bytes: evidence.screenshot }] : []),
    { name: 'report.json', contentType: 'application/json', bytes: Buffer.from(JSON.stringify(evidence.report, null, 2)) },
  ];
  await deps.db.$transaction(
    files.map((f) =>
      deps.db.debugArtifact.upsert({
        where: { requestId_name: { requestId: ids.requestId, name: f.name } },
        create: {
          requestId: ids.requestId,
          name: f.name,
          tenantId: ids.tenantId,
          contentType: f.contentType,
          bytes: f.bytes.length,
          sealed: new Uint8Array(deps.sealer.sealBytes(f.bytes, aad(ids.requestId, f.name))),
          expiresAt,
        },
        update: {
          contentType: f.contentType,
          bytes: f.bytes.length,
          sealed: new Uint8Array(deps.sealer.sealBytes(f.bytes, aad(ids.requestId, f.name))),
          expiresAt,
        },
      }),
    ),
  );
  return {
    items: files.map((f) => ({ name: f.name, content_type: f.contentType, bytes: f.bytes.length })),
    expires_at: expiresAt.toISOString(),
  };
}

/** One artifact for its tenant; another tenant's, an expired or a missing one is a 404 alike. */
export async function readDebugArtifact(
  deps: { db: PrismaClient; sealer: Sealer },
  q: { requestId: string; name: string; tenantId: string },
  now = new Date(),
): Promise<DebugArtifactBody> {
  const row = await deps.db.debugArtifact.findUnique({ where: { requestId_name: { requestId: q.requestId, name: q.name } } });
  if (!row || row.tenantId !== q.tenantId || row.expiresAt <= now) throw new PublicError('NOT_FOUND', 'No such debug artifact.');
  let bytes: Buffer;
  try {
    bytes = deps.sealer.openBytes(Buffer.from(row.sealed), aad(q.requestId, q.name));
  } catch {
    // Sealed under a key that was since replaced: as good as purged.
    throw new PublicError('NOT_FOUND', 'No such debug artifact.');
  }
  return { content_type: row.contentType, body_base64: bytes.toString('base64') };
}

export async function purgeExpiredArtifacts(db: PrismaClient, now = new Date()): Promise<number> {
  const { count } = await db.debugArtifact.deleteMany({ where: { expiresAt: { lte: now } } });
  return count;
}
