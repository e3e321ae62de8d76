import type { z } from 'zod';
import type { ExtractionJobRequested } from '@wdr/contracts';
import type { EventHandler } from '@wdr/kit/kafka';
import type { ExtractorDeps } from '../deps.js';
import type { Prisma } from '../generated/prisma/client.js';
import { runExtraction } from '../domain/run-extraction.js';

/** extraction.jobs -> run (or fail) the request's extraction. */
export const onExtractionJobRequested =
  (deps: ExtractorDeps): EventHandler<Prisma.TransactionClient> =>
  async (envelope, ctx) => {
    const data = envelope.data as z.infer<typeof ExtractionJobRequested>;
    await runExtraction({ db: deps.db, orchestrator: deps.orchestrator, log: deps.log, metrics: deps.metrics, maxPageBytes: deps.env.EXTRACTION_MAX_PAGE_BYTES }, envelope.tenant_id, data, ctx);
  };
