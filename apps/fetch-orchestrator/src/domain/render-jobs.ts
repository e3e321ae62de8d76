import { PublicError } from '@wdr/kit/errors';
import type { Sealer } from '@wdr/kit/sealing';
import type { PgSql } from '@wdr/kit/pg-sql';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import {
  ledgerApi,
  RenderOptions,
  type ProxyNetworkTypeName,
  type RenderJob,
  type RenderResult,
  type RenderResultAnswer,
  type RenderStartAnswer,
  type RenderUploadAnswer,
  type RequestErrorCode,
} from '@wdr/contracts';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { authorizedSolves } from './render-captcha.js';
import { requestRow } from './requests/read.js';
import { openInputs } from './requests/sealed-inputs.js';
import { addTraffic, type Termination, type TrafficReport } from './requests/finish.js';
import {
  endStatements,
  moveStatement,
  runningEvent,
  runStatements,
  startSet,
  statusAfter,
  type MoveEvent,
  type MoveResult,
} from './requests/writes.js';
import { hasCeiling } from './admission.js';
import { TERMINAL } from './requests/terminal.js';
import { checkStagedUpload, checkUploadRef, dropStagedStatements, type WholeUpload } from './render-uploads.js';
import { serveFromCache, type ResultCacheSettings } from './result-cache.js';
import { browserRouteFor } from './proxies/browser-route.js';
import type { RouteDeps } from './proxies/route.js';

type Tx = Prisma.TransactionClient;

/** What the two render-job operations need. */
export interface RenderJobDeps {
  db: PrismaClient;
  /** The statements of a request's moves (requests/writes.ts). */
  sql: PgSql;
  /** The ledger, asked whether a browser stage's proxy traffic still fits the ceiling before its page is delivered. */
  ledger: ServiceClient;
  sealer: Sealer;
  maxResultBytes: number;
  resultRetentionHours: number;
  /** The result cache (domain/result-cache.ts); absent: none. */
  resultCache?: ResultCacheSettings | undefined;
  /** The proxy networks the browser goes out through. */
  routes: RouteDeps;
}

const notFound = () => new PublicError('NOT_FOUND', 'No such request.');

/**
 * browser-renderer claims the browser stage of a request: the request moves to `running` with a
 * `request.running` event (stage `browser`) and the renderer gets the full job. A request that is
 * already terminal (a redelivered job, a cancel) is skipped, so a repeated job repeats nothing.
 *
 * No interactive transaction: the row is read, the route chosen, the options checked, and then one
 * statement moves it (requests/writes.ts), to running, or straight to failed (with the batch's end)
 * when the stage cannot run; its condition on the status keeps a request cancelled meanwhile as it is.
 */
