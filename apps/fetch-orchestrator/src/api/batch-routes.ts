import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../app.js';
import { createBatch, readBatch } from '../domain/batches.js';

const uuid = z.uuid();
const mode = z.enum(['direct', 'auto', 'browser', 'http', 'residential', 'residential_browser']);

const createBody = z.object({
  batch_id: uuid,
  tenant_id: uuid,
  input_hash: z.string().length(64),
  jobs: z
    .array(
      z.object({
        url: z.url({ protocol: /^https?$/ }).max(4096),
        route_mode: mode,
        proxy_type: z.enum(['datacenter', 'residential', 'premium']).nullable(),
        max_credits: z.number().int().min(1).nullable(),
        options: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1)
    .max(1000),
});

/** Internal batch admission and read, called by the gateway. */
export function batchRoutes(deps: OrchestratorDeps, onCommitted: () => void): Router {
  const r = Router();
  r.post('/internal/v1/batches', async (req, res) => {
    const cmd = parse(createBody, req.body);
    const view = await createBatch(deps.admission, cmd);
    if (!view.idempotent_replay) onCommitted();
    res.status(view.idempotent_replay ? 200 : 201).json(view);
  });
  r.get('/internal/v1/batches/:id', async (req, res) => {
    const id = parse(uuid, req.params['id']);
    const tenantId = parse(uuid, req.query['tenant_id']);
    res.json(await readBatch(deps.db, tenantId, id));
  });
  return r;
}
