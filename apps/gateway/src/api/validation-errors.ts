import type { Request } from 'express';
import { z } from 'zod';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';
import { submissionBodySchema, issuesToDetails } from '../domain/validation/submission-body.js';

/**
 * tsoa validates parameters and bodies against the models before a controller runs, and throws
 * its own ValidateError. This turns it into the API's one error shape, in the API's words:
 *
 * - a body that is not JSON at all (another Content-Type) is 400 MALFORMED_REQUEST, like bad JSON;
 * - bodies that have a complete domain schema (submissions) are re-checked with it, so the
 *   details are the same whichever layer caught the problem, and list every problem at once;
 * - anything else keeps tsoa's findings with the field names cleaned (`body.` dropped, `$0` -> `0`)
 *   and its union messages shortened to the allowed values.
 */

interface TsoaFieldError {
  message: string;
  value?: unknown;
}

interface TsoaValidateError {
  name: 'ValidateError';
  fields: Record<string, TsoaFieldError>;
}

/** A batch is a list of submissions: the same rules, reported under `jobs.<index>.<field>`. */
const batchBodySchema = z.strictObject(
  { jobs: z.array(submissionBodySchema, { error: 'must be an array of jobs' }) },
  { error: 'must be a JSON object' },
);

/** POST bodies with a full zod schema in the domain (the schema reports every rule of the table). */
const BODY_SCHEMAS: Record<
  string,
  { safeParse: (v: unknown) => ReturnType<typeof submissionBodySchema.safeParse> | ReturnType<typeof batchBodySchema.safeParse> }
> = {
  'POST /api/v1/data/requests': submissionBodySchema,
  'POST /api/v1/client/requests': submissionBodySchema,
  'POST /api/v1/data/batches': batchBodySchema,
  'POST /api/v1/client/batches': batchBodySchema,
};

function isValidateError(err: unknown): err is TsoaValidateError {
  return (err as { name?: unknown } | null)?.name === 'ValidateError' && typeof (err as { fields?: unknown }).fields === 'object';
}

export function publicValidationError(err: unknown, req: Request): unknown {
  if (!isValidateError(err)) return err;
  const bodyMissing = req.body === undefined;
  if (bodyMissing && req.headers['content-type'] !== undefined && !req.is('application/json')) {
    return new PublicError('MALFORMED_REQUEST', 'The request body must be JSON (Content-Type: application/json).');
  }
  const schema = BODY_SCHEMAS[`${req.method} ${req.path.replace(/\/$/, '')}`];
  const bodyFields = Object.keys(err.fields).filter((f) => f === 'body' || f.startsWith('body.') || !isParameter(f, req));
  if (schema && bodyFields.length > 0) {
    const r = schema.safeParse(req.body);
    if (!r.success) {
      // Parameter problems (headers, query) tsoa found, plus the schema's account of the body.
      const params = Object.entries(err.fields)
        .filter(([f]) => !bodyFields.includes(f))
        .map(([f, e]) => tsoaIssue(f, e));
      return new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
        details: [...params, ...issuesToDetails(r.error.issues)],
      });
    }
  }
  const details = Object.entries(err.fields).map(([f, e]) => tsoaIssue(f, e));
  return new PublicError('VALIDATION_FAILED', 'The request is not valid.', { details });
}

/** A tsoa field that names a query, path or header parameter rather than a part of the body. */
function isParameter(field: string, req: Request): boolean {
  return field in (req.query as object) || field in (req.params as object) || req.header(field) !== undefined;
}

function tsoaIssue(field: string, e: TsoaFieldError): FieldIssue {
  const name = field.replace(/^(body|requestBody)\.?/, '').replace(/\.\$(\d+)/g, '.$1') || 'body';
  return { field: name, issue: cleanMessage(name, e.message) };
}

function cleanMessage(field: string, message: string): string {
  if (message.startsWith('Could not match the union')) {
    const allowed = [...message.matchAll(/should be one of the following; \[([^\]]*)\]/g)].flatMap((m) =>
      m[1]!.split(',').map((v) => v.trim().replace(/^'|'$/g, '')),
    );
    const nullable = allowed.includes('null');
    const values = allowed.filter((v) => v !== 'null');
    if (values.length > 0) return `must be one of ${values.join(', ')}${nullable ? ' (or null)' : ''}`;
    return nullable ? 'has the wrong type (or must be null)' : 'has the wrong type';
  }
  if (message.includes('is an excess property')) return 'is not a field of this body';
  const min = /^min(?:Length)? (\d+)$/.exec(message);
  if (min) return message.startsWith('minLength') ? `length must be >= ${min[1]}` : `must be >= ${min[1]}`;
  const max = /^max(?:Length)? (\d+)$/.exec(message);
  if (max) return message.startsWith('maxLength') ? `length must be <= ${max[1]}` : `must be <= ${max[1]}`;
  if (message === 'invalid integer number' || message === field) return 'must be an integer';
  if (message === 'invalid float number') return 'must be a number';
  if (message === 'invalid string value') return 'must be a string';
  if (message === 'invalid boolean value') return 'must be a boolean';
  if (message === 'invalid object') return 'must be a JSON object';
  if (message === 'invalid array') return 'must be an array';
  return message;
}
