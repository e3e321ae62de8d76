import type { EventHandler } from '@wdr/kit/kafka';
import { generationDepsOf, type ExtractorDeps } from '../deps.js';
import type { Prisma } from '../generated/prisma/client.js';
import { runRepair } from '../domain/repairs/run-repair.js';
import { runExtraction } from '../domain/run-extraction.js';

/** extraction.jobs -> run (or fail) the request's extraction. */
export const onExtractionJobRequested =
  (deps: ExtractorDeps): EventHandler<Prisma.TransactionClient, 'extraction.job_requested'> =>
  async (envelope, ctx) => {
    await runExtraction(
      {
        db: deps.db,
        orchestrator: deps.orchestrator,
        log: deps.log,
        metrics: deps.metrics,
        maxPageBytes: deps.env.EXTRACTION_MAX_PAGE_BYTES,
        budget: { maxOutputChars: deps.env.EXTRACTION_MAX_OUTPUT_CHARS, maxMs: deps.env.EXTRACTION_MAX_MS },
        repair: deps.repair,
        turns: deps.turns,
      },
      envelope.tenant_id,
      envelope.data,
      ctx,
    );
  };

/** extraction.jobs -> carry out a repair requested when a run crossed the drift threshold. */
export const onRepairRequested =
  (deps: ExtractorDeps): EventHandler<Prisma.TransactionClient, 'extraction.repair_requested'> =>
  async (envelope, ctx) => {
    await runRepair(generationDepsOf(deps), envelope.tenant_id, envelope.data, ctx);
  };
