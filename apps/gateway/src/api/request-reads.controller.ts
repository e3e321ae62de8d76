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
import type { DataJobStatus, ExtractionResult, PublicErrorBody, RateLimitedHeaders, RequestDetail } from '../models/index.js';
import { getExtractionResult } from '../domain/requests/data-requests.js';
import type { RequestEventList, RequestPage, RetrySubmissionResponse } from '../models/reads.js';
import {
  cancelRequestExample,
  getDebugArtifactExample,
  getExtractionExample,
  getResultExample,
  listEventsExample,
  listRequestsExample,
  retryRequestExample,
  streamEventsExample,
} from '../models/examples/request-reads.js';
import {
  conflictError,
  dependencyUnavailableError,
  idempotencyConflictError,
  insufficientCreditsError,
  internalError,
  notFoundError,
  rateLimitedError,
  resultExpiredError,
  resultNotReadyError,
  unauthenticatedError,
  validationFailedError,
} from '../models/examples/errors.js';

/** Reading the tenant's requests, following their events, and the cancel and retry operations. */
@Route('api/v1/data/requests')
@Tags('Data API: requests')
@Security('api_key')
@Response<PublicErrorBody>(401, 'UNAUTHENTICATED: missing, unknown or revoked API key', unauthenticatedError)
@Response<PublicErrorBody>(
  500,
  'INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs)',
  internalError,
)
@Response<PublicErrorBody>(
  503,
  'DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly',
  dependencyUnavailableError,
)
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
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<RequestPage>(listRequestsExample)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: bad limit, status or cursor', validationFailedError)
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
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<RequestEventList>(listEventsExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid', validationFailedError)
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
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED: the read rate; CONCURRENCY_LIMITED: the open event streams (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @SuccessResponse(200, 'An event stream', 'text/event-stream')
  // One literal: tsoa reads the decorator's argument statically and cannot evaluate a concatenation.
  @Example<string>(streamEventsExample)
  @Response(204, 'The request is terminal and nothing follows Last-Event-ID')
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or Last-Event-ID is not an integer >= 0', validationFailedError)
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
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @SuccessResponse(200, 'The page (format=html) or its text (format=text)', ['text/html', 'text/plain'])
  @Example<string>(getResultExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request', notFoundError)
  @Response<PublicErrorBody>(409, 'RESULT_NOT_READY while pending or running; CONFLICT when the request failed or was cancelled', {
    code: 'RESULT_NOT_READY',
    message: 'The request has no result yet; follow its events.',
    request_id: '0b0c6f2e-3a41-4f7d-9a57-5f1d2c8e9b10',
  })
  @Response<PublicErrorBody>(410, 'RESULT_EXPIRED: the result passed its retention', resultExpiredError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or the format is unknown', validationFailedError)
  public async getResult(@Request() req: ExRequest, @Path() id: string, @Query() format?: 'html' | 'text'): Promise<Readable> {
    const result = await readRequestResult(this.deps, tenantOf(req).tenantId, id, format);
    this.setHeader('Content-Type', result.contentType);
    if (result.contentLength !== undefined) this.setHeader('Content-Length', String(result.contentLength));
    // The page is the target's, not ours: never let a browser run it on the API's origin.
    this.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    this.setHeader('X-Content-Type-Options', 'nosniff');
    this.setHeader('Cache-Control', 'private, no-store');
    // tsoa pipes the returned stream into the answer as it arrives from the orchestrator (paced by
    // the tenant's reading). pipe() alone neither ends the answer when the orchestrator's stream
    // fails nor stops that stream when the tenant goes away: both are tied here.
    const res = req.res;
    if (res) {
      result.body.once('error', (err: unknown) => {
        this.deps.log.warn({ err }, 'result stream from the orchestrator failed');
        res.destroy();
      });
      res.once('close', () => {
        if (!result.body.destroyed) result.body.destroy();
      });
    }
    return result.body;
  }

  /**
   * The structured result of an extraction request (beyond the spec): the run's `data`, validated
   * against its recipe version's field schema, once the run is `completed`; or, for a `failed` run,
   * its `error` (e.g. `REQUIRED_FIELDS_MISSING` with one detail per missing field, while the page
   * itself may have completed: see `page_status`).
   * @summary Read a request's extraction result
   */
  @Get('{id}/extraction')
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @Example<ExtractionResult>(getExtractionExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request, or it did not ask for extraction', notFoundError)
  @Response<PublicErrorBody>(409, 'RESULT_NOT_READY while the run waits for its page, is queued or running', resultNotReadyError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid', validationFailedError)
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
  @Response<PublicErrorBody, RateLimitedHeaders>(
    429,
    'RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers)',
    rateLimitedError,
  )
  @SuccessResponse(200, 'The artifact', ['image/png', 'application/json'])
  @Example<string>(getDebugArtifactExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request or artifact (or it expired)', notFoundError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or the name is not an artifact name', validationFailedError)
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
  @Example<RequestDetail>(cancelRequestExample)
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request', notFoundError)
  @Response<PublicErrorBody>(409, 'CONFLICT: the request is already completed or failed', conflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid', validationFailedError)
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
  @Example<RetrySubmissionResponse>(retryRequestExample)
  @Response<PublicErrorBody>(
    402,
    "INSUFFICIENT_CREDITS: the balance cannot cover the base price; PROJECT_BUDGET_EXHAUSTED: a workflow run's retry finds no room left in its project's budget cap",
    insufficientCreditsError,
  )
  @Response<PublicErrorBody>(404, 'NOT_FOUND: no such request', notFoundError)
  @Response<PublicErrorBody>(409, 'IDEMPOTENCY_CONFLICT, or CONFLICT when the request is not failed', idempotencyConflictError)
  @Response<PublicErrorBody>(422, 'VALIDATION_FAILED: the id is not a uuid or the Idempotency-Key is invalid', validationFailedError)
  @Response<PublicErrorBody>(429, 'RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After)', rateLimitedError)
  @Response<PublicErrorBody>(
    503,
    'DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly',
    dependencyUnavailableError,
  )
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
