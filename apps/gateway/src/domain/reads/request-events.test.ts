import { describe, expect, it } from '@jest/globals';
import { publicEventOf } from './request-events.js';

describe('publicEventOf', () => {
  const at = '2026-11-21T10:00:00.000Z';

  it('maps the stored event to the public item', () => {
    expect(
      publicEventOf({
        event_id: 3,
        kind: 'request.completed',
        status: 'completed',
        created_at: at,
        payload: { result: { status_code: 200, bytes: 10, stage: 'http' } },
      }),
    ).toEqual({
      id: 3,
      type: 'request.completed',
      status: 'completed',
      created_at: at,
      data: { result: { status_code: 200, bytes: 10, stage: 'http' } },
    });
  });

  it('never passes vendor names, internal hosts, final URLs or unknown fields, and reduces URLs in text to their origin', () => {
    const e = publicEventOf({
      event_id: 2,
      kind: 'request.failed',
      status: 'failed',
      created_at: at,
      payload: {
        proxy_vendor: 'AcmeProxies',
        upstream: 'http://fetch-orchestrator.wdr.svc:8081/internal',
        final_url: 'https://shop.example/cart?session=abc',
        error: {
          code: 'TARGET_UNREACHABLE',
          message: 'could not reach https://shop.example/cart?session=abc',
          provider: 'acme',
          host: '10.0.0.7',
        },
        result: { status_code: 502, final_url: 'https://shop.example/x' },
        attempt: 2,
      },
    });
    expect(e.data).toEqual({
      attempt: 2,
      error: { code: 'TARGET_UNREACHABLE', message: 'could not reach https://shop.example' },
      result: { status_code: 502 },
    });
    expect(JSON.stringify(e)).not.toMatch(/acme|svc|10\.0\.0\.7|session|cart/i);
  });

  it('shows the CAPTCHA kind and solve count and the verified country, never the solver or the exit', () => {
    const solving = publicEventOf({
      event_id: 4,
      kind: 'request.solving_captcha',
      status: 'solving_captcha',
      created_at: at,
      payload: { stage: 'browser', captcha_kind: 'hcaptcha', solve: 1, solver: 'https://solver.internal', task_id: 'abc' },
    });
    expect(solving.data).toEqual({ stage: 'browser', captcha_kind: 'hcaptcha', solve: 1 });
    const done = publicEventOf({
      event_id: 6,
      kind: 'request.completed',
      status: 'completed',
      created_at: at,
      payload: { result: { stage: 'http', status_code: 200, country: 'DE', exit: 'res-de-1', proxy: 'http://u:p@10.0.0.9:3128' } },
    });
    expect(done.data).toEqual({ result: { stage: 'http', status_code: 200, country: 'DE' } });
  });
});
