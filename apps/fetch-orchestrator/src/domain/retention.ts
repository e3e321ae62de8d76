import type { PrismaClient } from '../generated/prisma/client.js';
import type { Sealer } from '@wdr/kit/sealing';
import { sealClearInputs } from './requests/sealed-inputs.js';
import { purgeResultCache, type ResultCacheSettings } from './result-cache.js';
import { purgeStaleUploads } from './render-uploads.js';

/**
 * The retention pass's statements over the request tables, each reading an index of only what it
 * can touch (migration 20261128110000; retention-plans.test.ts), not the tables' whole history:
 * sealed targets and inputs past their purge time ($1) dropped, results past their expiry deleted.
 */
export const PURGE_TARGETS_SQL = `UPDATE data_requests SET target_sealed = NULL, secrets_sealed = NULL
  WHERE target_purge_at < $1::timestamptz AND (target_sealed IS NOT NULL OR secrets_sealed IS NOT NULL)`;
export const PURGE_RESULTS_SQL = 'DELETE FROM request_results WHERE expires_at < $1::timestamptz';

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
  const targets = await db.$executeRawUnsafe(PURGE_TARGETS_SQL, now);
  const results = await db.$executeRawUnsafe(PURGE_RESULTS_SQL, now);
  const cacheEntries = await purgeResultCache(db, resultCache?.maxTotalBytes, now);
  const uploadChunks = await purgeStaleUploads(db, now);
  return { targets, results, cacheEntries, uploadChunks };
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
