import { Router } from 'express';
import { z } from 'zod';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../app.js';
import { cancelRequest } from '../domain/cancel.js';
import { listRequests } from '../domain/request-list.js';
import { readEvents, readResult } from '../domain/request-reads.js';
import { retryRequest } from '../domain/retry.js';

const uuid = z.uuid();
const tenantQuery = z.object({ tenant_id: uuid });

const listQuery = z.object({
  tenant_id: uuid,
  limit: z.coerce.number().int().min(1).max(100).default(50),
  status: z.enum(['pending', 'running', 'solving_captcha', 'completed', 'failed', 'cancelled']).optional(),
  cursor: z.string().optional(),
});

const eventsQuery = z.object({ tenant_id: uuid, after: z.coerce.number().int().min(0).max(2_147_483_647).default(0) });
const resultQuery = z.object({ tenant_id: uuid, format: z.enum(['html', 'text']).default('html') });
const retryBody = z.object({ tenant_id: uuid, request_id: uuid, input_hash: z.string().length(64) });

/**
 * Internal read side of requests (list, events, result) and the cancel and retry commands; every
 * call names the tenant, and another tenant's request is a 404.
 */
export function requestReadRoutes(deps: OrchestratorDeps, onCommitted: () => void): Router {
  const r = Router();
  r.get('/internal/v1/requests', async (req, res) => {
    const q = parse(listQuery, req.query);
    res.json(await listRequests(deps.db, { tenantId: q.tenant_id, limit: q.limit, status: q.status, cursor: q.cursor }));
  });
  r.get('/internal/v1/requests/:id/events', async (req, res) => {
    const id = parse(uuid, req.params['id']);
    const q = parse(eventsQuery, req.query);
    res.json(await readEvents(deps.db, q.tenant_id, id, q.after));
  });
  r.get('/internal/v1/requests/:id/result', async (req, res) => {
    const id = parse(uuid, req.params['id']);
    const q = parse(resultQuery, req.query);
    const result = await readResult(deps.db, q.tenant_id, id, q.format);
    // JSON keeps the internal client one shape; results are capped at MAX_RESULT_BYTES.
    res.json({ content_type: result.content_type, body_base64: result.body.toString('base64') });
  });
  r.post('/internal/v1/requests/:id/cancel', async (req, res) => {
    const id = parse(uuid, req.params['id']);
    const { tenant_id } = parse(tenantQuery, req.body);
    const { detail, changed } = await cancelRequest(deps.db, tenant_id, id);
    if (changed) onCommitted();
    res.json(detail);
  });
  r.post('/internal/v1/requests/:id/retry', async (req, res) => {
    const sourceId = parse(uuid, req.params['id']);
    const body = parse(retryBody, req.body);
    const view = await retryRequest(deps.admission, { source_id: sourceId, ...body });
    if (!view.idempotent_replay) onCommitted();
    res.status(view.idempotent_replay ? 200 : 201).json(view);
  });
  return r;
}
