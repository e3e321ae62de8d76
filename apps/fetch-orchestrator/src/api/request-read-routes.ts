import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Router } from 'express';
import { orchestratorApi as api } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../deps.js';
import { cancelRequest } from '../domain/cancel.js';
import { listRequests } from '../domain/request-list.js';
import { readEvents, readResult } from '../domain/request-reads.js';
import { retryRequest } from '../domain/retry.js';

/**
 * Internal read side of requests (list, events, result) and the cancel and retry commands; every
 * call names the tenant, and another tenant's request is a 404.
 */
export function requestReadRoutes(deps: OrchestratorDeps, onCommitted: () => void): Router {
  const r = Router();
  r.get(api.listRequests.route, async (req, res) => {
    const q = parse(api.listRequests.query, req.query);
    res.json(await listRequests(deps.db, { tenantId: q.tenant_id, limit: q.limit, status: q.status, cursor: q.cursor }));
  });
  r.get(api.requestEvents.route, async (req, res) => {
    const id = parse(api.requestEvents.params.id, req.params['id']);
    const q = parse(api.requestEvents.query, req.query);
    res.json(await readEvents(deps.db, q.tenant_id, id, q.after));
  });
  r.get(api.requestResult.route, async (req, res) => {
    const id = parse(api.requestResult.params.id, req.params['id']);
    const q = parse(api.requestResult.query, req.query);
    const derived = deps.metrics.counter(
      'result_texts_derived_total',
      'Result texts derived from a stored page (once per result, at its first format=text read; later reads are served stored).',
      [],
    );
    const result = await readResult(deps.db, q.tenant_id, id, q.format, new Date(), derived);
    // The bytes themselves (a BytesAnswer): never base64 in JSON, read from the row a slice at a
    // time as the caller takes them (pipeline: paced by the socket; a caller gone stops the reads).
    res.status(200);
    res.setHeader('Content-Type', result.content_type);
    res.setHeader('Content-Length', String(result.length));
    try {
      await pipeline(Readable.from(result.chunks, { objectMode: false }), res);
    } catch (err) {
      // The headers are out: the only way to tell the caller is to cut the answer short (a caller
      // that went away is not worth a warning).
      if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE')
        deps.log.warn({ err, requestId: id }, 'result stream ended early');
      res.destroy();
    }
  });
  r.post(api.cancelRequest.route, async (req, res) => {
    const id = parse(api.cancelRequest.params.id, req.params['id']);
    const { tenant_id } = parse(api.cancelRequest.body, req.body);
    const { detail, changed } = await cancelRequest(deps.db, tenant_id, id);
    if (changed) onCommitted();
    res.json(detail);
  });
  r.post(api.retryRequest.route, async (req, res) => {
    const sourceId = parse(api.retryRequest.params.id, req.params['id']);
    const body = parse(api.retryRequest.body, req.body);
    const view = await retryRequest(deps.admission, { source_id: sourceId, ...body });
    if (!view.idempotent_replay) onCommitted();
    res.status(view.idempotent_replay ? 200 : 201).json(view);
  });
  return r;
}
