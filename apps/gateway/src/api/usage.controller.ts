import type { Request as ExRequest } from 'express';
import { Controller, Example, Get, Query, Request, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { readBalance, readStatement, readUsage } from '../domain/billing/billing.js';
import { tenantOf } from './authentication.js';
import type { PublicErrorBody } from '../models/index.js';
import type { ProxyTrafficUsage, StatementPage, TokenBalance } from '../models/billing.js';

/** The tenant's usage and money: proxy traffic, token balance and the itemised statement. */
@Route('api/v1/data')
@Tags('Data API: usage and balance')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key')
@Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: the ledger or the database is unreachable; retry shortly')
export class UsageController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * Proxy traffic of the last 30 days: request, response and total bytes, tokens charged for
   * traffic, requests charged, and requests whose traffic could not be measured (counted there,
   * never as zero bytes), in total and per proxy type. No provider or routing detail is returned.
   * @summary Proxy traffic of the last 30 days
   */
  @Get('usage')
  @Example<ProxyTrafficUsage>({
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
  })
  public async getUsage(@Request() req: ExRequest): Promise<ProxyTrafficUsage> {
    return readUsage(this.deps, tenantOf(req).tenantId);
  }

  /**
   * Tokens available now and tokens held by requests in flight.
   * @summary Token balance
   */
  @Get('balance')
  @Example<TokenBalance>({ balance_tokens: 4870, reserved_tokens: 6, plan_id: 'standard', low_balance_threshold_tokens: 100 })
  public async getBalance(@Request() req: ExRequest): Promise<TokenBalance> {
    return readBalance(this.deps, tenantOf(req).tenantId);
  }

  /**
   * Every movement of the tenant's tokens, newest first, each with its request id: holds at
   * admission, settlements and refunds, deferred CAPTCHA/traffic charges, top-ups, grants and
   * corrections. Nothing is edited in place: a correction is a new line.
   * @summary Itemised token statement
   * @param cursor Opaque cursor from a previous page's `next_cursor`.
   * @param limit Page size, 1..100.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get('statement')
  @Example<StatementPage>({
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
  })
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor')
  public async getStatement(@Request() req: ExRequest, @Query() cursor?: string, @Query() limit: number = 50): Promise<StatementPage> {
    return readStatement(this.deps, tenantOf(req).tenantId, { cursor, limit });
  }
}
