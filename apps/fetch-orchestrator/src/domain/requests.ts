import { PublicError } from '@wdr/kit/errors';
import { afterCommit, isUniqueViolation, type RawSql } from '@wdr/kit/db';
import { enqueue, makeEnvelope, outboxJson } from '@wdr/kit/kafka';
import type { ServiceClient } from '@wdr/kit/http-client';
import {
  ledgerApi,
  type components,
  type ConcurrencyCeiling,
  type Envelope,
  type ProxyNetworkTypeName,
  type RouteModeName,
  type TopicKey,
  type WorkflowOrigin,
} from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import { Prisma, type DataRequest, type PrismaClient } from '../generated/prisma/client.js';
import type { Sealer } from '@wdr/kit/sealing';
import { admissionSnapshot, enforceCeiling } from './admission.js';
import { announceBatchIfFinished } from './batch-status.js';
import { firstJobOf } from './stages.js';
import { recordTerminal } from './request-metrics.js';
import type { ProxyPool } from './proxies/pool.js';

type Tx = Prisma.TransactionClient;
/** Create and retry answers; a retry (and its replays) also names its source. */
export type SubmissionResponse = components['schemas']['SubmissionResponse'] & { retried_from_id?: string };
export type RequestDetail = components['schemas']['RequestDetail'];

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export interface CreateCommand {
  request_id: string;
  tenant_id: string;
  url: string;
  route_mode: string;
  proxy_type: string | null;
  max_credits: number | null;
  options: Record<string, unknown>;
  input_hash: string;
  /** The tenant's concurrency ceiling, when the caller asks for it to be enforced. */
  concurrency?: ConcurrencyCeiling;
  /** A workflow run: its project, environment, workflow and version, and the project's budget cap. */
  origin?: WorkflowOrigin;
}

/** What admission needs: its database, the ledger to reserve with, the sealer and the URL retention. */
export interface AdmissionDeps {
  db: PrismaClient;
  ledger: ServiceClient;
  sealer: Sealer;
  targetRetentionHours: number;
  /** Premium is admitted only while a premium exit is configured. */
  pool: ProxyPool;
}

/**
 * Append one event to a request's history, inside the caller's transaction, and mirror it on the
 * `request.lifecycle` topic through the outbox. The per-request sequence number is the SSE id; a
 * workflow run's mirror carries its project and environment (`scope`), taken from the row.
 *
 * One statement: it takes the next number from the request's counter (the row lock orders
 * concurrent appends), stores the event and its outbox message with that number (the mirror is
 * built here and its `event_id` set by the statement), and answers the number.
 */
export async function appendEvent(
  tx: RawSql,
  request: { id: string; tenantId: string },
  kind: string,
  status: string,
  payload: Record<string, unknown>,
): Promise<number> {
  const createdAt = new Date();
  const mirror = lifecycleEnvelope(request, { seq: 1, kind, status, payload, createdAt });
  const rows = await tx.$queryRawUnsafe<{ seq: number }[]>(
    `WITH s AS (
       UPDATE data_requests SET last_event_seq = last_event_seq + 1 WHERE id = $1::uuid
       RETURNING last_event_seq AS seq, project_id, environment_id
     ), e AS (
       INSERT INTO request_events (request_id, seq, kind, status, payload, created_at)
       SELECT $1::uuid, s.seq, $2, $3, $4::jsonb, $5::timestamptz FROM s
     ), o AS (
       INSERT INTO outbox_messages (topic, message_key, envelope)
       SELECT 'requestLifecycle', $1,
              CASE WHEN s.project_id IS NULL THEN jsonb_set($6::jsonb, '{data,event_id}', to_jsonb(s.seq))
                   ELSE jsonb_set(jsonb_set($6::jsonb, '{data,event_id}', to_jsonb(s.seq)), '{data,scope}',
                                  jsonb_build_object('project_id', s.project_id, 'environment_id', s.environment_id)) END
       FROM s
     )
     SELECT seq FROM s`,
    request.id,
    kind,
    status,
    JSON.stringify(payload),
    createdAt,
    outboxJson(mirror),
  );
  const seq = rows[0]?.seq;
  if (seq === undefined) throw new Error(`request ${request.id} does not exist`);
  return Number(seq);
}

