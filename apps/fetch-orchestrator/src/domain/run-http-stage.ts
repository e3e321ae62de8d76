import { ledgerApi } from '@wdr/contracts';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { PoisonMessageError, type HandlerContext } from '@wdr/kit/kafka';
import type { Logger } from '@wdr/kit/log';
import type { Sealer } from '@wdr/kit/sealing';
import { isPgStatement, type PgSql } from '@wdr/kit/pg-sql';
import type { TargetPolicy } from '@wdr/kit/target-policy';
import type { DataRequest, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { fetchPage, type FetchOutcome } from './fetcher.js';
import { planRoute, runOnRoute, type RouteDeps, type Traffic } from './proxies/route.js';
import { proxyAgentsFor } from './proxies/transport.js';
import { classifyHttpPage, type PageSignal } from './page-signals.js';
import { unmetWait, type WaitOptions } from './http-waits.js';
import { hasCeiling } from './admission.js';
import type { Termination } from './requests/finish.js';
import { endStatements, HTTP_RUNNING, moveStatement, startSet } from './requests/writes.js';
import { requestRow } from './requests/read.js';
import { openInputs } from './requests/sealed-inputs.js';
import { TERMINAL } from './requests/terminal.js';
import { recordHttpFetch } from './request-metrics.js';
import { renderJobOf } from './stages.js';
import { serveFromCache, type ResultCacheSettings } from './result-cache.js';

type Tx = Prisma.TransactionClient;

export interface HttpStageDeps {
  db: PrismaClient;
  /** The statements of a request's moves, and the consumer's (requests/writes.ts, kit/pg-sql.ts). */
  sql: PgSql;
  /** The ledger, asked before an extra paid step (auto's escalation to the browser). */
  ledger: ServiceClient;
  sealer: Sealer;
  policy: TargetPolicy;
  log: Logger;
  maxResultBytes: number;
  resultRetentionHours: number;
  /** The result cache (domain/result-cache.ts); absent: none. */
  resultCache?: ResultCacheSettings | undefined;
  /** The proxy networks: exits, their health, geo verification. */
  routes: RouteDeps;
}

/** What the stage needs of its caller: the consumer's context, or a local run's (localStageContext). */
export type StageContext = Pick<HandlerContext<Tx>, 'alreadyProcessed' | 'writes'>;

/**
 * Run the HTTP stage of one request. Safe to run again after a crash: a request already terminal is
 * left alone, and the terminal write is one transaction with the consumer's processed-event record.
 * No interactive transaction: the start is one statement, and every end is one statement (plus the
 * batch's end and the cache entry) in the array form with the processed record (`ctx.writes`, see
 * requests/writes.ts). `known`: the row as its admission just stored it (a local run), not read again.
 */
export async function runHttpStage(deps: HttpStageDeps, requestId: string, ctx: StageContext, known?: DataRequest): Promise<void> {
  if (await ctx.alreadyProcessed()) return;
  const request = known ?? (await requestRow(deps.sql, requestId));
  if (!request) throw new PoisonMessageError(`request ${requestId} does not exist`);
  // Stored running by its admission (a local run that may not read the cache: requests/create.ts
  // startOf), or started here.
  const started = known?.status === 'running' ? known : await start(deps, ctx, request);
  if (!started) return;

  if (!started.targetSealed) {
    await end(deps, ctx, started, {
      status: 'failed',
      error: { code: 'TARGET_EXPIRED', message: 'the target URL passed its retention before the request ran' },
      userError: { code: 'TARGET_EXPIRED', message: 'The request expired before it could run.' },
    });
    return;
  }

  // The tenant's headers and cookies are opened here, for this stage only (sealed at rest).
  const options = openInputs(deps.sealer, started) as {
    timeout_ms?: number;
    headers?: Record<string, string>;
    cookies?: Record<string, string>;
    user_agent?: string;
    proxy?: string;
    geo_country?: string;
    max_credits_per_request?: number | null;
  } & WaitOptions;
  const t0 = Date.now();
  const url = deps.sealer.open(started.targetSealed, started.id);
  // The route first: a class with no usable exit, or a country that cannot be verified, ends here
  // (refunded) without a byte sent to the target.
  await deps.routes.pool.ready();
  const routed = await runOnRoute<FetchOutcome>(
    deps.routes,
    planRoute(deps.routes.pool, { proxyType: started.proxyType, options }),
    async (exit) => {
      const page = await fetchPage(
        {
          url,
          timeoutMs: options.timeout_ms ?? 45_000,
          headers: options.headers ?? {},
          cookies: options.cookies ?? {},
          userAgent: options.user_agent,
          ...(exit ? { agents: proxyAgentsFor(exit.url) } : {}),
        },
        deps.policy,
        deps.maxResultBytes,
      );
      return !page.ok && page.code === 'EXIT_FAILED' ? { exitFailed: page.message } : { done: page };
    },
  );
  const elapsedMs = Date.now() - t0;
  if (!routed.ok) {
    recordHttpFetch(routed.failure.code, elapsedMs / 1000);
    const { code, message } = routed.failure;
    await end(deps, ctx, started, {
      status: 'failed',
      error: { code, message, stage: 'http' },
      userError: { code, message },
      terminalStage: 'http',
      ...(routed.traffic ? { traffic: routed.traffic } : {}),
    });
    deps.log.warn({ requestId: started.id, code }, 'no route for the http stage');
    return;
  }
  const outcome: FetchOutcome = routed.value;
  const traffic = routed.traffic;
  const routeMeta = routed.country ? { country: routed.country } : {};
  const signal = outcome.ok ? classifyHttpPage(outcome, { shells: started.routeMode === 'auto' }) : undefined;

  if (started.routeMode === 'auto' && signal && signal.kind !== 'page') {
    recordHttpFetch('escalated', elapsedMs / 1000);
    await escalateToBrowser(deps, started, signal, ctx, traffic);
    deps.log.info({ requestId: started.id, signal: signal.kind, elapsedMs }, 'http stage escalated to the browser');
    return;
  }

  const isProtected = signal?.kind === 'challenge';
  // The waits hold in every mode: a page served without them is not the page asked for.
  const unmet = outcome.ok && !isProtected && outcome.statusCode < 500 ? unmetWait(outcome.body, outcome.contentType, options) : undefined;
  if (unmet && started.routeMode === 'auto' && unmet.code !== 'INVALID_SELECTOR') {
    recordHttpFetch('escalated', elapsedMs / 1000);
    await escalateToBrowser(deps, started, { kind: 'wait_unmet' }, ctx, traffic);
    deps.log.info({ requestId: started.id, signal: 'wait_unmet', elapsedMs }, 'http stage escalated to the browser');
    return;
  }
  const overBudget = outcome.ok ? await trafficOverBudget(deps, started, traffic) : undefined;
  recordHttpFetch(
    !outcome.ok
      ? outcome.code
      : overBudget
        ? 'BUDGET_EXHAUSTED'
        : isProtected
          ? 'PROTECTION_NOT_PASSED'
          : unmet
            ? unmet.code
            : outcome.statusCode >= 500
              ? 'TARGET_SERVER_ERROR'
              : 'completed',
    elapsedMs / 1000,
  );
  // Cancelled while the page was being fetched: the move's condition keeps it cancelled and stores
  // nothing (the UPDATE waits for a concurrent cancel's row lock and re-checks).
  if (!outcome.ok) {
    await end(deps, ctx, started, {
      status: 'failed',
      error: {
        code: outcome.code,
        message: outcome.message,
        stage: 'http',
        ...(outcome.statusCode ? { status_code: outcome.statusCode } : {}),
      },
      userError: { code: outcome.code, message: outcome.message },
      terminalStage: 'http',
      ...(traffic ? { traffic } : {}),
    });
  } else if (overBudget) {
    await end(deps, ctx, started, { ...overBudget, protected: isProtected });
  } else if (isProtected) {
    // An anti-bot challenge or block page is not the page asked for: not delivered, so refunded.
    // Plain HTTP cannot pass it (auto escalated above); the browser modes can try.
    const message = `The target answered with an anti-bot challenge (${signal.vendor}) that plain HTTP cannot pass; nothing was charged. Use mode auto or browser.`;
    await end(
      deps,
      ctx,
      started,
      {
        status: 'failed',
        error: {
          code: 'PROTECTION_NOT_PASSED',
          message: `challenge page (${signal.vendor})`,
          stage: 'http',
          status_code: outcome.statusCode,
        },
        userError: { code: 'PROTECTION_NOT_PASSED', message },
        terminalStage: 'http',
        protected: true,
        ...(traffic ? { traffic } : {}),
      },
      { before: [{ kind: 'request.protected', status: 'running', payload: { stage: 'http', protection: signal.vendor } }] },
    );
  } else if (outcome.statusCode >= 500) {
    // Target 5xx answers fail the stage (refunded).
    const message = `the target answered ${outcome.statusCode}`;
    await end(deps, ctx, started, {
      status: 'failed',
      error: { code: 'TARGET_SERVER_ERROR', message, stage: 'http', status_code: outcome.statusCode },
      userError: { code: 'TARGET_SERVER_ERROR', message },
      terminalStage: 'http',
      ...(traffic ? { traffic } : {}),
    });
  } else if (unmet) {
    // Not the page asked for: not delivered, refunded (the browser's codes, caused by the tenant).
    await end(deps, ctx, started, {
      status: 'failed',
      error: { code: unmet.code, message: unmet.message, stage: 'http', status_code: outcome.statusCode, caused_by: 'tenant' },
      userError: { code: unmet.code, message: unmet.message },
      terminalStage: 'http',
      ...(traffic ? { traffic } : {}),
    });
  } else {
    const expiresAt = new Date(Date.now() + deps.resultRetentionHours * 3600_000);
    await end(
      deps,
      ctx,
      started,
      {
        status: 'completed',
        resultExpiresAt: expiresAt,
        resultMeta: {
          stage: 'http',
          status_code: outcome.statusCode,
          content_type: outcome.contentType,
          bytes: outcome.body.length,
          redirects: outcome.redirects,
          elapsed_ms: elapsedMs,
          ...routeMeta,
        },
        terminalStage: 'http',
        ...(traffic ? { traffic } : {}),
      },
      {
        result: { statusCode: outcome.statusCode, contentType: outcome.contentType, body: outcome.body, expiresAt },
        fillCache: true,
        opened: { url, options },
      },
    );
  }
  deps.log.info({ requestId: started.id, ok: outcome.ok, elapsedMs }, 'http stage finished');
}

/**
 * The stage's start, or undefined when nothing is to run: an identical request of the tenant
 * completed within its TTL (this one gets a copy), or the request ended since it was read.
 */
async function start(deps: HttpStageDeps, ctx: StageContext, request: DataRequest): Promise<DataRequest | undefined> {
  if (await serveFromCache(deps, request)) return undefined;
  // Guarded: a request cancelled (or finished) since it was read must not come back to running.
  // One statement: running, one more attempt, the `request.running` event and its mirror.
  const [moved] = await moveStatement(deps.sql, request, {
    set: startSet(),
    events: [HTTP_RUNNING],
  });
  if (!moved?.moved) {
    await ctx.writes([]);
    return undefined;
  }
  return { ...request, status: 'running', attempts: moved.attempts ?? request.attempts + 1, startedAt: moved.started_at };
}

/**
 * End the request in the consumer's transaction of statements (the processed record first):
 * the terminal move, the batch's end, the cache entry (requests/writes.ts endStatements).
 */
async function end(
  deps: HttpStageDeps,
  ctx: StageContext,
  request: DataRequest,
  t: Termination,
  opts: Parameters<typeof endStatements>[3] = {},
): Promise<void> {
  const { statements, done } = endStatements(deps, request, t, opts);
  const results = await ctx.writes(statements);
  if (results) done(results);
}

/** Lock the request row for the rest of the transaction; its status, or undefined when there is no such request. */
export async function lockRequest(tx: Tx, requestId: string): Promise<{ status: string } | undefined> {
  const [current] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM data_requests WHERE id = ${requestId}::uuid FOR UPDATE`;
  return current;
}

/** Lock the request row; false when it is already terminal (cancelled meanwhile, or finished). */
export async function lockUnlessTerminal(tx: Tx, requestId: string): Promise<boolean> {
  const current = await lockRequest(tx, requestId);
  return current !== undefined && !TERMINAL.has(current.status);
}

/**
 * `auto` found a page only a browser can serve. The browser tariff is dearer than the HTTP one, so
 * the ledger is asked first (the step is idempotent by its id, so a redelivered job asks again
 * harmlessly): a refusal at the ceiling ends the request with `budget_exhausted`, charged at the
 * stage it ran (never above the ceiling); otherwise the render job is queued in the same
 * transaction that records this message as processed.
 */
async function escalateToBrowser(
  deps: HttpStageDeps,
  request: DataRequest,
  signal: Exclude<PageSignal, { kind: 'page' }> | { kind: 'wait_unmet' },
  ctx: StageContext,
  traffic: Traffic | undefined,
): Promise<void> {
  const trafficBytes = traffic?.measured ? traffic.request_bytes + traffic.response_bytes : 0;
  const step = await callInternal(deps.ledger, ledgerApi.authorizeStep, {
    params: { requestId: request.id },
    body: { step_id: 'escalate:browser', stage: 'browser', traffic_bytes: trafficBytes },
  });
  const isProtected = signal.kind === 'challenge';
  if (!step.allowed) {
    const budget = step.reason === 'budget_exhausted';
    const code = budget ? 'BUDGET_EXHAUSTED' : 'INSUFFICIENT_CREDITS';
    const message = budget
      ? `the page needs the browser stage (${step.projected_tokens} tokens), above max_credits_per_request (${step.max_credits})`
      : 'the balance does not cover the browser stage the page needs';
    await end(deps, ctx, request, {
      status: 'failed',
      error: { code, message, stage: 'http', ...(budget ? { reason: 'budget_exhausted' } : {}) },
      userError: { code, message, ...(budget ? { reason: 'budget_exhausted' } : {}) },
      terminalStage: 'http',
      protected: isProtected,
      ...(budget ? { reason: 'budget_exhausted' as const } : {}),
      ...(traffic ? { traffic } : {}),
    });
    return;
  }
  // One statement: the HTTP stage's proxy traffic rides along to the browser stage's settlement,
  // the `request.escalated` event, the render job; none of it for a request ended meanwhile.
  await ctx.writes([
    moveStatement(deps.sql, request, {
      set: [
        // The browser stage is the render job's now: a local run's claim ends here (domain/local-runs.ts).
        { raw: 'claimed_until = NULL' },
        ...(isProtected ? [{ raw: 'protected = true' }] : []),
        ...(traffic ? [{ column: 'traffic_carried', value: JSON.stringify(traffic), cast: 'jsonb' }] : []),
      ],
      events: [
        {
          kind: 'request.escalated',
          status: 'running',
          payload: {
            from: 'http',
            to: 'browser',
            reason: signal.kind,
            ...(signal.kind === 'challenge' ? { protection: signal.vendor } : {}),
          },
        },
      ],
      messages: [renderJobOf(request)],
    }),
  ]);
}

/**
 * Measured proxy traffic is a paid item; under max_credits_per_request the ledger is asked whether
 * it still fits before the result is delivered. A refusal ends the request with `budget_exhausted`
 * (charged, capped at the ceiling). Without a ceiling nothing is asked: traffic settles afterwards.
 */
async function trafficOverBudget(
  deps: HttpStageDeps,
  request: DataRequest,
  traffic: Traffic | undefined,
): Promise<Termination | undefined> {
  if (!hasCeiling(request) || !traffic?.measured) return undefined;
  const step = await callInternal(deps.ledger, ledgerApi.authorizeStep, {
    params: { requestId: request.id },
    body: { step_id: 'traffic:http', stage: 'http', traffic_bytes: traffic.request_bytes + traffic.response_bytes },
  });
  if (step.allowed || step.reason !== 'budget_exhausted') return undefined;
  const message = `the page's proxy traffic brings the request to ${step.projected_tokens} tokens, above max_credits_per_request (${step.max_credits})`;
  return {
    status: 'failed',
    error: { code: 'BUDGET_EXHAUSTED', message, stage: 'http', reason: 'budget_exhausted' },
    userError: { code: 'BUDGET_EXHAUSTED', message, reason: 'budget_exhausted' },
    terminalStage: 'http',
    reason: 'budget_exhausted',
    traffic,
  };
}

/**
 * The context of a stage run where it was admitted (domain/local-runs.ts): no consumer message, so
 * nothing to record as processed; the writes are one transaction of their statements (a single
 * statement alone: it is atomic by itself), each guarded by the state it changes.
 */
export function localStageContext(sql: PgSql): StageContext {
  return {
    alreadyProcessed: () => Promise.resolve(false),
    writes: async (statements) => {
      const onSql = statements.filter(isPgStatement);
      if (onSql.length < statements.length) throw new Error('a local stage writes PgSql statements only');
      if (onSql.length <= 1) return onSql.length === 0 ? [] : [await onSql[0]];
      return sql.transaction(onSql);
    },
  };
}
