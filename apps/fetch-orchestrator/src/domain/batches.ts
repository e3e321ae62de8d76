import { createHash } from 'node:crypto';
import { isUniqueViolation } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import { enqueueMany, makeEnvelope } from '@wdr/kit/kafka';
import {
  ledgerApi,
  REQUEST_ERROR_CODES,
  type components,
  type ProxyNetworkTypeName,
  type RequestErrorCode,
  type RouteModeName,
} from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import { Prisma, type Batch as BatchRow, type DataRequest, type PrismaClient } from '../generated/prisma/client.js';
import { refuseUnconnectedPremium, type AdmissionDeps } from './requests/create.js';
import { storedInputs } from './requests/sealed-inputs.js';
import { publicStatusOf, TERMINAL } from './requests/terminal.js';
import { batchStatusOf } from '@wdr/contracts';
import { firstJobOf } from './stages.js';
import { asksForExtraction } from './request-reads.js';

export { batchStatusOf };

export type CabinetBatchResponse = components['schemas']['CabinetBatchResponse'];
export type BatchView = components['schemas']['Batch'];
type BatchJob = BatchView['jobs'][number];

export interface BatchJobCommand {
  url: string;
  route_mode: string;
  proxy_type: string | null;
  max_credits: number | null;
  options: Record<string, unknown>;
}

export interface BatchCommand {
  batch_id: string;
  tenant_id: string;
  input_hash: string;
  jobs: BatchJobCommand[];
}

