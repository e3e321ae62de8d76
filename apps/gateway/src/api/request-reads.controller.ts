import { Readable } from 'node:stream';
import type { Request as ExRequest } from 'express';
import {
  Controller,
  Example,
  Get,
  Header,
  Path,
  Post,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';
import {
  cancelDataRequest,
  listDataRequests,
  listRequestEvents,
  readRequestResult,
  retryDataRequest,
} from '../domain/reads/request-reads.js';
import { readDebugArtifact } from '../domain/reads/debug-artifacts.js';
import { submissionContext, tenantOf } from './authentication.js';
import type { DataJobStatus, ExtractionResult, PublicErrorBody, RequestDetail } from '../models/index.js';
import { getExtractionResult } from '../domain/requests/data-requests.js';
import type { RequestEventList, RequestPage, RetrySubmissionResponse } from '../models/reads.js';

/** Reading the tenant's requests, following their events, and the cancel and retry operations. */
@Route('api/v1/data/requests')
@Tags('Data API: requests')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key')
export class RequestReadsController extends Controller {
  constructor(private readonly deps: GatewayDeps) {
    super();
  }

  /**
   * The tenant's requests, newest first, as cursor pages: pass `meta.next_cursor` back unchanged
   * as `cursor` for the next page. Pages are keyed on (created_at, id), so requests created while
   * paging never shift a page: no duplicates, no gaps.
   * @summary List requests (cursor pages)
   * @param cursor Opaque base64url cursor from a previous page's `meta.next_cursor`.
   * @param limit Page size, 1..100.
   * @param status Only requests in this status.
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   */
  @Get()
  @Example<RequestPage>({
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
  })
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit, status or cursor')
  public async listRequests(
    @Request() req: ExRequest,
    @Query() cursor?: string,
    @Query() limit: number = 50,
    @Query() status?: DataJobStatus,
  ): Promise<RequestPage> {
    return listDataRequests(this.deps, tenantOf(req).tenantId, { cursor, limit, status });
  }

  /**
   * The request's append-only event history, in ascending creation order. Every entry is
   * provider-neutral; its `id` is the per-request sequence number used by the event stream.
   * @summary List a request's events
   */
  @Get('{id}/events')
  @Example<RequestEventList>({
    data: [
      { id: 1, type: 'request.accepted', status: 'pending', created_at: '2026-11-25T12:00:00.000Z', data: {} },
      { id: 2, type: 'request.running', status: 'running', created_at: '2026-11-25T12:00:00.120Z', data: {} },
      { id: 3, type: 'request.completed', status: 'completed', created_at: '2026-11-25T12:00:00.410Z', data: { status_code: 200 } },
      { id: 4, type: 'tokens.settled', status: 'completed', created_at: '2026-11-25T12:00:00.530Z', data: { charged_tokens: 1 } },
    ],
  })
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid')
  public async listEvents(@Request() req: ExRequest, @Path() id: string): Promise<RequestEventList> {
    return listRequestEvents(this.deps, tenantOf(req).tenantId, id);
  }

  /**
   * Follow the request's events live as Server-Sent Events (`text/event-stream`). Each message has
   * `id: <event id>` and `data: <RequestEvent JSON>` (the same object as a history entry; no
   * `event:` field, so `EventSource.onmessage` receives every one). The stream first replays the
   * stored events after `Last-Event-ID` (all of them without the header), then sends new ones as
   * they happen, each once, in order. Comment lines (`: heartbeat`) keep idle connections open.
   * It closes after the event that makes the request `completed`, `failed` or `cancelled`, or after
   * its maximum duration (5 minutes by default): then reconnect with `Last-Event-ID` set to the last
   * id received. A request that is already terminal with nothing after `Last-Event-ID` answers
   * 204, which also stops a browser EventSource from reconnecting.
   *
   * Served by a plain Express handler (apps/gateway/src/sse); this operation only documents it.
   * @summary Follow a request's events (Server-Sent Events)
   * @param lastEventId The last event id received (integer >= 0); the stream resumes after it.
   * @isInt lastEventId
   * @minimum lastEventId 0
   */
  @Get('{id}/events/stream')
  @SuccessResponse(200, 'An event stream', 'text/event-stream')
  // One literal: tsoa reads the decorator's argument statically and cannot evaluate a concatenation.
  @Example<string>(
    'id: 1\ndata: {"id":1,"type":"request.accepted","status":"pending","created_at":"2026-11-25T12:00:00.000Z","data":{}}\n\n: heartbeat\n\nid: 2\ndata: {"id":2,"type":"request.completed","status":"completed","created_at":"2026-11-25T12:00:00.410Z","data":{"status_code":200}}\n\n',
  )
  @Response(204, 'The request is terminal and nothing follows Last-Event-ID')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or Last-Event-ID is not an integer >= 0')
  public async streamEvents(@Request() req: ExRequest, @Path() id: string, @Header('Last-Event-ID') lastEventId?: number): Promise<string> {
    void req;
    void id;
    void lastEventId;
    throw new Error('served by the SSE handler registered before the tsoa routes');
  }

  /**
   * The fetched page of a completed request (beyond the spec): as fetched with its content type
   * (`format=html`, the default), or reduced to its readable text (`format=text`, `text/plain`).
   * Available until `result_expires_at`.
   * @summary Read the fetched page
   * @param format `html` (default) or `text`.
   */
  @Get('{id}/result')
  @SuccessResponse(200, 'The page (format=html) or its text (format=text)', ['text/html', 'text/plain'])
  @Example<string>('<!doctype html><html><head><title>Example Domain</title></head><body><h1>Example Domain</h1></body></html>')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request')
  @Response<PublicErrorBody>(409, 'RESULT_NOT_READY while pending or running; CONFLICT when the request failed or was cancelled', {
    code: 'RESULT_NOT_READY',
    message: 'The request has no result yet; follow its events.',
    request_id: '0b0c6f2e-3a41-4f7d-9a57-5f1d2c8e9b10',
  })
  @Response<PublicErrorBody>(410, 'RESULT_EXPIRED: the result passed its retention')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or the format is unknown')
  public async getResult(@Request() req: ExRequest, @Path() id: string, @Query() format?: 'html' | 'text'): Promise<Readable> {
    const result = await readRequestResult(this.deps, tenantOf(req).tenantId, id, format);
    this.setHeader('Content-Type', result.contentType);
    this.setHeader('Content-Length', String(result.body.length));
    // The page is the target's, not ours: never let a browser run it on the API's origin.
    this.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    this.setHeader('X-Content-Type-Options', 'nosniff');
    this.setHeader('Cache-Control', 'private, no-store');
    return Readable.from([result.body]);
  }

  /**
   * The structured result of an extraction request (beyond the spec): the run's `data`, validated
   * against its recipe version's field schema, once the run is `completed`; or, for a `failed` run,
   * its `error` (e.g. `REQUIRED_FIELDS_MISSING` with one detail per missing field, while the page
   * itself may have completed: see `page_status`).
   * @summary Read a request's extraction result
   */
  @Get('{id}/extraction')
  @Example<ExtractionResult>({
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
  })
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request, or it did not ask for extraction')
  @Response<PublicErrorBody>(409, 'RESULT_NOT_READY while the run waits for its page, is queued or running')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid')
  public async getExtraction(@Request() req: ExRequest, @Path() id: string): Promise<ExtractionResult> {
    return getExtractionResult(this.deps, tenantOf(req).tenantId, id);
  }

  /**
   * One debug artifact of a failed request that opted in with `debug_artifacts: true` (beyond the
   * spec): `screenshot.png` or `report.json`, as listed in the request detail's `debug_artifacts`.
   * Kept only for failed requests, encrypted at rest, readable only by the tenant, purged at
   * `debug_artifacts.expires_at`.
   * @summary Download a debug artifact of a failed request
   * @param name The artifact's name from the listing, e.g. `screenshot.png`.
   */
  @Get('{id}/debug-artifacts/{name}')
  @SuccessResponse(200, 'The artifact', ['image/png', 'application/json'])
  @Example<string>(
    '{"url":"https://example.com/app","stage":"browser","error":{"code":"SELECTOR_TIMEOUT","message":"#list did not appear within 30000 ms"}}',
  )
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request or artifact (or it expired)')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or the name is not an artifact name')
  public async getDebugArtifact(@Request() req: ExRequest, @Path() id: string, @Path() name: string): Promise<Readable> {
    const artifact = await readDebugArtifact(this.deps, tenantOf(req).tenantId, id, name);
    this.setHeader('Content-Type', artifact.contentType);
    this.setHeader('Content-Length', String(artifact.body.length));
    this.setHeader('X-Content-Type-Options', 'nosniff');
    this.setHeader('Cache-Control', 'private, no-store');
    return Readable.from([artifact.body]);
  }

  /**
   * Cancel a pending or running request (beyond the spec): it becomes `cancelled`, its reserved
   * tokens are refunded, and a worker still running it can no longer complete it. Cancelling a
   * cancelled request answers the same; a completed or failed one is a 409.
   * @summary Cancel a request
   */
  @Post('{id}/cancel')
  @Example<RequestDetail>({
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
  })
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request')
  @Response<PublicErrorBody>(409, 'CONFLICT: the request is already completed or failed')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid')
  public async cancelRequest(@Request() req: ExRequest, @Path() id: string): Promise<RequestDetail> {
    return cancelDataRequest(this.deps, tenantOf(req).tenantId, id);
  }

  /**
   * Retry a failed request as a new request (new id) with the same persisted inputs, browser
   * actions included. The source request is kept unchanged. With an `Idempotency-Key`, repeating
   * the retry replays it for free; the same key used for anything else is a 409.
   * @summary Retry a failed request as a new one
   * @param idempotencyKey Length 8..200.
   */
  @Post('{id}/retry')
  @SuccessResponse(202, 'Accepted')
  @Example<RetrySubmissionResponse>({
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
  })
  @Response<PublicErrorBody>(402, 'INSUFFICIENT_CREDITS: the balance cannot cover the base price')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request')
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT, or CONFLICT when the request is not failed')
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or the Idempotency-Key is invalid')
  @Response<PublicErrorBody>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)')
  @Response<PublicErrorBody>(503, 'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly')
  public async retryRequest(
    @Request() req: ExRequest,
    @Path() id: string,
    @Header('Idempotency-Key') idempotencyKey?: string,
  ): Promise<RetrySubmissionResponse> {
    const result = await retryDataRequest(this.deps, submissionContext(req, idempotencyKey), id);
    this.setStatus(202);
    return result;
  }
}
