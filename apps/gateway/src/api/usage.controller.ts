import type { Request as ExRequest } from 'express';
import { Controller, Example, Get, Query, Request, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import { readBalance, readStatement, readUsage } from '../domain/billing/billing.js';
import { tenantOf } from './authentication.js';
import type { PublicErrorBody, RateLimitedHeaders } from '../models/index.js';
import type { ProxyTrafficUsage, StatementPage, TokenBalance } from '../models/billing.js';
import { getBalanceExample, getStatementExample, getUsageExample } from '../models/examples/usage.js';
import {
  dependencyUnavailableError,
  internalError,
  unauthenticatedError,
  validationFailedError,
  rateLimitedError,
} from '../models/examples/errors.js';

/** The tenant's usage and money: proxy traffic, token balance and the itemised statement. */
@Route('api/v1/data')
@Tags('Data API: usage and balance')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key', unauthenticatedError)
@Response<PublicErrorBody>(
  503,
  'DEPENDENCY_UNAVAILABLE: the ledger or the database is unreachable; retry shortly',
  dependencyUnavailableError,
)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
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
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<ProxyTrafficUsage>(getUsageExample)
  public async getUsage(@Request() req: ExRequest): Promise<ProxyTrafficUsage> {
    return readUsage(this.deps, tenantOf(req).tenantId);
  }

  /**
   * Tokens available now and tokens held by requests in flight.
   * @summary Token balance
   */
  @Get('balance')
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<TokenBalance>(getBalanceExample)
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
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<StatementPage>(getStatementExample)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit or cursor', validationFailedError)
  public async getStatement(@Request() req: ExRequest, @Query() cursor?: string, @Query() limit: number = 50): Promise<StatementPage> {
    return readStatement(this.deps, tenantOf(req).tenantId, { cursor, limit });
  }
}
