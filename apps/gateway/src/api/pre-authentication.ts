import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { PublicError } from '@wdr/kit/errors';
import type { AuthFailureThrottle } from '../domain/limits/auth-failures.js';
import type { AuthenticatedTenant } from '../domain/tenants/tenants.js';

export type SecurityScheme = 'api_key' | 'bearer' | 'project_key';

/**
 * The credential each part of the public API takes (every operation of the OpenAPI document under
 * these prefixes names exactly this scheme; an e2e test holds them together).
 */
export const SCHEME_BY_PREFIX: readonly (readonly [string, SecurityScheme])[] = [
  ['/api/v1/data/', 'api_key'],
  ['/api/v1/client/', 'bearer'],
  ['/api/v1/browser/', 'project_key'],
];

const verified = new WeakMap<Request, { scheme: SecurityScheme; tenant: AuthenticatedTenant }>();

/** The tenant the pre-body check verified for this request with this scheme, if it did. */
export function preAuthenticated(req: Request, scheme: string): AuthenticatedTenant | undefined {
  const v = verified.get(req);
  return v && v.scheme === scheme ? v.tenant : undefined;
}

/** Express matches routes case-insensitively: so does this. */
export function schemeOf(path: string): SecurityScheme | undefined {
  const lower = path.toLowerCase();
  return SCHEME_BY_PREFIX.find(([prefix]) => lower.startsWith(prefix))?.[1];
}

/** How long a refused request's body may keep arriving (read and dropped) before its connection is cut. */
const DRAIN_MS = 2_000;

/**
 * A refused request's body is never buffered: what arrives is read and dropped, for at most
 * DRAIN_MS, then the connection is destroyed. (Closing at once, with unread bytes, would reset the
 * connection and the client could lose the answer before reading it.)
 */
function discardBody(req: Request): void {
  if (!hasBody(req)) return;
  const timer = setTimeout(() => req.socket.destroy(), DRAIN_MS);
  timer.unref();
  req.on('end', () => clearTimeout(timer));
  req.on('close', () => clearTimeout(timer));
  req.on('data', () => undefined);
  req.resume();
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Authenticate, then read: the credential of the request is checked from its headers before the
 * body parsers run, so an anonymous request is refused (401) without a byte of its body buffered.
 * A body sent anywhere else (no public route outside these prefixes takes one) is refused 404
 * unread. A refused request's body is dropped as it arrives (for at most 2 s, then the connection is cut). The verified tenant is
 * kept for tsoa's hook (expressAuthentication), which then does not look the credential up again.
 */
export function authenticateBeforeBody(opts: {
  /** tsoa's hook (expressAuthentication): the same check the routes would make. */
  authenticate: (req: Request, scheme: SecurityScheme) => Promise<AuthenticatedTenant>;
  /** Failed authentication, throttled per client address (`req.ip`). */
  throttle?: AuthFailureThrottle;
}): RequestHandler {
  // Async (Express 5 passes a rejection to the error handler): next() is called outside any promise callback.
  return async (req: Request, res: Response, next: NextFunction) => {
    const scheme = schemeOf(req.path);
    if (!scheme) {
      if (!hasBody(req)) return next();
      discardBody(req);
      return next(new PublicError('NOT_FOUND', 'No such resource.'));
    }
    // Answers under the API carry tenant data or secrets (keys, whsec_ secrets): never stored by a cache.
    res.setHeader('Cache-Control', 'no-store');
    const address = req.ip ?? 'unknown';
    const wait = opts.throttle?.retryAfterSeconds(address);
    if (wait !== undefined) {
      discardBody(req);
      return next(new PublicError('RATE_LIMITED', 'Too many failed authentications from this address.', { retryAfterSeconds: wait }));
    }
    let tenant: AuthenticatedTenant;
    try {
      tenant = await opts.authenticate(req, scheme);
    } catch (err) {
      discardBody(req);
      if (err instanceof PublicError && err.code === 'UNAUTHENTICATED') await opts.throttle?.failed(address);
      return next(err);
    }
    verified.set(req, { scheme, tenant });
    next();
  };
}
