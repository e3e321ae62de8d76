import type { EventHandler } from '@wdr/kit/kafka';
import type { Prisma } from '../generated/prisma/client.js';
import type { RendererDeps } from '../deps.js';
import { renderFlow } from '../domain/render-flow.js';

type Tx = Prisma.TransactionClient;

/**
 * render.jobs -> the render flow (domain/render-flow.ts: claim, render, hand back), and only then
 * the event recorded as processed. Redelivered after a crash anywhere, the flow is safe to repeat.
 */
export function onRenderJobRequested(deps: RendererDeps): EventHandler<Tx, 'render.job_requested'> {
  const render = renderFlow(deps);
  return async (envelope, ctx) => {
    if (await ctx.alreadyProcessed()) return;
    const { request_id: requestId } = envelope.data;
    await render(requestId);
    // Recorded in a transaction of the array form (one statement, no interactive transaction).
    await ctx.writes([]);
  };
}
