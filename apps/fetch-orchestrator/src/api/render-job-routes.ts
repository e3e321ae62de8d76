import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import { RenderResult } from '@wdr/contracts';
import type { OrchestratorDeps } from '../app.js';
import { acceptRenderResult, startRenderJob } from '../domain/render-jobs.js';

const uuid = z.uuid();

/** Internal routes browser-renderer calls for each render job (contract: @wdr/contracts RENDER_PATHS). */
export function renderJobRoutes(deps: OrchestratorDeps, onCommitted: () => void): Router {
  const r = Router();
  const renderDeps = {
    db: deps.db,
    sealer: deps.sealer,
    maxResultBytes: deps.env.MAX_RESULT_BYTES,
    resultRetentionHours: deps.env.RESULT_RETENTION_HOURS,
  };
  r.post('/internal/v1/render-jobs/:id/start', async (req, res) => {
    const answer = await startRenderJob(renderDeps, parse(uuid, req.params['id']));
    onCommitted();
    res.json(answer);
  });
  r.post('/internal/v1/render-jobs/:id/result', async (req, res) => {
    const id = parse(uuid, req.params['id']);
    const answer = await acceptRenderResult(renderDeps, id, parse(RenderResult, req.body));
    if (answer.accepted) onCommitted();
    res.json(answer);
  });
  return r;
}
