import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { LedgerDeps } from '../app.js';
import { balanceOf, grant } from '../domain/grants.js';
import { reserve } from '../domain/reservations.js';

const uuid = z.uuid();

const reserveBody = z.object({
  request_id: uuid,
  tenant_id: uuid,
  route_mode: z.enum(['direct', 'auto', 'browser', 'http', 'residential', 'residential_browser']),
  proxy_type: z.enum(['datacenter', 'residential', 'premium']).nullable(),
  max_credits: z.number().int().min(1).nullable(),
});

const grantBody = z.object({
  amount: z.number().int().min(1).max(1_000_000_000),
  reference: z.string().min(1).max(200),
});


/** Internal API, reachable only inside the cluster (see k8s NetworkPolicy). */
export function internalRoutes(deps: LedgerDeps): Router {
  const r = Router();
  r.post('/internal/v1/reservations', async (req, res) => {
    const cmd = parse(reserveBody, req.body);
    const result = await reserve(deps.db, deps.env.PRICING_VERSION, cmd);
    res.status(result.replay ? 200 : 201).json(result);
  });
  r.post('/internal/v1/accounts/:tenantId/grants', async (req, res) => {
    const tenantId = parse(uuid, req.params['tenantId']);
    const body = parse(grantBody, req.body);
    res.status(201).json(await grant(deps.db, tenantId, body.amount, body.reference));
  });
  r.get('/internal/v1/accounts/:tenantId/balance', async (req, res) => {
    const tenantId = parse(uuid, req.params['tenantId']);
    res.json(await balanceOf(deps.db, tenantId));
  });
  return r;
}
