import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger, redactDeep, safeError } from './log.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, stream };
}

const SECRETS = [
  's3cr3t-header-value',
  'cookie-value-xyz',
  'fill-value-1234',
  'proxy-pass-999',
  'whsec_abcdefghijklmnop',
  'wdr_live_0123456789abcdef',
];

/** An HTTP client's error as got builds it: the request's options (body, headers, URL) enumerable on it. */
function gotLikeError(): Error {
  const err = new Error("Timeout awaiting 'request' for 5000ms") as Error & Record<string, unknown>;
  err['code'] = 'ETIMEDOUT';
  err['options'] = {
    url: new URL('http://user:proxy-pass-999@127.0.0.1:1/internal/v1/fetch'),
    headers: { authorization: 'Bearer wdr_live_0123456789abcdef', 'x-tenant': 's3cr3t-header-value' },
    json: {
      headers: { 'X-Secret': 's3cr3t-header-value' },
      cookies: [{ name: 'sid', value: 'cookie-value-xyz' }],
      actions: [{ type: 'fill', selector: '#p', value: 'fill-value-1234' }],
    },
  };
  err['response'] = { statusCode: 504, body: 'whsec_abcdefghijklmnop' };
  return err;
}

describe('log redaction', () => {
  it('reduces an error to safe fields: no options, body or headers', () => {
    const safe = safeError(gotLikeError());
    expect(Object.keys(safe).sort()).toEqual(['code', 'message', 'stack', 'status', 'type']);
    expect(safe['status']).toBe(504);
    const text = JSON.stringify(safe);
    for (const s of SECRETS) expect(text).not.toContain(s);
  });

  it('censors secret-named fields at any depth and secret-looking strings anywhere', () => {
    const { lines, stream } = capture();
    const log = createLogger('t', 'info', stream);
    log.error({ err: gotLikeError() }, 'internal call failed');
    log.warn(
      { job: { request: { options: { headers: { a: 's3cr3t-header-value' } }, deep: { deeper: { cookies: 'cookie-value-xyz' } } } } },
      'nested',
    );
    log.info(
      { note: 'secret is whsec_abcdefghijklmnop and key wdr_live_0123456789abcdef', proxy: 'http://u:proxy-pass-999@127.0.0.1:8' },
      'values',
    );
    log.info('message with wdr_live_0123456789abcdef inside');
    log.info({ fields: [{ action: { type: 'fill', value: 'fill-value-1234' } }] }, 'arrays');
    const all = lines.join('');
    for (const s of SECRETS) expect(all).not.toContain(s);
    // What is useful stays: the error's class, code and message, and ordinary fields.
    const first = JSON.parse(lines[0]!) as { err: Record<string, unknown>; msg: string };
    expect(first.err['code']).toBe('ETIMEDOUT');
    expect(first.err['message']).toContain('Timeout');
    expect(first.msg).toBe('internal call failed');
    expect(JSON.parse(lines[4]!).fields[0].action.type).toBe('fill');
  });

  it('survives cycles and depth', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a['self'] = a;
    expect(JSON.stringify(redactDeep(a))).toContain('[circular]');
  });
});
