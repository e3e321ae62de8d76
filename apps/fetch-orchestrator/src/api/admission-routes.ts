import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../app.js';
import { countActiveRequests } from '../domain/admission.js';

const uuid = z.uuid();
const limit = z.coerce.number().int().min(1).max(10_000_001).default(1_000);

/** Internal: what the gateway's concurrency limit asks before admitting a submission. */
export function admissionRoutes(deps: Pick<OrchestratorDeps, 'db'>): Router {
  const r = Router();
  r.get('/internal/v1/tenants/:tenantId/active-requests', async (req, res) => {
    const tenantId = parse(uuid, req.params['tenantId']);
    const cap = parse(limit, req.query['limit']);
    res.json({ active: await countActiveRequests(deps.db, tenantId, cap) });
  });
  return r;
}
