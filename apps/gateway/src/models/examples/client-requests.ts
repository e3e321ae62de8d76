// The examples of client-requests.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type { CabinetRequestResponse } from '../index.js';

export const createClientRequestExample: CabinetRequestResponse = {
  id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
  url: 'https://example.com',
  status: 'pending',
  cached: false,
  protected: false,
  base_tokens: 3,
  protected_tokens: 0,
  captcha_tokens: 0,
  created_at: '2026-11-25T12:00:00.000Z',
  charged_tokens: 3,
  pricing_version: 2,
  route_mode: 'browser',
  idempotent_replay: false,
};
