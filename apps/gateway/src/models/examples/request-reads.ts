// The examples of request-reads.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type { ExtractionResult, RequestDetail } from '../index.js';
import type { RequestEventList, RequestPage, RetrySubmissionResponse } from '../reads.js';

export const listRequestsExample: RequestPage = {
  data: [
    {
      id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
      batch_id: null,
      url: 'https://example.com',
      status: 'completed',
      cached: false,
      protected: false,
      pricing_version: 2,
      base_tokens: 1,
      protected_tokens: 0,
      captcha_tokens: 0,
      captcha_type: null,
      token_state: 'settled',
      request: { url: 'https://example.com/page', mode: 'http' },
      debug_artifacts: {},
      error: null,
      user_error: null,
      result_meta: {
        stage: 'http',
        status_code: 200,
        content_type: 'text/html; charset=utf-8',
        bytes: 1256,
        redirects: 0,
        elapsed_ms: 184,
      },
      proxy_used: null,
      created_at: '2026-11-25T12:00:00.000Z',
      started_at: '2026-11-25T12:00:00.120Z',
      finished_at: '2026-11-25T12:00:00.410Z',
      result_expires_at: '2026-11-26T12:00:00.410Z',
    },
  ],
  meta: { next_cursor: 'MjAyNi0xMS0yNVQxMjowMDowMC4wMDBafDVkM2YwYTdl', has_more: true, limit: 1 },
};

export const listEventsExample: RequestEventList = {
  data: [
    { id: 1, type: 'request.accepted', status: 'pending', created_at: '2026-11-25T12:00:00.000Z', data: {} },
    { id: 2, type: 'request.running', status: 'running', created_at: '2026-11-25T12:00:00.120Z', data: {} },
    { id: 3, type: 'request.completed', status: 'completed', created_at: '2026-11-25T12:00:00.410Z', data: { status_code: 200 } },
    { id: 4, type: 'tokens.settled', status: 'completed', created_at: '2026-11-25T12:00:00.530Z', data: { charged_tokens: 1 } },
  ],
};

export const streamEventsExample: string =
  'id: 1\ndata: {"id":1,"type":"request.accepted","status":"pending","created_at":"2026-11-25T12:00:00.000Z","data":{}}\n\n: heartbeat\n\nid: 2\ndata: {"id":2,"type":"request.completed","status":"completed","created_at":"2026-11-25T12:00:00.410Z","data":{"status_code":200}}\n\n';

export const getResultExample: string =
  '<!doctype html><html><head><title>Example Domain</title></head><body><h1>Example Domain</h1></body></html>';

export const getExtractionExample: ExtractionResult = {
  run_id: '3b4c5d6e-7f8a-4b9c-8d0e-2f3a4b5c6d7e',
  recipe_id: '1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b',
  version_id: '2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d',
  status: 'completed',
  error: null,
  retried_from_run_id: null,
  request_id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
  page_status: 'completed',
  data: { title: 'Espresso machine', price: 249.9 },
  warnings: [],
  created_at: '2026-11-25T12:00:00.000Z',
  started_at: '2026-11-25T12:00:00.530Z',
  finished_at: '2026-11-25T12:00:00.561Z',
};

export const getDebugArtifactExample: string =
  '{"url":"https://example.com/app","stage":"browser","error":{"code":"SELECTOR_TIMEOUT","message":"#list did not appear within 30000 ms"}}';

export const cancelRequestExample: RequestDetail = {
  id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
  batch_id: null,
  url: 'https://example.com',
  status: 'cancelled',
  cached: false,
  protected: false,
  pricing_version: 2,
  base_tokens: 3,
  protected_tokens: 0,
  captcha_tokens: 0,
  captcha_type: null,
  token_state: 'refunded',
  request: { url: 'https://example.com/app', mode: 'browser', timeout_ms: 45000 },
  debug_artifacts: {},
  error: { code: 'CANCELLED', message: 'cancelled by the tenant' },
  user_error: { code: 'CANCELLED', message: 'The request was cancelled.' },
  result_meta: null,
  proxy_used: null,
  created_at: '2026-11-25T12:00:00.000Z',
  started_at: '2026-11-25T12:00:00.120Z',
  finished_at: '2026-11-25T12:00:01.002Z',
  result_expires_at: null,
};

export const retryRequestExample: RetrySubmissionResponse = {
  id: '6e4a1b8f-3d2c-4f9a-8b7e-8c2d1f3a5b04',
  url: 'https://example.com',
  status: 'pending',
  cached: false,
  protected: false,
  pricing_version: 2,
  route_mode: 'browser',
  proxy_type: 'datacenter',
  base_tokens: 3,
  protected_tokens: 0,
  captcha_tokens: 0,
  quote: null,
  created_at: '2026-11-25T12:05:00.000Z',
  charged_tokens: 3,
  idempotent_replay: false,
  retried_from_id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
};
