// The examples of usage.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type { ProxyTrafficUsage, StatementPage, TokenBalance } from '../billing.js';

export const getUsageExample: ProxyTrafficUsage = {
  period_start: '2026-10-26T12:00:00.000Z',
  period_end: '2026-11-25T12:00:00.000Z',
  period_days: 30,
  proxy_traffic: {
    request_bytes: 18432,
    response_bytes: 2411520,
    total_bytes: 2429952,
    charged_tokens: 3,
    charged_jobs: 12,
    measurement_unavailable_jobs: 0,
    by_proxy_type: [
      {
        proxy_type: 'datacenter',
        request_bytes: 0,
        response_bytes: 0,
        total_bytes: 0,
        charged_tokens: 0,
        charged_jobs: 0,
        measurement_unavailable_jobs: 0,
      },
      {
        proxy_type: 'residential',
        request_bytes: 18432,
        response_bytes: 2411520,
        total_bytes: 2429952,
        charged_tokens: 3,
        charged_jobs: 12,
        measurement_unavailable_jobs: 0,
      },
      {
        proxy_type: 'premium',
        request_bytes: 0,
        response_bytes: 0,
        total_bytes: 0,
        charged_tokens: 0,
        charged_jobs: 0,
        measurement_unavailable_jobs: 0,
      },
    ],
  },
};

export const getBalanceExample: TokenBalance = {
  balance_tokens: 4870,
  reserved_tokens: 6,
  plan_id: 'standard',
  low_balance_threshold_tokens: 100,
};

export const getStatementExample: StatementPage = {
  items: [
    {
      transfer_id: '7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f',
      created_at: '2026-11-25T12:00:00.410Z',
      type: 'reservation',
      kind: 'post_pending',
      amount_tokens: 1,
      balance_effect_tokens: 0,
      request_id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
      memo: null,
    },
    {
      transfer_id: '6e0b1c2d-3a49-4b5c-9d8e-f0a1b2c3d4e5',
      created_at: '2026-11-25T12:00:00.000Z',
      type: 'reservation',
      kind: 'pending',
      amount_tokens: 1,
      balance_effect_tokens: -1,
      request_id: '5d3f0a7e-2c1b-4e8f-9a6d-7b1c0e2f4a93',
      memo: null,
    },
  ],
  next_cursor: 'eyJjIjoiMjAyNi0xMS0yNVQxMjowMDowMC4wMDBaIn0',
};
