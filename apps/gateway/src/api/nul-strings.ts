import type { RequestHandler } from 'express';
import { PublicError } from '@wdr/kit/errors';
import { NUL_ISSUE, nulPaths } from '../domain/validation/nul-strings.js';

/** Details named at most (a body of thousands of such strings is refused for the first ones). */
const MAX_DETAILS = 20;

/**
 * The public API refuses U+0000 anywhere a tenant writes text: the JSON body (every string, key or
 * value, whatever the route), the query string and the path. A 422 VALIDATION_FAILED naming where,
 * before any route reads the request, so a route or field added later is covered too.
 */
export const refuseNulStrings: RequestHandler = (req, _res, next) => {
  const fields: string[] = [];
  if (decodedPath(req.path).includes('\u0000')) fields.push('path');
  for (const p of nulPaths(req.query)) fields.push(['query', ...p].join('.'));
  if (req.body !== undefined) for (const p of nulPaths(req.body)) fields.push(p.length === 0 ? 'body' : p.join('.'));
  if (fields.length === 0) return next();
  next(
    new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: fields.slice(0, MAX_DETAILS).map((field) => ({ field, issue: NUL_ISSUE })),
    }),
  );
};

/** The path as a route sees it (percent-decoded); one that does not decode holds no NUL either. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
