import { Router } from 'express';
import { orchestratorApi as api } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../deps.js';
import { createRequest } from '../domain/requests/create.js';
import { readRequest } from '../domain/requests/read.js';
import { admissionRoutes } from './admission-routes.js';
import { batchRoutes } from './batch-routes.js';
import { lifecycleListenerRoutes } from './lifecycle-listener-routes.js';
import { renderJobRoutes } from './render-job-routes.js';
import { requestReadRoutes } from './request-read-routes.js';

/** Internal API used by the gateway; not exposed outside the cluster. */
export function internalRoutes(deps: OrchestratorDeps, onCreated: () => void): Router {
  const r = Router();
  r.use(admissionRoutes(deps));
  r.use(requestReadRoutes(deps, onCreated));
  r.use(batchRoutes(deps, onCreated));
  r.use(renderJobRoutes(deps, onCreated));
  r.use(lifecycleListenerRoutes(deps));
  r.post(api.createRequest.route, async (req, res) => {
    const cmd = parse(api.createRequest.body, req.body);
    const view = await createRequest(deps.admission, cmd);
    if (!view.idempotent_replay) onCreated();
    res.status(view.idempotent_replay ? 200 : 201).json(view);
  });
  r.get(api.readRequest.route, async (req, res) => {
    const id = parse(api.readRequest.params.id, req.params['id']);
    const tenantId = parse(api.readRequest.query.shape.tenant_id, req.query['tenant_id']);
    res.json(await readRequest(deps.sql, tenantId, id));
  });
  return r;
}
