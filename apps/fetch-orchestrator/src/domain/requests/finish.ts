import { afterCommit } from '@wdr/kit/db';
import { enqueueMany, makeEnvelope } from '@wdr/kit/kafka';
import type { Envelope, ProxyNetworkTypeName, RequestErrorCode, TopicKey } from '@wdr/contracts';
import { Prisma, type DataRequest } from '../../generated/prisma/client.js';
import { announceBatchIfFinished } from '../batch-status.js';
import { recordTerminal } from '../request-metrics.js';
import { appendEvent } from './events.js';
import { TERMINAL } from './terminal.js';

type Tx = Prisma.TransactionClient;

export interface Termination {
  status: 'completed' | 'failed' | 'cancelled';
  error?: Record<string, unknown>;
  /** What the tenant sees (`user_error`, a batch job's `error`): a code of REQUEST_ERROR_CODES and a message. */
  userError?: { code: RequestErrorCode; message: string; reason?: 'budget_exhausted' };
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
 * the event, and ask the ledger (through the outbox) to resolve the reservation (`terminalMessages`).
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
      // A stage run where it was admitted ends its claim (domain/local-runs.ts).
      claimedUntil: null,
      ...(t.protected ? { protected: true } : {}),
      ...(t.debugArtifacts ? { debugArtifacts: t.debugArtifacts as Prisma.InputJsonObject } : {}),
      ...(t.captchaSolves ? { captchaType: 'captcha' } : {}),
      ...(t.cached ? { cached: true } : {}),
    },
  });
  if (!row) return tx.dataRequest.findUniqueOrThrow({ where: { id: request.id } });
  // Counted once the transaction committed (a rolled-back, redelivered finish does not count twice).
  afterCommit(tx, () => recordTerminal(row, t));
  await appendEvent(tx, row, `request.${t.status}`, t.status, terminalEventPayload(t));
  await enqueueMany(tx, terminalMessages(row, t));
  const back = leaseGiveBack(row, t);
  if (back) {
    await tx.$executeRawUnsafe(
      'UPDATE tenant_leases SET held = held - $2, updated_at = now() WHERE lease_id = $1::uuid',
      back.leaseId,
      back.tokens,
    );
  }
  // The last job of a batch to end announces the batch's completion.
  if (row.batchId) await announceBatchIfFinished(tx, row.batchId, row.tenantId);
  return row;
}

/** The payload of a request's terminal event (`request.<status>`): the tenant's error, the result's metadata. */
export const terminalEventPayload = (t: Termination): Record<string, unknown> => ({
  ...(t.userError ? { error: t.userError } : {}),
  ...(t.resultMeta ? { result: t.resultMeta } : {}),
});

/** A message a request's end sends through the outbox. */
export interface TerminalMessage {
  topic: TopicKey;
  key: string;
  envelope: Envelope;
}

/**
 * What a request's end sends through the outbox, built here once for both ways a request ends
 * (`finish` in an interactive transaction, `terminalMove` of requests/writes.ts as one statement):
 * first the settlement command that asks the ledger to resolve its reservation, then, when the
 * request asked for extraction, recipe-extractor's job (by request id: the page stays in
 * request_results, the claim-check recipe-extractor reads it from). `request` is the row before the
 * move; the traffic of earlier stages (`traffic_carried`) is added to this one's.
 */
export function terminalMessages(
  request: Pick<
    DataRequest,
    | 'id'
    | 'tenantId'
    | 'routeMode'
    | 'captchaTokens'
    | 'trafficCarried'
    | 'options'
    | 'leaseId'
    | 'leasePlanId'
    | 'pricingVersion'
    | 'proxyType'
    | 'baseTokens'
  >,
  t: Termination,
): TerminalMessage[] {
  const traffic = addTraffic(request.trafficCarried as TrafficReport | null, t.traffic);
  const messages: TerminalMessage[] = [
    {
      topic: 'billingCommands',
      // By tenant (the catalog's key for billing.commands): one partition settles all of a tenant's
      // requests, in batches as large as its rate makes them, and no two ledger transactions wait
      // on each other for its account and lease rows.
      key: request.tenantId,
      envelope: makeEnvelope('billingCommands', 'billing.settlement_requested', request.tenantId, {
        request_id: request.id,
        outcome: t.status,
        route_mode: request.routeMode,
        captcha_tokens: request.captchaTokens,
        ...(t.terminalStage ? { terminal_stage: t.terminalStage } : {}),
        ...(t.reason ? { reason: t.reason } : {}),
        ...(t.captchaSolves !== undefined ? { captcha_solves: t.captchaSolves } : {}),
        ...(traffic ? { traffic } : {}),
        // Admitted from a credit lease: the admission facts the ledger has no reservation of.
        ...(request.leaseId && request.leasePlanId
          ? {
              lease: {
                id: request.leaseId,
                pricing_version: request.pricingVersion,
                plan_id: request.leasePlanId,
                network_class: request.proxyType as ProxyNetworkTypeName,
                held_tokens: request.baseTokens,
              },
            }
          : {}),
      }),
    },
  ];
  const extraction = (request.options as { extraction?: { recipe_id?: string; version_id?: string } | null } | null)?.extraction;
  if (extraction?.recipe_id) {
    messages.push({
      topic: 'extractionJobs',
      key: request.id,
      envelope: makeEnvelope('extractionJobs', 'extraction.job_requested', request.tenantId, {
        request_id: request.id,
        recipe_id: extraction.recipe_id,
        ...(extraction.version_id ? { version_id: extraction.version_id } : {}),
        page_status: t.status,
      }),
    });
  }
  return messages;
}

/**
 * A request admitted from a credit lease that ends refunded (failed or cancelled, not stopped at a
 * ceiling) gives its hold back to its slot, in the statement or transaction of its terminal move
 * (both ways a request ends); the ledger moves nothing for it. Only while the slot still has that
 * lease (a slot on a newer lease holds nothing of it). A charged request keeps its hold: the
 * ledger takes at most that from the lease, and the rest returns with the lease.
 */
export function leaseGiveBack(
  request: Pick<DataRequest, 'leaseId' | 'baseTokens'>,
  t: Pick<Termination, 'status' | 'reason'>,
): { leaseId: string; tokens: number } | null {
  if (!request.leaseId || t.status === 'completed' || t.reason === 'budget_exhausted') return null;
  return { leaseId: request.leaseId, tokens: request.baseTokens };
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
