import type { EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import type { RendererDeps } from '../deps.js';
import { renderFlow } from '../domain/render-flow.js';

type Tx = Prisma.TransactionClient;

/**
 * render.jobs -> the render flow (domain/render-flow.ts: claim, render, hand back). Nothing is
 * recorded here: the flow is safe to repeat by itself (a job redelivered after a crash renders
 * again until its hand-back is accepted; after that the orchestrator's claim answers `skip`), so a
 * processed-event record would only cost a read and an insert per page (the consumer is told so:
 * `recordUntransacted: false`, app.ts).
 */
export function onRenderJobRequested(deps: RendererDeps): EventHandler<Tx, 'render.job_requested'> {
  const render = renderFlow(deps);
  return async (envelope) => {
    await render(envelope.data.request_id);
  };
}
