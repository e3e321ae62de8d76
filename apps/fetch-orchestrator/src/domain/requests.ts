import { PublicError } from '@wdr/kit/errors';
import { enqueue, makeEnvelope } from '@wdr/kit/kafka';
import type { ServiceClient } from '@wdr/kit/http-client';
import type { components } from '@wdr/contracts';
import { Prisma, type DataRequest, type PrismaClient } from '../generated/prisma/client.js';
import type { Sealer } from '@wdr/kit/sealing';
import { firstJobOf, routeUnavailable } from './stages.js';

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
}

/** What admission needs: its database, the ledger to reserve with, the sealer and the URL retention. */
export interface AdmissionDeps {
  db: PrismaClient;
  ledger: ServiceClient;
  sealer: Sealer;
  targetRetentionHours: number;
}

/** The ledger's answer to a reservation (single or one item of a batch). */
export interface LedgerReservation {
  request_id?: string;
  pricing_version: number;
  proxy_type: string;
  base_tokens: number;
  charged_tokens: number;
  /** The ledger's admission quote (guarded pricing policy), or null. */
  quote?: Record<string, unknown> | null;
}

/**
 * Append one event to a request's history, inside the caller's transaction, and mirror it on the
 * `request.lifecycle` topic through the outbox. The per-request sequence number is the SSE id.
 */
export async function appendEvent(
  tx: Tx,
  request: { id: string; tenantId: string },
  kind: string,
  status: string,
  payload: Record<string, unknown>,
): Promise<number> {
  const { lastEventSeq } = await tx.dataRequest.update({
    where: { id: request.id },
    data: { lastEventSeq: { increment: 1 } },
    select: { lastEventSeq: true },
  });
  const event = await tx.requestEvent.create({
    data: { requestId: request.id, seq: lastEventSeq, kind, status, payload: payload as Prisma.InputJsonObject },
  });
  await enqueue(
    tx,
    'requestLifecycle',
    request.id,
    makeEnvelope('requestLifecycle', 'request.event_appended', request.tenantId, {
      request_id: request.id,
      event_id: lastEventSeq,
      kind,
      status,
      payload,
      created_at: event.createdAt.toISOString(),
    }),
  );
  return lastEventSeq;
}

/**
 * Accept a request: reserve its base price with the ledger (idempotent per request id), then store
 * the request, its first event and its job in one transaction. A create that repeats an id is a
 * replay (same body) or an IDEMPOTENCY_CONFLICT (different body).
 */
export async function createRequest(
  deps: AdmissionDeps,
  cmd: CreateCommand,
  opts: { retriedFromId?: string } = {},
): Promise<SubmissionResponse> {
  const existing = await deps.db.dataRequest.findUnique({ where: { id: cmd.request_id } });
  if (existing) return replayOf(existing, cmd);

  const reservation = await deps.ledger.post<LedgerReservation>('/internal/v1/reservations', {
    request_id: cmd.request_id,
    tenant_id: cmd.tenant_id,
    route_mode: cmd.route_mode,
    proxy_type: cmd.proxy_type,
    max_credits: cmd.max_credits,
  });

  const target = new URL(cmd.url);
  try {
    const created = await deps.db.$transaction(async (tx) => {
      const row = await tx.dataRequest.create({
        data: {
          id: cmd.request_id,
          tenantId: cmd.tenant_id,
          urlOrigin: target.origin,
          targetSealed: deps.sealer.seal(cmd.url, cmd.request_id),
          targetPurgeAt: new Date(Date.now() + deps.targetRetentionHours * 3600_000),
          status: 'pending',
          routeMode: cmd.route_mode,
          proxyType: reservation.proxy_type,
          pricingVersion: reservation.pricing_version,
          baseTokens: reservation.base_tokens,
          tokenState: 'reserved',
          options: { ...cmd.options, input_hash: cmd.input_hash, max_credits_per_request: cmd.max_credits, admission_quote: reservation.quote ?? null } as Prisma.InputJsonObject,
          retriedFromId: opts.retriedFromId ?? null,
        },
      });
      await appendEvent(tx, row, 'request.accepted', 'pending', { route_mode: row.routeMode, base_tokens: row.baseTokens });
      const job = firstJobOf(row);
      if (!job) return finish(tx, row, routeUnavailable(row.routeMode));
      await enqueue(tx, job.topic, job.key, job.envelope);
      return row;
    });
    return submissionView(created, reservation.charged_tokens, false);
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      const winner = await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } });
      return replayOf(winner, cmd);
    }
    throw err;
  }
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
}

/**
 * Move a request to a terminal state exactly once, in the caller's transaction: record it, append
 * the event, and ask the ledger (through the outbox) to resolve the reservation.
 */
export async function finish(tx: Tx, request: DataRequest, t: Termination): Promise<DataRequest> {
  const updated = await tx.dataRequest.updateMany({
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
    },
  });
  const row = await tx.dataRequest.findUniqueOrThrow({ where: { id: request.id } });
  if (updated.count === 0) return row;
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
    }),
  );
  return row;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function submissionView(r: DataRequest, chargedTokens: number, replay: boolean): SubmissionResponse {
  return {
    id: r.id,
    url: r.urlOrigin,
    status: (TERMINAL.has(r.status) || r.status === 'pending' || r.status === 'running' ? r.status : 'running') as SubmissionResponse['status'],
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
  };
}

export async function readRequest(db: PrismaClient, tenantId: string, id: string): Promise<RequestDetail> {
  const r = await db.dataRequest.findUnique({ where: { id } });
  // Another tenant's request is indistinguishable from a missing one.
  if (!r || r.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No such request.');
  return detailView(r);
}
