import { z } from 'zod';
import type { components } from '../openapi/types.js';
import { PROXY_NETWORK_TYPES, REQUEST_STATUSES, RESULT_FORMATS, ROUTE_MODES } from '../vocabulary.js';
import { endpoint, type BytesAnswer } from './endpoint.js';
import {
  RenderCaptchaBody,
  RenderCaptchaSolvedBody,
  RenderResult,
  type RenderCaptchaAnswer,
  type RenderResultAnswer,
  type RenderStartAnswer,
} from './render.js';

/**
 * The internal HTTP API of fetch-orchestrator (`/internal/v1/*`), called by the gateway (requests,
 * batches, reads, admission) and by browser-renderer (render jobs, see ./render.ts). Every call
 * names the tenant; another tenant's request or batch is a 404.
 */

type Schemas = components['schemas'];

const uuid = z.uuid();
const inputHash = z.string().length(64);
const targetUrl = z.url({ protocol: /^https?$/ }).max(4096);
const maxCredits = z.number().int().min(1).nullable();

/**
 * The tenant's concurrency ceiling, checked by the orchestrator (which owns requests) in the same
 * step as the create: refused with CONCURRENCY_LIMITED when the tenant's non-terminal requests plus
 * `others_in_flight` (admissions of the tenant the gateway holds right now, besides this one) reach
 * `limit`. A replay of an existing request is never refused.
 */
export const ConcurrencyCeiling = z.object({
  limit: z.number().int().min(1).max(10_000_000),
  others_in_flight: z.number().int().min(0).max(10_000_000),
});
export type ConcurrencyCeiling = z.infer<typeof ConcurrencyCeiling>;

/**
 * A run of a browser workflow (the browser-workflow API): the request belongs to a project and
 * environment, so its lifecycle events carry that scope (webhook endpoints of the project receive
 * them), and a project with a budget cap holds every run within it: the orchestrator admits a run
 * only while the project's committed tokens (ceilings of unsettled runs, charges of settled ones)
 * leave room, and gives the run that room as its ceiling.
 */
export const WorkflowOrigin = z.object({
  project_id: uuid,
  environment_id: uuid,
  workflow_id: uuid,
  workflow_version_id: uuid,
  budget_cap_tokens: z.number().int().min(0).nullable(),
});
export type WorkflowOrigin = z.infer<typeof WorkflowOrigin>;

/** Body of POST /internal/v1/requests: one submission, normalized and routed by the gateway. */
export const CreateRequestBody = z.object({
  request_id: uuid,
  tenant_id: uuid,
  url: targetUrl,
  route_mode: z.enum(ROUTE_MODES),
  proxy_type: z.enum(PROXY_NETWORK_TYPES).nullable(),
  max_credits: maxCredits,
  options: z.record(z.string(), z.unknown()),
  input_hash: inputHash,
  concurrency: ConcurrencyCeiling.optional(),
  /** Set on a workflow run: the project, environment, workflow and version it runs for. */
  origin: WorkflowOrigin.optional(),
});
export type CreateRequestBody = z.infer<typeof CreateRequestBody>;