export async function startRenderJob(deps: RenderJobDeps, requestId: string): Promise<RenderStartAnswer> {
  const row = await requestRow(deps.sql, requestId);
  if (!row) throw notFound();
  if (TERMINAL.has(row.status)) return { state: 'skip', status: row.status };
  // An identical request of the tenant completed within its TTL: this one gets a copy, nothing to
  // render. (Given the row just read: the cache's own transaction re-checks its status.)
  if (await serveFromCache(deps, row)) return { state: 'skip', status: 'completed' };
  // The route is chosen (and a country verified through it) before anything is written: network I/O.
  const route = await browserRouteFor(deps.routes, { proxyType: row.proxyType, options: row.options as Record<string, unknown> });
  const fail = async (t: Termination): Promise<RenderStartAnswer> => {
    const { statements, done } = endStatements(deps, row, t, { start: true });
    const moved = done(await runStatements(deps.sql, statements));
    if (!moved) throw notFound();
    return { state: 'skip', status: await statusAfter(deps.db, row.id, moved) };
  };
  if (!row.targetSealed) {
    return fail({
      status: 'failed',
      error: { code: 'TARGET_EXPIRED', message: 'the target URL passed its retention before the request ran' },
      userError: { code: 'TARGET_EXPIRED', message: 'The request expired before it could run.' },
    });
  }
  const reason = row.routeMode === 'auto' ? 'escalated' : 'requested';
  // Headers, cookies and actions are opened for the renderer's answer only (sealed at rest).
  const o = openInputs(deps.sealer, row);
  const options = RenderOptions.safeParse({
    javascript: javascriptOf(o),
    timeout_ms: o['timeout_ms'] ?? 45_000,
    user_agent: o['user_agent'],
    headers: o['headers'] ?? {},
    cookies: o['cookies'] ?? {},
    wait_for_selector: o['wait_for_selector'],
    wait_for_text: o['wait_for_text'],
    result_text_selector: o['result_text_selector'],
    resource_policy: o['resource_policy'] ?? 'adaptive',
    browser_actions: o['browser_actions'] ?? [],
    debug_artifacts: o['debug_artifacts'] ?? false,
  });
  if (!options.success) {
    // Options stored under older rules (a retry of a request accepted before browser actions
    // were typed): nothing the browser can run. Failed and refunded, never retried forever.
    const message = 'The stored options of this request are not valid for the browser stage; submit it again.';
    return fail({
      status: 'failed',
      error: { code: 'INVALID_OPTIONS', message: 'stored options do not parse as render options', stage: 'browser' },
      userError: { code: 'INVALID_OPTIONS', message },
    });
  }
  if (!route.ok) {
    // No usable exit of the class, or the country could not be verified: nothing reached the target.
    const { code, message } = route.failure;
    return fail({
      status: 'failed',
      error: { code, message, stage: 'browser' },
      userError: { code, message },
      terminalStage: 'browser',
    });
  }
  const [moved] = await moveStatement(deps.sql, row, {
    set: startSet(),
    events: [runningEvent('browser', reason === 'escalated' ? { escalated: true } : {})],
  });
  if (!moved) throw notFound();
  if (!moved.moved) return { state: 'skip', status: await statusAfter(deps.db, row.id, moved) };
  const attempt = moved.attempts ?? row.attempts + 1;
  const job: RenderJob = {
    request_id: row.id,
    tenant_id: row.tenantId,
    attempt,
    url: deps.sealer.open(row.targetSealed, row.id),
    route_mode: row.routeMode as RenderJob['route_mode'],
    reason,
    options: options.data,
    // The proxy layer's choice for this request (direct, or an exit with its verified country).
    route: route.route,
    max_result_bytes: deps.maxResultBytes,
  };
  return { state: 'run', job };
}

/**
 * browser-renderer hands a render's outcome back. A completed page arrived before as bytes
 * (render-uploads.ts) and the outcome names that upload: a reference that does not match what was
 * staged (length, digest) is refused with nothing written. The page moves from the staging area
 * into the result store (the claim-check; Kafka never carries it) and the request finishes, billed
 * at the browser stage, in one transaction of statements (the terminal move with the page, the
 * batch's end, the cache entry, the staged uploads dropped). A result for a request that is
 * already terminal is acknowledged and ignored.
 */
