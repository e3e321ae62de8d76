// The examples of client-api-keys.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type { TenantApiKeyList } from '../index.js';

export const listClientApiKeysExample: TenantApiKeyList = {
  items: [
    {
      id: '5f0c7a52-8d1e-4c1b-9a35-0b6f1c2d3e4f',
      prefix: 'Q2xkZmxh3b9K',
      label: 'default',
      created_at: '2026-11-20T09:00:00.000Z',
      expires_at: null,
      revoked_at: null,
      state: 'active',
    },
    {
      id: '0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70',
      prefix: 'Zm9vYmFyYmF6',
      label: 'ci',
      created_at: '2026-10-01T12:00:00.000Z',
      expires_at: '2026-12-31T00:00:00.000Z',
      revoked_at: '2026-11-25T08:30:00.000Z',
      state: 'revoked',
    },
  ],
};
