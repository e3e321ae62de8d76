import { TOPICS } from '@wdr/contracts';
import { createKafkaService } from '@wdr/kit/kafka';
import { internalRoutes } from './api/internal-routes.js';
import type { RendererDeps } from './deps.js';
import { purgeExpiredArtifacts } from './domain/debug-artifacts.js';
import type { Prisma } from './generated/prisma/client.js';
import { onRenderJobRequested } from './kafka/handlers.js';

export { createRendererDeps, type RendererDeps } from './deps.js';

/**
 * browser-renderer: takes render jobs from `render.jobs` no faster than its Chromium pool has free
 * pages, renders them, and hands the results back to the orchestrator; keeps the encrypted debug
 * artifacts of failed renders for their retention.
 */
export function createRendererService(deps: RendererDeps) {
  let purgeTimer: NodeJS.Timeout | undefined;
  const service = createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [
      {
        group: 'browser-renderer',
        topics: ['renderJobs'],
        handlers: { 'render.job_requested': onRenderJobRequested(deps) },
        // Back-pressure: never more jobs rendering than the pool has page slots (the render flow
        // holds one from claim to render's end), and a quarter more in flight, so that a job is
        // ready to claim a slot the moment a render ends while the last is still handed back.
        // Jobs are independent, so several per partition may run at once.
        concurrency: TOPICS.renderJobs.partitions,
        inFlight: deps.pool.slots + Math.ceil(deps.pool.slots / 4),
        // The render flow is idempotent by its claim (kafka/handlers.ts): no processed-event records.
        recordUntransacted: false,
      },
    ],
    routes: () => internalRoutes(deps),
    // Ready means a browser really launched and answers, not that a binary exists.
    readiness: [
      { name: 'chromium', check: async () => deps.pool.ready() },
      // Reported, not deciding: false only when a development setting runs Chromium without its sandbox.
      { name: 'chromium_sandbox', check: () => deps.pool.sandbox().sandboxed, detail: () => deps.pool.sandbox().detail, required: false },
    ],
    background: {
      start: () => {
        purgeTimer = setInterval(() => {
          purgeExpiredArtifacts(deps.db).catch((err: unknown) => deps.log.warn({ err }, 'debug artifact purge failed'));
        }, 60_000);
        purgeTimer.unref();
      },
      stop: () => clearInterval(purgeTimer),
    },
  });
  // The pool (and the egress gate its browsers go through) outlives the consumers on both ends:
  // browsers are up before the first job arrives,
  // and on SIGTERM the renders in flight finish (and are handed back and committed) before the
  // browsers close, so a rolling deploy never fails a request.
  return {
    ...service,
    start: async () => {
      // Starts the egress gate, then the browsers; throws when Chromium cannot run sandboxed (unless allowed).
      await deps.pool.start();
      await service.start();
    },
    stop: async () => {
      await service.stop();
      await deps.pool.stop();
    },
  };
}