export async function acceptRenderResult(
  deps: RenderJobDeps,
  requestId: string,
  result: RenderResult,
  /**
   * The upload as this very call received it (the one-call hand-back): checked in memory, not read
   * back; with its `page` (receiveWholeUpload), stored from memory, never staged.
   */
  staged?: (RenderUploadAnswer & { state: 'stored' }) | WholeUpload,
): Promise<RenderResultAnswer> {
  const overBudget = await browserTrafficOverBudget(deps, requestId, result);
  const row = await requestRow(deps.sql, requestId);
  if (!row) throw notFound();
  if (TERMINAL.has(row.status)) return { accepted: false, status: row.status };
  let termination: Termination;
  let page: MoveResult | undefined;
  const before: MoveEvent[] = [];
  if (result.outcome === 'completed' && overBudget) {
    // The page's proxy traffic passed max_credits_per_request: not delivered, charged up to the
    // ceiling (what ran), like the HTTP stage and a CAPTCHA solve refused at the ceiling.
    const t = failed('BUDGET_EXHAUSTED', overBudget, { reason: 'budget_exhausted', status_code: result.status_code });
    const solves = await captchaSolvesOf(deps.db, requestId, result);
    termination = {
      ...t,
      userError: { ...t.userError, reason: 'budget_exhausted' },
      reason: 'budget_exhausted',
      resultMeta: { ...result.meta, stage: 'browser' },
      protected: result.meta.challenge,
      ...(solves > 0 ? { captchaSolves: solves } : {}),
    };
  } else if (result.outcome === 'completed') {
    const upload = result.upload;
    // The page arrived before as bytes (render-uploads.ts): the outcome must name it as it was staged.
    if (staged) checkUploadRef(upload, staged);
    else {
      try {
        await checkStagedUpload(deps.db, requestId, upload);
      } catch (err) {
        // A repeated hand-back that finished the request since this one read it dropped every
        // staged upload with it: this one is a repeat (not accepted), not a bad reference.
        const now = await requestRow(deps.sql, requestId);
        if (now && TERMINAL.has(now.status)) return { accepted: false, status: now.status };
        throw err;
      }
    }
    if (upload.body_bytes > deps.maxResultBytes) {
      const message = `the page is larger than ${deps.maxResultBytes} bytes`;
      termination = failed('TARGET_TOO_LARGE', message, { status_code: result.status_code });
    } else {
      const expiresAt = new Date(Date.now() + deps.resultRetentionHours * 3600_000);
      // Received whole: stored from memory; staged: joined from the staging area by the statement.
      const stored =
        staged && 'page' in staged
          ? pageOf(staged.page, upload.body_bytes, upload.text_bytes)
          : { body: { uploadId: upload.upload_id, bodyBytes: upload.body_bytes, textBytes: upload.text_bytes } };
      page = { statusCode: result.status_code, contentType: result.content_type, ...stored, expiresAt };
      if (result.meta.challenge) before.push({ kind: 'request.protected', status: 'running', payload: { stage: 'browser' } });
      const solves = await captchaSolvesOf(deps.db, requestId, result);
      termination = {
        status: 'completed',
        resultExpiresAt: expiresAt,
        resultMeta: { ...result.meta, status_code: result.status_code, content_type: result.content_type, bytes: upload.body_bytes },
        terminalStage: 'browser',
        protected: result.meta.challenge,
        ...(solves > 0 ? { captchaSolves: solves } : {}),
      };
    }
  } else {
    // The ledger refused a CAPTCHA solve at max_credits_per_request: the tenant's own ceiling,
    // so charged (what ran, solves already made included), capped, not refunded.
    const budget = result.code === 'BUDGET_EXHAUSTED';
    const solves = budget ? await captchaSolvesOf(deps.db, requestId, result) : 0;
    const t = failed(result.code, result.message, {
      caused_by: result.caused_by,
      ...(result.status_code !== undefined ? { status_code: result.status_code } : {}),
      ...(budget ? { reason: 'budget_exhausted' } : {}),
    });
    termination = {
      ...t,
      ...(budget ? { userError: { ...t.userError, reason: 'budget_exhausted' }, reason: 'budget_exhausted' as const } : {}),
      ...(solves > 0 ? { captchaSolves: solves } : {}),
      ...(result.meta ? { resultMeta: { stage: 'browser', ...result.meta } } : {}),
      ...(result.debug_artifacts ? { debugArtifacts: result.debug_artifacts } : {}),
      protected: result.meta?.challenge === true,
    };
  }
  // Proxy traffic as the renderer measured it at the socket (unmeasured is passed on as such).
  if (result.traffic && row.proxyType) termination.traffic = { proxy_type: row.proxyType as ProxyNetworkTypeName, ...result.traffic };
  const { statements, done } = endStatements(deps, row, termination, { before, ...(page ? { result: page } : {}), fillCache: true });
  // Whatever this request staged goes with its end (this hand-back's page, an earlier attempt's).
  const moved = done(
    (await runStatements(deps.sql, [...statements, ...dropStagedStatements(deps.sql, requestId)])).slice(0, statements.length),
  );
  if (!moved) throw notFound();
  return moved.moved
    ? { accepted: true, status: termination.status }
    : { accepted: false, status: await statusAfter(deps.db, row.id, moved) };
}

