import { describe, expect, it } from '@jest/globals';
import { isDependencyFailure } from './dependency-failure.js';
import {
  DEPENDENCY_MESSAGE,
  DependencyUnavailableError,
  ERROR_CODES,
  ERROR_STATUS,
  INTERNAL_MESSAGE,
  PublicError,
  errorHandler,
  toPublicError,
} from './errors.js';

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
    const v = toPublicError(
      Object.assign(new Error('x'), { name: 'ValidateError', fields: { 'body.timeout_ms': { message: 'max 300000' } } }),
    );
    expect(v.toBody('r2')).toEqual({
      code: 'VALIDATION_FAILED',
      message: expect.any(String),
      request_id: 'r2',
      details: [{ field: 'timeout_ms', issue: 'max 300000' }],
    });
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

describe('isDependencyFailure', () => {
  const prisma = (code: string, kind?: string) =>
    Object.assign(new Error(`prisma ${code}`), {
      name: 'PrismaClientKnownRequestError',
      code,
      ...(kind ? { meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind } } } } : {}),
    });

  it('recognises Prisma connection, pool and transaction-start errors, directly and from a raw query', () => {
    for (const code of ['P1001', 'P1017', 'P2024', 'P2028']) expect(isDependencyFailure(prisma(code))).toBe(true);
    expect(isDependencyFailure(prisma('P2010', 'DatabaseNotReachable'))).toBe(true);
    expect(isDependencyFailure(prisma('P2010', 'ConnectionClosed'))).toBe(true);
  });

  it('recognises driver, socket, kafkajs and breaker failures anywhere along the cause chain', () => {
    expect(isDependencyFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDependencyFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDependencyFailure(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(
      true,
    );
    expect(isDependencyFailure(Object.assign(new Error('broker gone'), { name: 'KafkaJSConnectionError', retriable: true }))).toBe(true);
    expect(isDependencyFailure(Object.assign(new Error('Breaker is open'), { code: 'EOPENBREAKER' }))).toBe(true);
    expect(isDependencyFailure(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) }))).toBe(true);
    expect(isDependencyFailure(new DependencyUnavailableError('ledger answered 503'))).toBe(true);
  });

  it('leaves bugs, bad data and domain answers alone', () => {
    expect(isDependencyFailure(new Error('undefined is not a function'))).toBe(false);
    expect(isDependencyFailure(prisma('P2002'))).toBe(false); // unique constraint
    expect(isDependencyFailure(prisma('P2010', 'UniqueConstraintViolation'))).toBe(false);
    expect(isDependencyFailure(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(
      isDependencyFailure(
        new PublicError('INSUFFICIENT_CREDITS', 'no credits', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }),
      ),
    ).toBe(false);
  });

  it('answers a dependency failure with a 503 and a fixed sentence, and an internal call’s 500 text never', async () => {
    const pe = toPublicError(prisma('P2010', 'DatabaseNotReachable'));
    expect(pe.code).toBe('DEPENDENCY_UNAVAILABLE');
    const answers: { status: number; body: { message: string } }[] = [];
    const res = (status: number) => ({
      headersSent: false,
      locals: {},
      setHeader: () => undefined,
      status: (s: number) => ({ json: (body: { message: string }) => answers.push({ status: s || status, body }) }),
    });
    const handler = errorHandler(() => undefined);
    handler(
      new DependencyUnavailableError('ledger is unreachable: connect ECONNREFUSED 10.0.0.7:8080'),
      {} as never,
      res(0) as never,
      () => undefined,
    );
    handler(
      new PublicError('INTERNAL', 'billing-ledger rejected an internal call (400): column "x" does not exist'),
      {} as never,
      res(0) as never,
      () => undefined,
    );
    expect(answers[0]).toEqual({
      status: 503,
      body: expect.objectContaining({ code: 'DEPENDENCY_UNAVAILABLE', message: DEPENDENCY_MESSAGE }),
    });
    expect(answers[1]).toEqual({ status: 500, body: expect.objectContaining({ code: 'INTERNAL', message: INTERNAL_MESSAGE }) });
  });
});

describe('JSON bodies defining toString or valueOf', () => {
  it('are refused as unreadable (400 MALFORMED_REQUEST), never a 500 from a validator coercing them', async () => {
    const { default: express } = await import('express');
    const { default: request } = await import('supertest');
    const { noCoercionOverrides } = await import('./service.js');
    const app = express();
    app.use(express.json({ reviver: noCoercionOverrides }));
    app.post('/', (req, res) => res.json({ mode: `${(req.body as { mode: unknown }).mode as string}` }));
    app.use(errorHandler(() => undefined));
    for (const [body, key] of [
      ['{"mode":{"toString":""}}', 'toString'],
      ['{"a":[{"valueOf":1}]}', 'valueOf'],
    ]) {
      const res = await request(app).post('/').set('content-type', 'application/json').send(body);
      expect([res.status, res.body.code, res.body.message]).toEqual([
        400,
        'MALFORMED_REQUEST',
        `The request body may not define "${key}" (at any depth).`,
      ]);
    }
    const syntax = await request(app).post('/').set('content-type', 'application/json').send('{"mode":');
    expect([syntax.status, syntax.body.message]).toEqual([400, 'The request body is not valid JSON.']);
    expect((await request(app).post('/').send({ mode: 'http', to_string: 'x' })).body).toEqual({ mode: 'http' });
  });
});
