import type { PrismaClient } from '../generated/prisma/client.js';
import type { Sealer } from '@wdr/kit/sealing';
import { sealClearInputs } from './requests/sealed-inputs.js';
import { purgeResultCache, type ResultCacheSettings } from './result-cache.js';
import { purgeStaleUploads } from './render-uploads.js';

/**
 * Purge what outlived its retention: sealed target URLs of finished requests with their sealed
 * inputs (header and cookie values, browser actions: requests/sealed-inputs.ts), expired results,
 * expired result cache entries (plus, given the cache's bounds, its oldest beyond the total bytes cap),
 * and rendered pages staged but never handed back (render-uploads.ts).
 */
export async function purgeExpired(
  db: PrismaClient,
  now = new Date(),
  resultCache?: Pick<ResultCacheSettings, 'maxTotalBytes'>,
): Promise<{ targets: number; results: number; cacheEntries: number; uploadChunks: number }> {
  const targets = await db.dataRequest.updateMany({
    where: { targetPurgeAt: { lt: now }, OR: [{ targetSealed: { not: null } }, { secretsSealed: { not: null } }] },
    data: { targetSealed: null, secretsSealed: null },
  });
  const results = await db.requestResult.deleteMany({ where: { expiresAt: { lt: now } } });
  const cacheEntries = await purgeResultCache(db, resultCache?.maxTotalBytes, now);
  const uploadChunks = await purgeStaleUploads(db, now);
  return { targets: targets.count, results: results.count, cacheEntries, uploadChunks };
}

/**
 * The retention pass the orchestrator runs at start and every minute (and `admin purge-expired`):
 * rows still holding their inputs in clear are sealed first (requests/sealed-inputs.ts; at most
 * 500 per pass, the rest on the next; not while SEAL_REQUEST_INPUTS is false), then whatever
 * outlived its retention is purged.
 */
export async function retentionPass(
  db: PrismaClient,
  sealer: Sealer,
  now = new Date(),
  resultCache?: Pick<ResultCacheSettings, 'maxTotalBytes'>,
  sealRequestInputs = true,
): Promise<{ sealed: number; targets: number; results: number; cacheEntries: number; uploadChunks: number }> {
  const sealed = sealRequestInputs ? await sealClearInputs(db, sealer) : 0;
  return { sealed, ...(await purgeExpired(db, now, resultCache)) };
}