/**
 * Measured proxy traffic of the browser stage is a paid item: under a ceiling (the request's
 * max_credits_per_request, or a project run's budget room) the ledger is asked whether the whole
 * (base of the browser stage, CAPTCHA solves, the traffic of both stages) still fits before the
 * page is delivered. The reason when it does not, else undefined. Asked outside the transaction
 * (the step is idempotent by its id: a redelivered result asks again harmlessly).
 */
async function browserTrafficOverBudget(deps: RenderJobDeps, requestId: string, result: RenderResult): Promise<string | undefined> {
  if (result.outcome !== 'completed' || !result.traffic?.measured) return undefined;
  const row = await requestRow(deps.sql, requestId);
  if (!row || TERMINAL.has(row.status) || !row.proxyType || !hasCeiling(row)) return undefined;
  const traffic = addTraffic(row.trafficCarried as TrafficReport | null, {
    proxy_type: row.proxyType as ProxyNetworkTypeName,
    ...result.traffic,
  });
  if (!traffic?.measured) return undefined;
  const solves = await captchaSolvesOf(deps.db, requestId, result);
  const step = await callInternal(deps.ledger, ledgerApi.authorizeStep, {
    params: { requestId },
    body: {
      step_id: 'traffic:browser',
      stage: 'browser',
      captcha_solves: solves,
      traffic_bytes: traffic.request_bytes + traffic.response_bytes,
    },
  });
  if (step.allowed || step.reason !== 'budget_exhausted') return undefined;
  return `the page's proxy traffic brings the request to ${step.projected_tokens} tokens, above max_credits_per_request (${step.max_credits})`;
}

/** CAPTCHA solves to bill: those the render made, never more than the ledger was asked to allow. */
async function captchaSolvesOf(tx: Tx | PrismaClient, requestId: string, result: RenderResult): Promise<number> {
  const made = result.meta?.captcha?.solves ?? 0;
  return made > 0 ? Math.min(made, await authorizedSolves(tx, requestId)) : 0;
}

/** UTF-8, refusing what is not (as the staged form's `convert_from` in Postgres does). */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An upload received whole, split as the staged form is split in Postgres (requests/writes.ts):
 * the body, its first `bodyBytes`, and the text, the `textBytes` after them (empty when none).
 */
function pageOf(upload: Buffer, bodyBytes: number, textBytes: number): { body: Buffer; text: string } {
  try {
    return { body: upload.subarray(0, bodyBytes), text: utf8.decode(upload.subarray(bodyBytes, bodyBytes + textBytes)) };
  } catch {
    throw new PublicError('VALIDATION_FAILED', "The upload's text is not UTF-8.");
  }
}

function failed(
  code: RequestErrorCode,
  message: string,
  extra: Record<string, unknown>,
): Termination & { userError: NonNullable<Termination['userError']> } {
  return {
    status: 'failed',
    error: { code, message, stage: 'browser', ...extra },
    userError: { code, message },
    terminalStage: 'browser',
  };
}

/**
 * JavaScript in the browser stage: the submission's `javascript` (default true), turned on by a
 * non-empty `browser_actions` or `debug_artifacts: true` (the spec: each enables JavaScript).
 */
export function javascriptOf(o: Record<string, unknown>): boolean {
  return (
    ((o['javascript'] as boolean | undefined) ?? true) ||
    ((o['browser_actions'] as unknown[] | undefined)?.length ?? 0) > 0 ||
    o['debug_artifacts'] === true
  );
}
