import { createKafkaService } from '@wdr/kit/kafka';
import { internalRoutes } from './api/internal-routes.js';
import { expireStaleReservations } from './domain/expiry.js';
import { returnExpiredLeases } from './domain/leases.js';
import type { LedgerDeps } from './deps.js';
import type { Prisma } from './generated/prisma/client.js';
import { countSettlement, onSettlementBatch, onSettlementRequested } from './kafka/handlers.js';
import { tokenFlowMetrics } from './metrics.js';

export function createLedgerService(deps: LedgerDeps) {
  let sweeper: NodeJS.Timeout | undefined;
  let leaseSweeper: NodeJS.Timeout | undefined;
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [
      {
        group: 'billing-ledger',
        topics: ['billingCommands'],
        handlers: { 'billing.settlement_requested': onSettlementRequested(deps.metrics) },
        // A run of commands settles in one transaction and announces in one outbox insert.
        batchHandlers: { 'billing.settlement_requested': onSettlementBatch(deps.metrics) },
        // Those batches' transactions on node-postgres (kit/pg-sql.ts, LedgerDeps.sql).
        sql: deps.sql,
        concurrency: 3,
        // Settlement is not on anyone's wait: up to a second more of it, so a steady trickle of
        // commands settles a fetch of several at a time (one transaction, one outbox round, one
        // offset commit, and one fetch of the orchestrator's reflection) instead of one command per
        // transaction. A command is about 700 bytes. At 100 ms a batch held 3-4 commands at 80
        // pages/s and the ledger spent 2.1-2.2 ms of CPU per HTTP page, at 300 ms 1.5-1.8; at a few
        // browser pages a second a 300 ms fetch held one or two (bench/README.md). An idle consumer
        // still waits for its first byte (kit), which it settles alone. While commands flow (a fetch
        // filled), the next waits at most 200 ms: the end of a burst of pages settles within that,
        // not a second after its last page.
        fetch: { minBytes: 16 * 1024, maxWaitMs: 1_000, flowingWaitMs: 200 },
      },
    ],
    routes: () => internalRoutes(deps),
    background: {
      start: () => {
        sweeper = setInterval(() => {
          expireStaleReservations(deps.db, deps.env.RESERVATION_TTL_SECONDS, deps.log, 100, (flows) =>
            countSettlement(tokenFlowMetrics(deps.metrics), 'refunded', flows),
          ).catch((err: unknown) => deps.log.warn({ err }, 'reservation expiry failed'));
        }, deps.env.RESERVATION_SWEEP_MS);
        sweeper.unref();
        leaseSweeper = setInterval(() => {
          const tokens = tokenFlowMetrics(deps.metrics);
          returnExpiredLeases(deps.db, deps.log, 100, (returned) => tokens.refunded('refunded', returned)).catch((err: unknown) =>
            deps.log.warn({ err }, 'lease return failed'),
          );
        }, deps.env.LEASE_SWEEP_MS);
        leaseSweeper.unref();
      },
      stop: () => {
        clearInterval(sweeper);
        clearInterval(leaseSweeper);
      },
    },
    close: () => deps.sql.end(),
  });
}
