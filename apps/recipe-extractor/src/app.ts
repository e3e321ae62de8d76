import type { Prisma } from './generated/prisma/client.js';
import { createKafkaService } from '@wdr/kit/kafka';
import { internalRoutes } from './api/internal-routes.js';
import type { ExtractorDeps } from './deps.js';
import { purgeIdempotencyRecords } from './domain/idempotency.js';
import { onExtractionJobRequested, onRepairRequested } from './kafka/handlers.js';

export { createExtractorDeps, type ExtractorDeps } from './deps.js';

/**
 * Recipes and versions (internal HTTP for the gateway), and extraction runs: reserved at admission
 * over HTTP, run when `extraction.jobs` says the page is done; automatic repairs of drifting
 * versions, requested on the same topic by the run that crossed the threshold.
 */
export function createExtractorService(deps: ExtractorDeps) {
  let purgeTimer: NodeJS.Timeout | undefined;
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [
      {
        group: 'recipe-extractor',
        topics: ['extractionJobs'],
        handlers: { 'extraction.job_requested': onExtractionJobRequested(deps), 'extraction.repair_requested': onRepairRequested(deps) },
        // Runs are independent: every partition at once, a few runs per partition (each reads its
        // page over HTTP before its CPU-bound extraction).
        concurrency: 6,
        inFlight: 4,
      },
    ],
    routes: () => internalRoutes(deps),
    background: {
      start: () => {
        purgeTimer = setInterval(() => {
          purgeIdempotencyRecords(deps.db, deps.env.IDEMPOTENCY_RETENTION_HOURS).catch((err: unknown) =>
            deps.log.warn({ err }, 'idempotency purge failed'),
          );
        }, 3_600_000);
        purgeTimer.unref();
      },
      stop: () => clearInterval(purgeTimer),
    },
  });
}