/** Body of POST /internal/v1/batches: all jobs are admitted together or none. */
export const CreateBatchBody = z.object({
  batch_id: uuid,
  tenant_id: uuid,
  input_hash: inputHash,
  jobs: z
    .array(
      z.object({
        url: targetUrl,
        route_mode: z.enum(ROUTE_MODES),
        proxy_type: z.enum(PROXY_NETWORK_TYPES).nullable(),
        max_credits: maxCredits,
        options: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1)
    .max(1000),
});
export type CreateBatchBody = z.infer<typeof CreateBatchBody>;

/** The tenant a read or a cancel is for. */
export const TenantScope = z.object({ tenant_id: uuid });

export const ListRequestsQuery = z.object({
  tenant_id: uuid,
  limit: z.coerce.number().int().min(1).max(100).default(50),
  status: z.enum(REQUEST_STATUSES).optional(),
  cursor: z.string().optional(),
});

export const RequestEventsQuery = z.object({ tenant_id: uuid, after: z.coerce.number().int().min(0).max(2_147_483_647).default(0) });
export const RequestResultQuery = z.object({ tenant_id: uuid, format: z.enum(RESULT_FORMATS).default('html') });
/**
 * `extraction_run_failed`: the gateway read the source's extraction run and it failed, so an
 * extraction request whose page completed is failed to the tenant and may be retried.
 */
export const RetryRequestBody = z.object({
  tenant_id: uuid,
  request_id: uuid,
  input_hash: inputHash,
  concurrency: ConcurrencyCeiling.optional(),
  extraction_run_failed: z.boolean().optional(),
  /**
   * A retried workflow run stays a run of its project: the gateway sends the source's project,
   * environment, workflow and version with the project's budget cap as it is now. The orchestrator
   * checks the ids are the source's; without it a run's retry keeps the source's scope, uncapped.
   */
  origin: WorkflowOrigin.optional(),
});

/** `limit`: the count stops there (the previous release's gateway asks for its ceiling + 1). */
export const ActiveRequestsQuery = z.object({ limit: z.coerce.number().int().min(1).max(10_000_001).default(1_000) });

/** A stored request event, in the shape `request.event_appended` carries on `request.lifecycle`. */
export interface StoredRequestEvent {
  event_id: number;
  kind: string;
  status: string;
  payload: Record<string, unknown>;
  created_at: string;
}

export interface StoredEventHistory {
  /**
   * Status of the request in the same snapshot as `events`, as the tenant sees it: for an
   * extraction request its readiness (the page's status until the page ended, then `queued` until
   * the extraction ended, then the extraction's `completed` or `failed`).
   */
  request_status: string;
  /** The request asked for extraction: its history (and stream) ends with `extraction.completed` or `extraction.failed`. */
  extraction?: boolean;
  events: StoredRequestEvent[];
}

/** The kinds that end an extraction request's history: its run ended (recipe-extractor's `extraction.run_ended`). */
export const EXTRACTION_END_KINDS = ['extraction.completed', 'extraction.failed'] as const;

/**
 * Who holds a lifecycle registration: the calling service's name, alone (webhook-dispatcher: one
 * registration for all its replicas) or with an instance of its own after a colon (a gateway
 * instance: `gateway:<instance id>`). The orchestrator accepts only holders named after the caller.
 */
const listenerHolder = z
  .string()
  .max(120)
  .regex(/^[a-z][a-z-]*(:[A-Za-z0-9._-]{1,80})?$/);

/**
 * Body of POST /internal/v1/lifecycle-listeners: `holder` listens to the request lifecycle of each
 * tenant of `tenant_ids` (their `request.event_appended` mirrors are written to request.lifecycle
 * from now on). Answered only once in force: every event not mirrored for such a tenant is by then
 * in its stored history. `ttl_seconds` null: until released; otherwise it lapses unless renewed.
 * `complete`: these are all the tenants this holder listens to (the dispatcher's sync at start),
 * which ends the "every tenant" registration the orchestrator starts with.
 */
export const RegisterLifecycleListenersBody = z.object({
  holder: listenerHolder,
  tenant_ids: z.array(uuid).max(10_000),
  ttl_seconds: z.number().int().min(10).max(3_600).nullable(),
  complete: z.boolean().optional(),
});
export type RegisterLifecycleListenersBody = z.infer<typeof RegisterLifecycleListenersBody>;

/** Body of POST /internal/v1/lifecycle-listeners/release: `holder` no longer listens to `tenant_id`. */
export const ReleaseLifecycleListenerBody = z.object({ holder: listenerHolder, tenant_id: uuid });
export type ReleaseLifecycleListenerBody = z.infer<typeof ReleaseLifecycleListenerBody>;

const requestPath = '/internal/v1/requests/:id';

export const orchestratorApi = {
  createRequest: endpoint<Schemas['SubmissionResponse']>()({
    method: 'POST',
    callers: ['gateway'],
    route: '/internal/v1/requests',
    params: {},
    body: CreateRequestBody,
  }),
  /** The tenant_id query is parsed on its own (`query.shape.tenant_id`). */
  readRequest: endpoint<Schemas['RequestDetail']>()({
    method: 'GET',
    callers: ['gateway', 'recipe-extractor'],
    route: requestPath,
    params: { id: uuid },
    query: TenantScope,
  }),
  listRequests: endpoint<Schemas['RequestPage']>()({
    method: 'GET',
    callers: ['gateway'],
    route: '/internal/v1/requests',
    params: {},
    query: ListRequestsQuery,
  }),
  requestEvents: endpoint<StoredEventHistory>()({
    method: 'GET',
    callers: ['gateway'],
    route: `${requestPath}/events`,
    params: { id: uuid },
    query: RequestEventsQuery,
  }),
  /**
   * The stored page of a completed request as bytes (`format=html`: as fetched, with its stored
   * Content-Type; `format=text`: its readable text, `text/plain; charset=utf-8`, derived once and
   * stored), with Content-Length: never base64 in JSON, so neither end holds it as a string.
   */
  requestResult: endpoint<BytesAnswer>()({
    method: 'GET',
    callers: ['gateway', 'recipe-extractor'],
    route: `${requestPath}/result`,
    params: { id: uuid },
    query: RequestResultQuery,
    answerKind: 'bytes',
  }),
  cancelRequest: endpoint<Schemas['RequestDetail']>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${requestPath}/cancel`,
    params: { id: uuid },
    body: TenantScope,
  }),
  retryRequest: endpoint<Schemas['RetrySubmissionResponse']>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${requestPath}/retry`,
    params: { id: uuid },
    body: RetryRequestBody,
  }),
  /**
   * Deprecated, kept for one release: the previous release's gateway counts a tenant's running
   * requests here before each create (the orchestrator is rolled out first). The limit query is
   * parsed on its own (`query.shape.limit`). Remove with the next release.
   */
  activeRequests: endpoint<{ active: number }>()({
    method: 'GET',
    callers: ['gateway'],
    route: '/internal/v1/tenants/:tenantId/active-requests',
    params: { tenantId: uuid },
    query: ActiveRequestsQuery,
  }),
  createBatch: endpoint<Schemas['CabinetBatchResponse']>()({
    method: 'POST',
    callers: ['gateway'],
    route: '/internal/v1/batches',
    params: {},
    body: CreateBatchBody,
  }),
  /** The tenant_id query is parsed on its own (`query.shape.tenant_id`). */
  readBatch: endpoint<Schemas['Batch']>()({
    method: 'GET',
    callers: ['gateway'],
    route: '/internal/v1/batches/:id',
    params: { id: uuid },
    query: TenantScope,
  }),
  /** browser-renderer claims a render job (see ./render.ts); the body is empty. */
  startRenderJob: endpoint<RenderStartAnswer>()({
    method: 'POST',
    callers: ['browser-renderer'],
    route: '/internal/v1/render-jobs/:id/start',
    params: { id: uuid },
  }),
  /**
   * A completed render handed back in one call: the page's bytes as `renderUploadApi.renderJobUpload`
   * takes them (./render-upload.ts) and the outcome in RENDER_OUTCOME_HEADER, which must name this
   * upload with the declared length split and digest. The orchestrator refuses a malformed or
   * mismatched outcome before it reads the body, stages the bytes, and finishes the request as the
   * result route does; a request already terminal answers `accepted: false` without reading the body.
   */
  renderJobHandBack: endpoint<RenderResultAnswer>()({
    method: 'POST',
    callers: ['browser-renderer'],
    route: '/internal/v1/render-jobs/:id/hand-back/:upload',
    params: { id: uuid, upload: uuid },
    bodyKind: 'bytes',
  }),
  /** browser-renderer hands a render job's outcome back. */
  renderJobResult: endpoint<RenderResultAnswer>()({
    method: 'POST',
    callers: ['browser-renderer'],
    route: '/internal/v1/render-jobs/:id/result',
    params: { id: uuid },
    body: RenderResult,
  }),
  /** browser-renderer found a CAPTCHA and asks before solving it (the ledger's ceiling; `solving_captcha`). */
  renderJobCaptcha: endpoint<RenderCaptchaAnswer>()({
    method: 'POST',
    callers: ['browser-renderer'],
    route: '/internal/v1/render-jobs/:id/captcha',
    params: { id: uuid },
    body: RenderCaptchaBody,
  }),
  /** browser-renderer put the solved token into the page: back to `running`. */
  renderJobCaptchaSolved: endpoint<{ status: string }>()({
    method: 'POST',
    callers: ['browser-renderer'],
    route: '/internal/v1/render-jobs/:id/captcha/solved',
    params: { id: uuid },
    body: RenderCaptchaSolvedBody,
  }),
  /**
   * Register listeners of request lifecycles (see RegisterLifecycleListenersBody): the dispatcher
   * for tenants with webhook endpoints, a gateway instance for tenants with open event streams.
   */
  registerLifecycleListeners: endpoint<{ registered: number }>()({
    method: 'POST',
    callers: ['gateway', 'webhook-dispatcher'],
    route: '/internal/v1/lifecycle-listeners',
    params: {},
    body: RegisterLifecycleListenersBody,
  }),
  /** webhook-dispatcher: the tenant's last endpoint was deleted (a gateway instance's registrations lapse instead). */
  releaseLifecycleListener: endpoint<{ released: boolean }>()({
    method: 'POST',
    callers: ['webhook-dispatcher'],
    route: '/internal/v1/lifecycle-listeners/release',
    params: {},
    body: ReleaseLifecycleListenerBody,
  }),
} as const;
