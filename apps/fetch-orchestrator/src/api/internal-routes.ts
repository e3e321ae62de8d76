import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../app.js';
import { createRequest, readRequest } from '../domain/requests.js';
import { admissionRoutes } from './admission-routes.js';
import { batchRoutes } from './batch-routes.js';
import { renderJobRoutes } from './render-job-routes.js';
import { requestReadRoutes } from './request-read-routes.js';

const uuid = z.uuid();

const createBody = z.object({
  request_id: uuid,
  tenant_id: uuid,
  url: z.url({ protocol: /^https?$/ }).max(4096),
  route_mode: z.enum(['direct', 'auto', 'browser', 'http', 'residential', 'residential_browser']),
  proxy_type: z.enum(['datacenter', 'residential', 'premium']).nullable(),
  max_credits: z.number().int().min(1).nullable(),
  options: z.record(z.string(), z.unknown()),
  input_hash: z.string().length(64),
});


/** Internal API used by the gateway; not exposed outside the cluster. */
export function internalRoutes(deps: OrchestratorDeps, onCreated: () => void): Router {
  const r = Router();
  r.use(admissionRoutes(deps));
  r.use(requestReadRoutes(deps, onCreated));
  r.use(batchRoutes(deps, onCreated));
  r.use(renderJobRoutes(deps, onCreated));
  r.post('/internal/v1/requests', async (req, res) => {
    const cmd = parse(createBody, req.body);
    const view = await createRequest(deps.admission, cmd);
    if (!view.idempotent_replay) onCreated();
    res.status(view.idempotent_replay ? 200 : 201).json(view);
  });
  r.get('/internal/v1/requests/:id', async (req, res) => {
    const id = parse(uuid, req.params['id']);
    const tenantId = parse(uuid, req.query['tenant_id']);
    res.json(await readRequest(deps.db, tenantId, id));
  });
  return r;
}
