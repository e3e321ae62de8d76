import { describe, expect, it } from '@jest/globals';
import { ERROR_CODES, ERROR_STATUS, PublicError, toPublicError } from './errors.js';

describe('PublicError', () => {
  it('maps every code to a 4xx/5xx status', () => {
    for (const code of ERROR_CODES) {
      expect(ERROR_STATUS[code]).toBeGreaterThanOrEqual(400);
      expect(ERROR_STATUS[code]).toBeLessThan(600);
    }
    expect(ERROR_STATUS.IDEMPOTENCY_CONFLICT).toBe(409);
    expect(ERROR_STATUS.UNAUTHENTICATED).toBe(401);
  });

  it('never shows the text of an unexpected error', () => {
    const pe = toPublicError(new Error('db password is hunter2'));
    expect(pe.code).toBe('INTERNAL');
    expect(JSON.stringify(pe.toBody('r1'))).not.toContain('hunter2');
  });

  it('maps body-parser and tsoa validation errors to client errors with field details', () => {
    expect(toPublicError(Object.assign(new Error('x'), { type: 'entity.parse.failed', status: 400 })).code).toBe('MALFORMED_REQUEST');
    const v = toPublicError(Object.assign(new Error('x'), { name: 'ValidateError', fields: { 'body.timeout_ms': { message: 'max 300000' } } }));
    expect(v.toBody('r2')).toEqual({ code: 'VALIDATION_FAILED', message: expect.any(String), request_id: 'r2', details: [{ field: 'timeout_ms', issue: 'max 300000' }] });
  });

  it('keeps domain errors as they are', () => {
    const e = new PublicError('INSUFFICIENT_CREDITS', 'no');
    expect(toPublicError(e)).toBe(e);
    expect(e.status).toBe(402);
  });
});

describe('PublicError under frameworks', () => {
  it('survives a framework assigning err.status (tsoa auth middleware does)', () => {
    const e = new PublicError('UNAUTHENTICATED', 'no key') as PublicError & { status: number };
    expect(() => {
      (e as { status: number }).status = e.status || 401;
    }).not.toThrow();
    expect(toPublicError(e).toBody('r').code).toBe('UNAUTHENTICATED');
  });
});
