import { Router } from 'express';
import { orchestratorApi as api } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../deps.js';
import { createBatch, readBatch } from '../domain/batches.js';

/** Internal batch admission and read, called by the gateway. */
export function batchRoutes(deps: OrchestratorDeps, onCommitted: () => void): Router {
  const r = Router();
  r.post(api.createBatch.route, async (req, res) => {
    const cmd = parse(api.createBatch.body, req.body);
    const view = await createBatch(deps.admission, cmd);
    if (!view.idempotent_replay) onCommitted();
    res.status(view.idempotent_replay ? 200 : 201).json(view);
  });
  r.get(api.readBatch.route, async (req, res) => {
    const id = parse(api.readBatch.params.id, req.params['id']);
    const tenantId = parse(api.readBatch.query.shape.tenant_id, req.query['tenant_id']);
    res.json(await readBatch(deps.db, tenantId, id));
  });
  return r;
}
