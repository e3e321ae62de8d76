import { Router } from 'express';
import { z } from 'zod';
import { rendererApi } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { RendererDeps } from '../deps.js';
import { readDebugArtifact } from '../domain/debug-artifacts.js';

const ep = rendererApi.debugArtifact;
const params = z.object(ep.params);

/** Internal API (the gateway): one debug artifact of a failed request, for its tenant only. */
export function internalRoutes(deps: RendererDeps): Router {
  const r = Router();
  r.get(ep.route, async (req, res) => {
    const p = parse(params, req.params);
    const q = parse(ep.query, req.query);
    res.json(
      await readDebugArtifact(
        { db: deps.db, sealer: deps.artifactSealer },
        { requestId: p.requestId, name: p.name, tenantId: q.tenant_id },
      ),
    );
  });
  return r;
}
