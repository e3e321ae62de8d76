import type { PrismaClient } from '../generated/prisma/client.js';
import { purgeResultCache, type ResultCacheSettings } from './result-cache.js';

/**
 * Purge what outlived its retention: sealed target URLs of finished requests, expired results, and
 * expired result cache entries (plus, given the cache's bounds, its oldest beyond the total bytes cap).
 */
export async function purgeExpired(
  db: PrismaClient,
  now = new Date(),
  resultCache?: Pick<ResultCacheSettings, 'maxTotalBytes'>,
): Promise<{ targets: number; results: number; cacheEntries: number }> {
  const targets = await db.dataRequest.updateMany({
    where: { targetPurgeAt: { lt: now }, targetSealed: { not: null } },
    data: { targetSealed: null },
  });
  const results = await db.requestResult.deleteMany({ where: { expiresAt: { lt: now } } });
  const cacheEntries = await purgeResultCache(db, resultCache?.maxTotalBytes, now);
  return { targets: targets.count, results: results.count, cacheEntries };
}
