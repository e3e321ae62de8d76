import { Router } from 'express';
import { webhooksApi } from '@wdr/contracts';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import type { DispatcherDeps } from '../deps.js';
import { createEndpoint } from '../domain/create-endpoint.js';
import { deleteEndpoint, disableEndpointManually, rotateSecret, updateEndpoint } from '../domain/change-endpoint.js';
import { endpointOf, endpointView } from '../domain/endpoint-views.js';
import { listAttempts, listEndpoints } from '../domain/reads.js';
import { redeliver } from '../domain/redeliver.js';

/** Internal API (`webhooksApi` in @wdr/contracts), reachable only inside the cluster. */
export function internalRoutes(deps: DispatcherDeps): Router {
  const r = Router();
  const api = webhooksApi;
  const endpointIdOf = (req: { params: Record<string, string | undefined> }) =>
    parse(api.readEndpoint.params.endpointId, req.params['endpointId']);

  r.post(api.createEndpoint.route, async (req, res) => {
    const cmd = parse(api.createEndpoint.body, req.body);
    const created = await createEndpoint(deps, cmd);
    // This replica knows at once; the others when the endpoint's notification reaches them.
    deps.subscribers.add(cmd.tenant_id);
    res.status(201).json(created);
  });
  r.get(api.listEndpoints.route, async (req, res) => {
    res.json(await listEndpoints(deps.db, parse(api.listEndpoints.query, req.query)));
  });
  r.get(api.readEndpoint.route, async (req, res) => {
    const { tenant_id } = parse(api.readEndpoint.query, req.query);
    res.json(endpointView(await endpointOf(deps.db, tenant_id, endpointIdOf(req))));
  });
  r.post(api.updateEndpoint.route, async (req, res) => {
    const cmd = parse(api.updateEndpoint.body, req.body);
    const updated = await updateEndpoint(deps, endpointIdOf(req), cmd);
    // Types or scope may have changed: read again (the others hear the endpoint's notification).
    deps.subscribers.add(cmd.tenant_id);
    res.json(updated);
  });
  r.post(api.disableEndpoint.route, async (req, res) => {
    res.json(await disableEndpointManually(deps, endpointIdOf(req), parse(api.disableEndpoint.body, req.body)));
  });
  r.post(api.deleteEndpoint.route, async (req, res) => {
    res.json(await deleteEndpoint(deps, endpointIdOf(req), parse(api.deleteEndpoint.body, req.body)));
  });
  r.post(api.rotateSecret.route, async (req, res) => {
    res.json(await rotateSecret(deps, endpointIdOf(req), parse(api.rotateSecret.body, req.body)));
  });
  r.get(api.listAttempts.route, async (req, res) => {
    res.json(await listAttempts(deps.db, endpointIdOf(req), parse(api.listAttempts.query, req.query)));
  });
  r.post(api.redeliver.route, async (req, res) => {
    const { tenant_id } = parse(api.redeliver.body, req.body);
    const messageId = parse(api.redeliver.params.messageId, req.params['messageId']);
    res.json(await redeliver(deps.db, tenant_id, endpointIdOf(req), messageId));
  });
  return r;
}
