import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { LedgerDeps } from '../app.js';
import { balanceOf, fund, type FundingKind } from '../domain/funding.js';
import { planOf } from '../domain/plans.js';
import { readReservation, reserve, reserveBatch } from '../domain/reservations.js';
import { authorizeStep } from '../domain/settlement.js';
import { statementOf } from '../domain/statement.js';
import { usageOf } from '../domain/usage.js';

const uuid = z.uuid();
const reference = z.string().min(1).max(200);

const reserveItem = z.object({
  request_id: uuid,
  route_mode: z.enum(['direct', 'auto', 'browser', 'http', 'residential', 'residential_browser']),
  proxy_type: z.enum(['datacenter', 'residential', 'premium']).nullable(),
  max_credits: z.number().int().min(1).nullable(),
});

const reserveBody = reserveItem.extend({ tenant_id: uuid });

const batchBody = z.object({
  tenant_id: uuid,
  items: z.array(reserveItem).min(1).max(1000),
});

const stepBody = z.object({
  step_id: z.string().min(1).max(100),
  stage: z.enum(['http', 'browser']).optional(),
  captcha_solves: z.number().int().min(0).default(0),
  traffic_bytes: z.number().int().min(0).default(0),
});

const fundingBody = z.object({
  amount: z.number().int().min(1).max(1_000_000_000),
  reference,
  memo: z.string().max(500).optional(),
});

const correctionBody = z.object({
  amount: z
    .number()
    .int()
    .min(-1_000_000_000)
    .max(1_000_000_000)
    .refine((n) => n !== 0, 'must not be 0'),
  reference,
  memo: z.string().min(1).max(500),
});

const statementQuery = z.object({
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/** Internal API, reachable only inside the cluster (see k8s NetworkPolicy). */
export function internalRoutes(deps: LedgerDeps): Router {
  const r = Router();
  const version = deps.env.PRICING_VERSION;
  const admissions = deps.metrics.counter('reservations_total', 'Reservation requests, by outcome.', ['outcome']);

  r.post('/internal/v1/reservations', async (req, res) => {
    const cmd = parse(reserveBody, req.body);
    try {
      const result = await reserve(deps.db, version, cmd);
      admissions.inc({ outcome: result.replay ? 'replayed' : 'admitted' });
      res.status(result.replay ? 200 : 201).json(result);
    } catch (err) {
      admissions.inc({ outcome: 'refused' });
      throw err;
    }
  });
  r.post('/internal/v1/reservations/batch', async (req, res) => {
    const cmd = parse(batchBody, req.body);
    const result = await reserveBatch(deps.db, version, cmd);
    res.status(result.replay ? 200 : 201).json(result);
  });
  r.get('/internal/v1/reservations/:requestId', async (req, res) => {
    res.json(await readReservation(deps.db, parse(uuid, req.params['requestId'])));
  });
  r.post('/internal/v1/reservations/:requestId/steps', async (req, res) => {
    const requestId = parse(uuid, req.params['requestId']);
    res.json(await authorizeStep(deps.db, requestId, parse(stepBody, req.body)));
  });

  const funding = (path: string, kind: FundingKind, body: typeof fundingBody | typeof correctionBody) =>
    r.post(`/internal/v1/accounts/:tenantId/${path}`, async (req, res) => {
      const tenantId = parse(uuid, req.params['tenantId']);
      const b = parse(body, req.body);
      const result = await fund(deps.db, kind, { tenant_id: tenantId, amount: b.amount, reference: b.reference, memo: b.memo ?? null });
      res.status(result.created ? 201 : 200).json(result);
    });
  funding('grants', 'grant', fundingBody);
  funding('top-ups', 'top_up', fundingBody);
  funding('corrections', 'correction', correctionBody);

  r.get('/internal/v1/accounts/:tenantId/balance', async (req, res) => {
    res.json(await balanceOf(deps.db, parse(uuid, req.params['tenantId'])));
  });
  r.get('/internal/v1/accounts/:tenantId/statement', async (req, res) => {
    const tenantId = parse(uuid, req.params['tenantId']);
    res.json(await statementOf(deps.db, tenantId, parse(statementQuery, req.query)));
  });
  r.get('/internal/v1/accounts/:tenantId/usage', async (req, res) => {
    res.json(await usageOf(deps.db, parse(uuid, req.params['tenantId'])));
  });
  r.get('/internal/v1/accounts/:tenantId/plan', async (req, res) => {
    res.json(await planOf(deps.db, parse(uuid, req.params['tenantId']), version));
  });
  return r;
}
