// The examples of browser-workflow.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type { RequestDetail, SubmissionResponse } from '../index.js';
import type { WebhookDeliveryPage, WebhookEndpointPage } from '../browser.js';

export const listWebhookEndpointsExample: WebhookEndpointPage = {
  items: [
    {
      id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
      environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
      url_origin: 'https://hooks.example.com',
      event_types: ['request.completed', 'request.failed'],
      description: 'Results to the pricing pipeline',
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      created_at: '2026-11-25T12:05:00.000Z',
      updated_at: '2026-11-25T12:05:00.000Z',
    },
  ],
  next_cursor: null,
};

export const listWebhookDeliveriesExample: WebhookDeliveryPage = {
  items: [
    {
      id: 'd4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70',
      message_id: '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
      event_type: 'request.completed',
      attempt: 2,
      outcome: 'delivered',
      status_code: 200,
      latency_ms: 143,
      response_excerpt: '{"received":true}',
      error: null,
      created_at: '2026-11-25T12:07:41.020Z',
    },
    {
      id: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
      message_id: '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
      event_type: 'request.completed',
      attempt: 1,
      outcome: 'failed',
      status_code: 503,
      latency_ms: 87,
      response_excerpt: 'upstream unavailable, see https://status.example.com',
      error: null,
      created_at: '2026-11-25T12:07:10.480Z',
    },
  ],
  next_cursor: null,
};

export const runWorkflowExample: SubmissionResponse = {
  id: '8e1f2a3b-4c5d-5e6f-8a7b-9c0d1e2f3a4b',
  url: 'https://shop.example.com',
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
  created_at: '2026-11-25T12:30:00.000Z',
  charged_tokens: 3,
  idempotent_replay: false,
  workflow_run: {
    project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
    environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
    workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
    workflow_version_id: '01a2129d-c820-7f83-8568-1edf5a7b9ca3',
  },
};

export const readWorkflowRunExample: RequestDetail = {
  id: '8e1f2a3b-4c5d-5e6f-8a7b-9c0d1e2f3a4b',
  batch_id: null,
  url: 'https://shop.example.com',
  status: 'completed',
  cached: false,
  protected: false,
  pricing_version: 2,
  base_tokens: 3,
  protected_tokens: 0,
  captcha_tokens: 0,
  captcha_type: null,
  token_state: 'settled',
  request: {
    url: 'https://shop.example.com/catalog',
    mode: 'browser',
    wait_for_selector: '#products',
    browser_actions: [{ type: 'click', selector: '#load-more' }],
    result_text_selector: '#products',
  },
  debug_artifacts: {},
  error: null,
  user_error: null,
  result_meta: {
    stage: 'browser',
    status_code: 200,
    content_type: 'text/html; charset=utf-8',
    bytes: 48213,
    redirects: 0,
    elapsed_ms: 2314,
  },
  proxy_used: 'platform',
  created_at: '2026-11-25T12:30:00.000Z',
  started_at: '2026-11-25T12:30:00.180Z',
  finished_at: '2026-11-25T12:30:02.640Z',
  result_expires_at: '2026-11-26T12:30:02.640Z',
  workflow_run: {
    project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
    environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
    workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
    workflow_version_id: '01a2129d-c820-7f83-8568-1edf5a7b9ca3',
  },
};