/** The `request.lifecycle` message that mirrors one stored event. */
function lifecycleEnvelope(
  request: { id: string; tenantId: string; projectId?: string | null; environmentId?: string | null },
  event: { seq: number; kind: string; status: string; payload: Record<string, unknown>; createdAt: Date },
): Envelope {
  return makeEnvelope('requestLifecycle', 'request.event_appended', request.tenantId, {
    request_id: request.id,
    event_id: event.seq,
    kind: event.kind,
    status: event.status,
    payload: event.payload,
    created_at: event.createdAt.toISOString(),
    ...(request.projectId && request.environmentId
      ? { scope: { project_id: request.projectId, environment_id: request.environmentId } }
      : {}),
  });
}

/**
 * Accept a request: check the tenant's concurrency ceiling (when given), reserve the base price with
 * the ledger (idempotent per request id), then store the request, its first event and its job in one
 * statement. A create that repeats an id is a replay (same body) or an IDEMPOTENCY_CONFLICT
 * (different body), and is never refused for concurrency.
 */
export async function createRequest(
  deps: AdmissionDeps,
  cmd: CreateCommand,
  opts: { retriedFromId?: string } = {},
): Promise<SubmissionResponse> {
  const seen = await admissionSnapshot(deps.db, cmd.request_id, cmd.tenant_id, cmd.concurrency);
  if (seen.exists) return replayOf(await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } }), cmd);
  enforceCeiling(cmd.concurrency, seen.active);
  await refuseUnconnectedPremium(deps.pool, cmd.proxy_type);
  if (cmd.origin && cmd.origin.budget_cap_tokens !== null) return admitWithinProjectBudget(deps, cmd, cmd.origin.budget_cap_tokens, opts);
  const reservation = await reserve(deps, cmd, cmd.max_credits);
  try {
    const row = acceptedRow(deps, cmd, reservation, cmd.max_credits ?? 0, opts);
    await insertAccepted(deps.db, row, firstJobOf(row));
    return submissionView(row, reservation.charged_tokens, false);
  } catch (err) {
    if (isUniqueViolation(err)) {
      const winner = await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } });
      return replayOf(winner, cmd);
    }
    throw err;
  }
}

type Reservation = Awaited<ReturnType<typeof reserve>>;

function reserve(deps: AdmissionDeps, cmd: CreateCommand, maxCredits: number | null) {
  return callInternal(deps.ledger, ledgerApi.reserve, {
    body: {
      request_id: cmd.request_id,
      tenant_id: cmd.tenant_id,
      // Parsed with the same vocabulary on the way in (orchestratorApi.createRequest).
      route_mode: cmd.route_mode as RouteModeName,
      proxy_type: cmd.proxy_type as ProxyNetworkTypeName | null,
      max_credits: maxCredits,
    },
  });
}

const budgetExhausted = (cap: number, committed: number) =>
  new PublicError(
    'PROJECT_BUDGET_EXHAUSTED',
    `The project's budget cap of ${cap} tokens leaves no room for this run (${committed} committed).`,
    {
      details: [{ field: 'budget_cap_tokens', issue: `${Math.max(0, cap - committed)} of ${cap} tokens left` }],
    },
  );

/**
 * A run of a project with a budget cap. Admissions of the project are serialised (a transaction
 * advisory lock on the project id) so two runs cannot both take the last room: the project's
 * committed tokens (ceilings of unsettled runs, charges of settled ones) leave `room`, and the run
 * is reserved with the ceiling min(its own max_credits, room): execution stops there
 * (`budget_exhausted`), so the project can never spend past its cap. No room, or less than the
 * run's base price: PROJECT_BUDGET_EXHAUSTED, nothing reserved.
 */
