import { Router } from 'express';
import { orchestratorApi } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../deps.js';
import { countActiveRequests } from '../domain/admission.js';

/**
 * Deprecated, kept for one release: what gateways of the previous release ask before admitting a
 * submission. The orchestrator is rolled out before the gateway, so old gateway pods call this
 * until they are replaced; today's gateway passes the ceiling with the create instead
 * (`concurrency` in orchestratorApi.createRequest). Remove with the next release.
 */
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
