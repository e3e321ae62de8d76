import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../deps.js';
import { concurrentReads, readLimitsOf, takeReadRate } from '../domain/limits/reads.js';
import { preAuthenticated } from './pre-authentication.js';

const READS = '/api/v1/data/';
const STREAM = /^\/api\/v1\/data\/requests\/[^/]+\/events\/stream\/?$/i;

function refusedRead(deps: Pick<GatewayDeps, 'metrics'>, err: unknown): void {
  if (!(err instanceof PublicError) || (err.code !== 'RATE_LIMITED' && err.code !== 'CONCURRENCY_LIMITED')) return;
  deps.metrics
    .counter('reads_refused_total', 'Data API reads refused by a per-tenant read limit.', ['outcome'] as const)
    .inc({ outcome: err.code === 'RATE_LIMITED' ? 'rate_limited' : 'concurrency_limited' });
}

/**
 * The read limits of the data API (domain/limits/reads.ts), after authentication (the pre-body
 * check verified the tenant) and before the route: every GET takes a unit of the tenant's read rate;
 * every one but an event stream (capped on its own, src/sse) holds one of the tenant's concurrent
 * read places on this replica until its answer is finished or the client went away.
 */
export function limitReads(deps: Pick<GatewayDeps, 'env' | 'log' | 'metrics' | 'redis'>): RequestHandler {
  const gate = concurrentReads();
  return async (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.path.toLowerCase().startsWith(READS)) return next();
    const tenant = preAuthenticated(req, 'api_key');
    if (!tenant) return next();
    try {
      await takeReadRate(deps, tenant, res);
      if (!STREAM.test(req.path)) {
        const release = gate.enter(tenant.tenantId, readLimitsOf(deps, tenant).maxConcurrentReads, res);
        res.once('close', release);
      }
    } catch (err) {
      refusedRead(deps, err);
      return next(err);
    }
    next();
  };
}
