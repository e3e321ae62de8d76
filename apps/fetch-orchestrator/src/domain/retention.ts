import type { PrismaClient } from '../generated/prisma/client.js';

/** Purge what outlived its retention: sealed target URLs of finished requests, and expired results. */
export async function purgeExpired(db: PrismaClient, now = new Date()): Promise<{ targets: number; results: number }> {
  const targets = await db.dataRequest.updateMany({
    where: { targetPurgeAt: { lt: now }, targetSealed: { not: null } },
    data: { targetSealed: null },
  });
  const results = await db.requestResult.deleteMany({ where: { expiresAt: { lt: now } } });
  return { targets: targets.count, results: results.count };
}
