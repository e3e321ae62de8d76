import { Router, type Response } from 'express';
import { orchestratorApi as api } from '@wdr/contracts';
import { parseOrThrow as parse, PublicError } from '@wdr/kit/errors';
import type { OrchestratorDeps } from '../deps.js';
import { registerLifecycleListeners, releaseLifecycleListener } from '../domain/lifecycle-listeners.js';

/** Listeners of request lifecycles: webhook-dispatcher (tenants with endpoints), gateway instances (open event streams). */
export function lifecycleListenerRoutes(deps: Pick<OrchestratorDeps, 'sql'>): Router {
  const r = Router();
  r.post(api.registerLifecycleListeners.route, async (req, res) => {
    const cmd = parse(api.registerLifecycleListeners.body, req.body);
    res.json(await registerLifecycleListeners(deps.sql, callerOf(res), cmd));
  });
  r.post(api.releaseLifecycleListener.route, async (req, res) => {
    const cmd = parse(api.releaseLifecycleListener.body, req.body);
    res.json(await releaseLifecycleListener(deps.sql, callerOf(res), cmd));
  });
  return r;
}

/** The verified caller the identity gate left (fail closed: none, no registration). */
function callerOf(res: Response): string {
  const caller = (res.locals['caller'] as { service?: unknown } | undefined)?.service;
  if (typeof caller !== 'string') throw new PublicError('UNAUTHENTICATED', 'A valid service identity token is required.');
  return caller;
}
