import { Router } from 'express';
import { orchestratorApi } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../app.js';
import { countActiveRequests } from '../domain/admission.js';

/** Internal: what the gateway's concurrency limit asks before admitting a submission. */
export function admissionRoutes(deps: Pick<OrchestratorDeps, 'db'>): Router {
  const r = Router();
  const ep = orchestratorApi.activeRequests;
  r.get(ep.route, async (req, res) => {
    const tenantId = parse(ep.params.tenantId, req.params['tenantId']);
    const cap = parse(ep.query.shape.limit, req.query['limit']);
    res.json({ active: await countActiveRequests(deps.db, tenantId, cap) });
  });
  return r;
}
