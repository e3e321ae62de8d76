import { TOPICS } from '@wdr/contracts';
import { createKafkaService } from '@wdr/kit/kafka';
import { internalRoutes } from './api/internal-routes.js';
import type { OrchestratorDeps } from './deps.js';
import { retentionPass } from './domain/retention.js';
import type { Prisma } from './generated/prisma/client.js';
import { onExtractionRunEnded, onFetchJobRequested, onReservationResolved, onReservationsResolved } from './kafka/handlers.js';
import { pgConnectionFor } from '@wdr/kit/pg-listen';

/** How often leases that admit no more are released (a lease admits for the ledger's LEASE_TTL_S, 60 s). */
const LEASE_RELEASE_EVERY_MS = 10_000;

export function createOrchestratorService(deps: OrchestratorDeps) {
  let purgeTimer: NodeJS.Timeout | undefined;
  let leaseTimer: NodeJS.Timeout | undefined;
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    // Separate groups so slow fetches never hold back billing updates.
    consumers: [
      {
        group: 'fetch-orchestrator.http-stage',
        topics: ['fetchJobs'],
        handlers: { 'fetch.job_requested': onFetchJobRequested(deps.httpStage) },
        // The processed record and the stage's writes on node-postgres (kit/pg-sql.ts), with its moves.
        sql: deps.sql,
        // Every partition at once, and several jobs per partition: a slow target must not hold up
        // the jobs queued behind it on its partition. Jobs are independent, so order is not needed.
        concurrency: TOPICS.fetchJobs.partitions,
        inFlight: deps.env.FETCH_CONCURRENCY,
      },
      {
        group: 'fetch-orchestrator.billing',
        topics: ['billingEvents'],
        handlers: { 'billing.reservation_resolved': onReservationResolved },
        // The ledger announces a settled batch together: its resolutions are reflected in one transaction.
        batchHandlers: { 'billing.reservation_resolved': onReservationsResolved },
        sql: deps.batchSql,
        // A request's token_state is no one's wait: fetches of up to 100 ms' worth, one transaction each.
        fetch: { minBytes: 16 * 1024, maxWaitMs: 100 },
        concurrency: 2,
      },
      {
        group: 'fetch-orchestrator.extraction-events',
        topics: ['extractionEvents'],
        handlers: { 'extraction.run_ended': onExtractionRunEnded(deps.log) },
        concurrency: 2,
      },
    ],
    // A route's commit that wrote outbox rows wakes the relay by its own notification; a nudge from
    // here is needed only while the relay does not listen (a nudge per commit was a round each).
    routes: (relay) => internalRoutes(deps, () => relay.nudgeUnlessListening()),
    // A batch of 1,000 jobs, each with its options and a URL of up to 4 KiB; a rendered page of up
    // to MAX_RESULT_BYTES no longer comes as JSON (its bytes are streamed: domain/render-uploads.ts).
    jsonLimit: '32mb',
    background: {
      start: () => {
        deps.routes.pool.watch(pgConnectionFor(deps.env.DATABASE_URL).config);
        const pass = () => {
          retentionPass(deps.db, deps.sealer, new Date(), deps.resultCache, deps.env.SEAL_REQUEST_INPUTS).catch((err: unknown) =>
            deps.log.warn({ err }, 'retention purge failed'),
          );
        };
        // At start too: rows stored before inputs were sealed get sealed without waiting a minute.
        pass();
        purgeTimer = setInterval(pass, 60_000);
        purgeTimer.unref();
        // HTTP stages run where admitted: their claims renewed, and those that ran out queued (domain/local-runs.ts).
        deps.admission.localRuns?.start();
        // Credit leases that admit no more give back what they never held (domain/leases.ts).
        const leases = deps.admission.leases;
        if (leases) {
          leaseTimer = setInterval(() => {
            leases.releaseExpired().catch((err: unknown) => deps.log.warn({ err }, 'lease release pass failed'));
          }, LEASE_RELEASE_EVERY_MS);
          leaseTimer.unref();
        }
      },
      stop: async () => {
        clearInterval(purgeTimer);
        clearInterval(leaseTimer);
        // Before the relay stops: what still runs here is handed back to fetch.jobs through the outbox.
        await deps.admission.localRuns?.stop();
        await deps.routes.pool.shutdown();
        await deps.uploads.end();
      },
    },
    close: () => Promise.all([deps.sql.end(), deps.batchSql.end()]).then(() => undefined),
  });
}