async function admitWithinProjectBudget(
  deps: AdmissionDeps,
  cmd: CreateCommand,
  cap: number,
  opts: { retriedFromId?: string },
): Promise<SubmissionResponse> {
  const origin = cmd.origin!;
  try {
    return await deps.db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${origin.project_id}, 0))`;
        const [sum] = await tx.$queryRaw<
          { committed: bigint }[]
        >`SELECT coalesce(sum(budget_committed), 0)::bigint AS committed FROM data_requests WHERE project_id = ${origin.project_id}::uuid`;
        const committed = Number(sum?.committed ?? 0);
        const room = cap - committed;
        if (room <= 0) throw budgetExhausted(cap, committed);
        const ceiling = Math.min(cmd.max_credits ?? room, room);
        let reservation: Reservation;
        try {
          reservation = await reserve(deps, cmd, ceiling);
        } catch (err) {
          // The room, not the run's own max_credits, is below the base price.
          if (err instanceof PublicError && err.code === 'BUDGET_BELOW_BASE_PRICE' && ceiling < (cmd.max_credits ?? Infinity))
            throw budgetExhausted(cap, committed);
          throw err;
        }
        const row = acceptedRow(deps, cmd, reservation, ceiling, opts);
        await insertAccepted(tx, row, firstJobOf(row));
        return submissionView(row, reservation.charged_tokens, false);
      },
      { timeout: 15_000, maxWait: 10_000 },
    );
  } catch (err) {
    if (isUniqueViolation(err)) return replayOf(await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } }), cmd);
    throw err;
  }
}

function acceptedRow(
  deps: AdmissionDeps,
  cmd: CreateCommand,
  reservation: Reservation,
  budgetCommitted: number,
  opts: { retriedFromId?: string },
): DataRequest {
  const target = new URL(cmd.url);
  return {
    id: cmd.request_id,
    tenantId: cmd.tenant_id,
    batchId: null,
    batchIndex: null,
    retriedFromId: opts.retriedFromId ?? null,
    urlOrigin: target.origin,
    targetSealed: deps.sealer.seal(cmd.url, cmd.request_id),
    targetPurgeAt: new Date(Date.now() + deps.targetRetentionHours * 3600_000),
    status: 'pending',
    routeMode: cmd.route_mode,
    proxyType: reservation.proxy_type,
    pricingVersion: reservation.pricing_version,
    baseTokens: reservation.base_tokens,
    protectedTokens: 0,
    captchaTokens: 0,
    captchaType: null,
    tokenState: 'reserved',
    cached: false,
    protected: false,
    options: {
      ...cmd.options,
      input_hash: cmd.input_hash,
      max_credits_per_request: cmd.max_credits,
      admission_quote: reservation.quote ?? null,
    } as Prisma.JsonObject,
    error: null,
    userError: null,
    resultMeta: null,
    proxyUsed: null,
    debugArtifacts: null,
    // `request.accepted` is event 1, written with the row (the general path appends it anew).
    lastEventSeq: 1,
    attempts: 0,
    createdAt: new Date(),
    startedAt: null,
    finishedAt: null,
    resultExpiresAt: null,
    trafficCarried: null,
    projectId: cmd.origin?.project_id ?? null,
    environmentId: cmd.origin?.environment_id ?? null,
    workflowId: cmd.origin?.workflow_id ?? null,
    workflowVersionId: cmd.origin?.workflow_version_id ?? null,
    budgetCommitted: cmd.origin ? budgetCommitted : 0,
  };
}

/**
 * `premium` needs an available connection as well as a plan price (the ledger checks the price):
 * with no premium exit configured it is refused before anything is reserved.
 */
export async function refuseUnconnectedPremium(pool: ProxyPool, proxyType: string | null): Promise<void> {
  if (proxyType !== 'premium') return;
  await pool.ready();
  if (!pool.has('premium')) {
    throw new PublicError('VALIDATION_FAILED', 'The premium network has no available connection.', {
      details: [{ field: 'proxy_type', issue: 'premium is not available' }],
    });
  }
}

const acceptedPayload = (r: Pick<DataRequest, 'routeMode' | 'baseTokens'>) => ({ route_mode: r.routeMode, base_tokens: r.baseTokens });

/**
 * Store an accepted request, its first event (`request.accepted`, seq 1) and its outbox messages
 * (the event's mirror, then the first stage's job) in one statement: atomic like the transaction it
 * replaces, in one round trip and without Prisma's query engine on the hottest write of the fleet.
 * A duplicate id fails the whole statement with a unique violation (a concurrent replay).
 */
async function insertAccepted(db: RawSql, row: DataRequest, job: { topic: TopicKey; key: string; envelope: Envelope }): Promise<void> {
  const payload = acceptedPayload(row);
  const accepted = lifecycleEnvelope(row, { seq: 1, kind: 'request.accepted', status: 'pending', payload, createdAt: row.createdAt });
  await db.$executeRawUnsafe(
    `WITH r AS (
       INSERT INTO data_requests (id, tenant_id, retried_from_id, url_origin, target_sealed, target_purge_at, status, route_mode, proxy_type,
                                  pricing_version, base_tokens, token_state, options, last_event_seq, created_at,
                                  project_id, environment_id, workflow_id, workflow_version_id, budget_committed)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6::timestamptz, 'pending', $7, $8, $9, $10, 'reserved', $11::jsonb, 1, $12::timestamptz,
               $17::uuid, $18::uuid, $19::uuid, $20::uuid, $21)
       RETURNING id
     ), e AS (
       INSERT INTO request_events (request_id, seq, kind, status, payload, created_at)
       SELECT id, 1, 'request.accepted', 'pending', $13::jsonb, $12::timestamptz FROM r
     )
     INSERT INTO outbox_messages (topic, message_key, envelope)
     SELECT m.t, m.k, m.e::jsonb FROM r, unnest($14::text[], $15::text[], $16::text[]) WITH ORDINALITY AS m(t, k, e, n) ORDER BY m.n`,
    row.id,
    row.tenantId,
    row.retriedFromId,
    row.urlOrigin,
    row.targetSealed,
    row.targetPurgeAt,
    row.routeMode,
    row.proxyType,
    row.pricingVersion,
    row.baseTokens,
    JSON.stringify(row.options),
    row.createdAt,
    JSON.stringify(payload),
    ['requestLifecycle', job.topic],
    [row.id, job.key],
    [outboxJson(accepted), outboxJson(job.envelope)],
    row.projectId,
    row.environmentId,
    row.workflowId,
    row.workflowVersionId,
    row.budgetCommitted,
  );
}

export function replayOf(existing: DataRequest, cmd: Pick<CreateCommand, 'tenant_id' | 'input_hash'>): SubmissionResponse {
  const opts = existing.options as { input_hash?: string };
  if (existing.tenantId !== cmd.tenant_id || opts.input_hash !== cmd.input_hash) {
    throw new PublicError('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was already used with a different body.');
  }
  return submissionView(existing, 0, true);
}

export interface Termination {
  status: 'completed' | 'failed' | 'cancelled';
  error?: Record<string, unknown>;
  userError?: Record<string, unknown>;
  resultMeta?: Record<string, unknown>;
  resultExpiresAt?: Date;
  /** The stage execution ended in: what `auto` is billed at. */
  terminalStage?: 'http' | 'browser';
  /** Execution stopped at max_credits_per_request: charged up to the ceiling, not refunded. */
  reason?: 'budget_exhausted';
  /** Anti-bot protection was seen on the way. */
  protected?: boolean;
  /** What a failed browser stage left for debugging (DebugArtifactListing). */
  debugArtifacts?: Record<string, unknown>;
  /** Proxy traffic of the execution, counted at the socket; absent when no proxy was used. */
  traffic?: TrafficReport;
  /** CAPTCHA solves performed; the ledger prices them (each marks the request `captcha_type: captcha`). */
  captchaSolves?: number;
  /** Served from the result cache (domain/result-cache.ts): sets the request's `cached`. */
  cached?: boolean;
}

/** Bytes over the proxied connection(s) of one execution; `measured: false` is never read as zero. */
export interface TrafficReport {
  proxy_type: ProxyNetworkTypeName;
  measured: boolean;
  request_bytes: number;
  response_bytes: number;
}

/**
 * Move a request to a terminal state exactly once, in the caller's transaction: record it, append
 * the event, and ask the ledger (through the outbox) to resolve the reservation.
 */
export async function finish(tx: Tx, request: DataRequest, t: Termination): Promise<DataRequest> {
  // One statement moves and answers the row; a request already terminal is answered as it is.
  const [row] = await tx.dataRequest.updateManyAndReturn({
    where: { id: request.id, status: { notIn: [...TERMINAL] } },
    data: {
      status: t.status,
      finishedAt: new Date(),
      tokenState: 'settlement_pending',
      error: (t.error ?? Prisma.DbNull) as Prisma.InputJsonObject,
      userError: (t.userError ?? Prisma.DbNull) as Prisma.InputJsonObject,
      resultMeta: (t.resultMeta ?? Prisma.DbNull) as Prisma.InputJsonObject,
      resultExpiresAt: t.resultExpiresAt ?? null,
      proxyUsed: t.status === 'completed' ? 'platform' : null,
      ...(t.protected ? { protected: true } : {}),
      ...(t.debugArtifacts ? { debugArtifacts: t.debugArtifacts as Prisma.InputJsonObject } : {}),
      ...(t.captchaSolves ? { captchaType: 'captcha' } : {}),
      ...(t.cached ? { cached: true } : {}),
    },
  });
  if (!row) return tx.dataRequest.findUniqueOrThrow({ where: { id: request.id } });
  // Counted once the transaction committed (a rolled-back, redelivered finish does not count twice).
  afterCommit(tx, () => recordTerminal(row, t));
  const traffic = addTraffic(row.trafficCarried as TrafficReport | null, t.traffic);
  await appendEvent(tx, row, `request.${t.status}`, t.status, {
    ...(t.userError ? { error: t.userError } : {}),
    ...(t.resultMeta ? { result: t.resultMeta } : {}),
  });
  await enqueue(
    tx,
    'billingCommands',
    row.id,
    makeEnvelope('billingCommands', 'billing.settlement_requested', row.tenantId, {
      request_id: row.id,
      outcome: t.status,
      route_mode: row.routeMode,
      captcha_tokens: row.captchaTokens,
      ...(t.terminalStage ? { terminal_stage: t.terminalStage } : {}),
      ...(t.reason ? { reason: t.reason } : {}),
      ...(t.captchaSolves !== undefined ? { captcha_solves: t.captchaSolves } : {}),
      ...(traffic ? { traffic } : {}),
    }),
  );
  // The last job of a batch to end announces the batch's completion.
  if (row.batchId) await announceBatchIfFinished(tx, row.batchId, row.tenantId);
  // A request that asked for extraction hands its page over to recipe-extractor (by request id:
  // the page stays in request_results, the claim-check recipe-extractor reads it from).
  const extraction = (row.options as { extraction?: { recipe_id?: string; version_id?: string } | null }).extraction;
  if (extraction?.recipe_id) {
    await enqueue(
      tx,
      'extractionJobs',
      row.id,
      makeEnvelope('extractionJobs', 'extraction.job_requested', row.tenantId, {
        request_id: row.id,
        recipe_id: extraction.recipe_id,
        ...(extraction.version_id ? { version_id: extraction.version_id } : {}),
        page_status: t.status,
      }),
    );
  }
  return row;
}

/**
 * Traffic of two stages of one request (auto: HTTP, then the browser). Unmeasured anywhere makes
 * the whole unmeasured: a partial count is never presented as the measurement.
 */
export function addTraffic(a: TrafficReport | null | undefined, b: TrafficReport | undefined): TrafficReport | undefined {
  if (!a) return b;
  if (!b) return a;
  return {
    proxy_type: b.proxy_type,
    measured: a.measured && b.measured,
    request_bytes: a.request_bytes + b.request_bytes,
    response_bytes: a.response_bytes + b.response_bytes,
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A workflow run's `workflow_run` (absent on other requests). */
function workflowRunOf(r: DataRequest): { workflow_run?: components['schemas']['WorkflowRunOrigin'] } {
  if (!r.projectId || !r.environmentId || !r.workflowId || !r.workflowVersionId) return {};
  return {
    workflow_run: {
      project_id: r.projectId,
      environment_id: r.environmentId,
      workflow_id: r.workflowId,
      workflow_version_id: r.workflowVersionId,
    },
  };
}

export function submissionView(r: DataRequest, chargedTokens: number, replay: boolean): SubmissionResponse {
  return {
    id: r.id,
    url: r.urlOrigin,
    status: (TERMINAL.has(r.status) || r.status === 'pending' || r.status === 'running'
      ? r.status
      : 'running') as SubmissionResponse['status'],
    cached: r.cached,
    protected: r.protected,
    pricing_version: r.pricingVersion,
    route_mode: r.routeMode as SubmissionResponse['route_mode'],
    ...(r.proxyType ? { proxy_type: r.proxyType as NonNullable<SubmissionResponse['proxy_type']> } : {}),
    base_tokens: r.baseTokens,
    protected_tokens: r.protectedTokens,
    captcha_tokens: r.captchaTokens,
    quote: ((r.options as { admission_quote?: Record<string, unknown> | null }).admission_quote ?? null) as SubmissionResponse['quote'],
    created_at: r.createdAt.toISOString(),
    charged_tokens: chargedTokens,
    idempotent_replay: replay,
    ...(r.retriedFromId ? { retried_from_id: r.retriedFromId } : {}),
    ...workflowRunOf(r),
  };
}

/** The request as the tenant submitted it, minus secrets: header and cookie values are not echoed. */
function requestEcho(r: DataRequest): Record<string, unknown> {
  const { input_hash: _h, admission_quote: _q, headers, cookies, ...rest } = r.options as Record<string, unknown>;
  return {
    url: r.urlOrigin,
    route_mode: r.routeMode,
    ...rest,
    ...(headers ? { header_names: Object.keys(headers as object) } : {}),
    ...(cookies ? { cookie_names: Object.keys(cookies as object) } : {}),
  };
}

export function detailView(r: DataRequest): RequestDetail {
  return {
    id: r.id,
    batch_id: r.batchId,
    url: r.urlOrigin,
    status: r.status as RequestDetail['status'],
    cached: r.cached,
    protected: r.protected,
    pricing_version: r.pricingVersion,
    base_tokens: r.baseTokens,
    protected_tokens: r.protectedTokens,
    captcha_tokens: r.captchaTokens,
    captcha_type: r.captchaType === 'captcha' ? 'captcha' : null,
    token_state: r.tokenState as RequestDetail['token_state'],
    request: requestEcho(r),
    debug_artifacts: (r.debugArtifacts as RequestDetail['debug_artifacts'] | null) ?? {},
    error: (r.error as Record<string, unknown> | null) ?? null,
    user_error: (r.userError as Record<string, unknown> | null) ?? null,
    result_meta: (r.resultMeta as Record<string, unknown> | null) ?? null,
    proxy_used: r.proxyUsed === 'platform' ? 'platform' : null,
    created_at: r.createdAt.toISOString(),
    started_at: iso(r.startedAt),
    finished_at: iso(r.finishedAt),
    result_expires_at: iso(r.resultExpiresAt),
    ...(r.retriedFromId ? { retried_from_id: r.retriedFromId } : {}),
    ...workflowRunOf(r),
  };
}

export async function readRequest(db: PrismaClient, tenantId: string, id: string): Promise<RequestDetail> {
  const r = await db.dataRequest.findUnique({ where: { id } });
  // Another tenant's request is indistinguishable from a missing one.
  if (!r || r.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No such request.');
  return detailView(r);
}