/** Job ids derive from the batch id and the position: a replayed submission names the same jobs. */
export function jobIdOf(batchId: string, index: number): string {
  const h = createHash('sha256').update(`${batchId}\u0000job\u0000${index}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

const jobStatus = (s: string): BatchJob['status'] => publicStatusOf(s);

/**
 * Admit a batch all or nothing: the ledger reserves every job's base price in one transaction (or
 * none, 402), then the batch, its jobs, their first events and their messages are stored in one
 * transaction. A repeated batch id replays (same body) or conflicts (different body).
 */
export async function createBatch(deps: AdmissionDeps, cmd: BatchCommand): Promise<CabinetBatchResponse> {
  const existing = await deps.db.batch.findUnique({ where: { id: cmd.batch_id } });
  if (existing) return replayOf(deps.db, existing, cmd);

  const ids = cmd.jobs.map((_, i) => jobIdOf(cmd.batch_id, i));
  // All or nothing: one premium job without a premium connection refuses the batch.
  if (cmd.jobs.some((j) => j.proxy_type === 'premium')) await refuseUnconnectedPremium(deps.pool, 'premium');
  const reserved = await callInternal(deps.ledger, ledgerApi.reserveBatch, {
    body: {
      tenant_id: cmd.tenant_id,
      // Parsed with the same vocabulary on the way in (orchestratorApi.createBatch).
      items: cmd.jobs.map((j, i) => ({
        request_id: ids[i]!,
        route_mode: j.route_mode as RouteModeName,
        proxy_type: j.proxy_type as ProxyNetworkTypeName | null,
        max_credits: j.max_credits,
      })),
    },
    timeoutMs: 60_000,
  });
  const byId = new Map(reserved.items.map((r) => [r.request_id, r]));
  const reservationOf = (id: string) => {
    const r = byId.get(id);
    if (!r) throw new Error(`the ledger answered no reservation for job ${id}`);
    return r;
  };

  const modes = new Set(cmd.jobs.map((j) => j.route_mode));
  const createdAt = new Date();
  const purgeAt = new Date(createdAt.getTime() + deps.targetRetentionHours * 3600_000);
  const rows = cmd.jobs.map((j, i): Prisma.DataRequestCreateManyInput => {
    const id = ids[i]!;
    const r = reservationOf(id);
    const inputs = storedInputs(deps, id, j.options);
    return {
      id,
      tenantId: cmd.tenant_id,
      batchId: cmd.batch_id,
      batchIndex: i,
      urlOrigin: new URL(j.url).origin,
      targetSealed: deps.sealer.seal(j.url, id),
      targetPurgeAt: purgeAt,
      secretsSealed: inputs.secretsSealed,
      status: 'pending',
      routeMode: j.route_mode,
      proxyType: r.proxy_type,
      pricingVersion: r.pricing_version,
      baseTokens: r.base_tokens,
      tokenState: 'reserved',
      options: { ...inputs.options, input_hash: cmd.input_hash, max_credits_per_request: j.max_credits } as Prisma.InputJsonObject,
      lastEventSeq: 1,
      createdAt,
    };
  });

  let admitted: { batch: BatchRow; jobs: DataRequest[] };
  try {
    admitted = await deps.db.$transaction(
      async (tx) => {
        const batch = await tx.batch.create({
          data: {
            id: cmd.batch_id,
            tenantId: cmd.tenant_id,
            inputHash: cmd.input_hash,
            routeMode: modes.size === 1 ? cmd.jobs[0]!.route_mode : 'mixed',
            pricingVersion: reservationOf(ids[0]!).pricing_version,
            totalJobs: cmd.jobs.length,
            // What the batch's reservations hold, not what this call's ledger answer newly charged:
            // a racing create of the same batch may have reserved first and still lose this insert.
            chargedTokens: reserved.items.reduce((sum, r) => sum + r.base_tokens, 0),
            createdAt,
          },
        });
        // The jobs as inserted (the columns' defaults included), for the answer.
        const jobs = await tx.dataRequest.createManyAndReturn({ data: rows });
        // The first event of every job, written in bulk: what appendEvent does one at a time.
        await tx.requestEvent.createMany({
          data: rows.map((r) => ({
            requestId: r.id,
            seq: 1,
            kind: 'request.accepted',
            status: 'pending',
            payload: { route_mode: r.routeMode, base_tokens: r.baseTokens, batch_id: cmd.batch_id },
            createdAt,
          })),
        });
        const messages = rows.flatMap((r) => [
          {
            topic: 'requestLifecycle' as const,
            key: r.id!,
            envelope: makeEnvelope('requestLifecycle', 'request.event_appended', cmd.tenant_id, {
              request_id: r.id!,
              event_id: 1,
              kind: 'request.accepted',
              status: 'pending',
              payload: { route_mode: r.routeMode, base_tokens: r.baseTokens, batch_id: cmd.batch_id },
              created_at: createdAt.toISOString(),
            }),
          },
          firstJobOf({ id: r.id!, tenantId: cmd.tenant_id, routeMode: r.routeMode }),
        ]);
        await enqueueMany(tx, messages);
        return { batch, jobs };
      },
      { timeout: 120_000, maxWait: 10_000 },
    );
  } catch (err) {
    if (isUniqueViolation(err)) {
      const winner = await deps.db.batch.findUniqueOrThrow({ where: { id: cmd.batch_id } });
      return replayOf(deps.db, winner, cmd);
    }
    throw err;
  }
  // The answer describes the batch as admitted, from the rows the transaction wrote, not read back
  // after the commit: a job may already be running by then (its fetch job was published at commit),
  // and the answer of a submission says what was accepted; reads show the progress.
  const jobs = [...admitted.jobs].sort((a, b) => (a.batchIndex ?? 0) - (b.batchIndex ?? 0));
  return submissionViewOf(admitted.batch, jobs, admitted.batch.chargedTokens, false);
}

async function replayOf(db: PrismaClient, existing: BatchRow, cmd: BatchCommand): Promise<CabinetBatchResponse> {
  if (existing.tenantId !== cmd.tenant_id || existing.inputHash !== cmd.input_hash) {
    throw new PublicError('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was already used with a different body.');
  }
  return submissionView(db, existing, 0, true);
}

async function jobsOf(db: PrismaClient, batchId: string): Promise<DataRequest[]> {
  return db.dataRequest.findMany({ where: { batchId }, orderBy: { batchIndex: 'asc' } });
}

async function submissionView(db: PrismaClient, batch: BatchRow, chargedTokens: number, replay: boolean): Promise<CabinetBatchResponse> {
  return submissionViewOf(batch, await jobsOf(db, batch.id), chargedTokens, replay);
}

function submissionViewOf(batch: BatchRow, jobs: DataRequest[], chargedTokens: number, replay: boolean): CabinetBatchResponse {
  return {
    batch_id: batch.id,
    status: batchStatusOf(jobs.map((j) => j.status)),
    jobs: jobs.map((j) => ({
      id: j.id,
      url: j.urlOrigin,
      status: jobStatus(j.status),
      ...extractionMark(j),
      cached: j.cached,
      protected: j.protected,
      pricing_version: j.pricingVersion,
      route_mode: j.routeMode as BatchJob['route_mode'],
      base_tokens: j.baseTokens,
      protected_tokens: j.protectedTokens,
      captcha_tokens: j.captchaTokens,
      created_at: j.createdAt.toISOString(),
    })),
    charged_tokens: chargedTokens,
    pricing_version: batch.pricingVersion,
    route_mode: batch.routeMode as CabinetBatchResponse['route_mode'],
    idempotent_replay: replay,
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A job that asked for extraction says so: the gateway shows its extraction's readiness on top, as in the detail. */
const extractionMark = (j: DataRequest): { result_kind?: 'extraction' } =>
  asksForExtraction(j.options) ? { result_kind: 'extraction' } : {};

/** Failed and cancelled jobs show only the tenant-facing error (code + message), never internals. */
const isRequestErrorCode = (c: unknown): c is RequestErrorCode => (REQUEST_ERROR_CODES as readonly unknown[]).includes(c);

function redactedError(j: DataRequest): BatchJob['error'] {
  if (j.status !== 'failed' && j.status !== 'cancelled') return null;
  const e = (j.userError ?? null) as { code?: unknown; message?: unknown } | null;
  return {
    // Termination types the code (REQUEST_ERROR_CODES); a row without one (or from before) says FAILED.
    code: isRequestErrorCode(e?.code) ? e.code : j.status === 'cancelled' ? 'CANCELLED' : 'FAILED',
    message: typeof e?.message === 'string' ? e.message : j.status === 'cancelled' ? 'The request was cancelled.' : 'The request failed.',
  };
}

export async function readBatch(db: PrismaClient, tenantId: string, id: string): Promise<BatchView> {
  const batch = await db.batch.findUnique({ where: { id } });
  // Another tenant's batch is indistinguishable from a missing one.
  if (!batch || batch.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No such batch.');
  const jobs = await jobsOf(db, id);
  const statuses = jobs.map((j) => j.status);
  const allTerminal = jobs.length > 0 && statuses.every((s) => TERMINAL.has(s));
  const sum = (f: (j: DataRequest) => number) => jobs.reduce((n, j) => n + f(j), 0);
  const lastFinish = jobs.reduce<Date | null>((max, j) => (j.finishedAt && (!max || j.finishedAt > max) ? j.finishedAt : max), null);
  return {
    id: batch.id,
    status: batchStatusOf(statuses),
    total_jobs: jobs.length,
    completed_jobs: statuses.filter((s) => s === 'completed').length,
    failed_jobs: statuses.filter((s) => s === 'failed').length,
    base_tokens: sum((j) => j.baseTokens),
    protected_tokens: sum((j) => j.protectedTokens),
    captcha_tokens: sum((j) => j.captchaTokens),
    created_at: batch.createdAt.toISOString(),
    finished_at: allTerminal ? iso(lastFinish) : null,
    jobs: jobs.map((j) => ({
      id: j.id,
      url: j.urlOrigin,
      status: jobStatus(j.status),
      ...extractionMark(j),
      route_mode: j.routeMode as BatchJob['route_mode'],
      ...(j.proxyType ? { proxy_type: j.proxyType as NonNullable<BatchJob['proxy_type']> } : {}),
      token_state: j.tokenState as BatchJob['token_state'],
      cached: j.cached,
      protected: j.protected,
      pricing_version: j.pricingVersion,
      base_tokens: j.baseTokens,
      protected_tokens: j.protectedTokens,
      captcha_tokens: j.captchaTokens,
      created_at: j.createdAt.toISOString(),
      started_at: iso(j.startedAt),
      finished_at: iso(j.finishedAt),
      error: redactedError(j),
    })),
  };
}
