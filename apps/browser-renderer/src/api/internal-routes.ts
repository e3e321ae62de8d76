import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { RendererDeps } from '../deps.js';
import { readDebugArtifact } from '../domain/debug-artifacts.js';

const params = z.object({ requestId: z.uuid(), name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/) });
const query = z.object({ tenant_id: z.uuid() });

/** Internal API (the gateway): one debug artifact of a failed request, for its tenant only. */
export function internalRoutes(deps: RendererDeps): Router {
  const r = Router();
  r.get('/internal/v1/debug-artifacts/:requestId/:name', async (req, res) => {
    const p = parse(params, req.params);
    const q = parse(query, req.query);
    res.json(await readDebugArtifact({ db: deps.db, sealer: deps.artifactSealer }, { requestId: p.requestId, name: p.name, tenantId: q.tenant_id }));
  });
  return r;
}
