import { PoisonMessageError, type HandlerContext } from '@wdr/kit/kafka';
import type { Logger } from '@wdr/kit/log';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { fetchPage } from './fetcher.js';
import { appendEvent, finish, TERMINAL } from './requests.js';
import type { Sealer } from '@wdr/kit/sealing';
import type { TargetPolicy } from '@wdr/kit/target-policy';

type Tx = Prisma.TransactionClient;

export interface HttpStageDeps {
  db: PrismaClient;
  sealer: Sealer;
  policy: TargetPolicy;
  log: Logger;
  maxResultBytes: number;
  resultRetentionHours: number;
}

/**
 * Run the HTTP stage of one request. Safe to run again after a crash: a request already terminal is
 * left alone, and the terminal write is one transaction with the consumer's processed-event record.
 */
export async function runHttpStage(deps: HttpStageDeps, requestId: string, ctx: HandlerContext<Tx>): Promise<void> {
  if (await ctx.alreadyProcessed()) return;
  const request = await deps.db.dataRequest.findUnique({ where: { id: requestId } });
  if (!request) throw new PoisonMessageError(`request ${requestId} does not exist`);

  // Guarded: a request cancelled (or finished) since it was read must not come back to running.
  const started = await deps.db.$transaction(async (tx) => {
    const moved = await tx.dataRequest.updateMany({
      where: { id: request.id, status: { notIn: [...TERMINAL] } },
      data: { status: 'running', startedAt: request.startedAt ?? new Date(), attempts: { increment: 1 } },
    });
    if (moved.count === 0) return null;
    const row = await tx.dataRequest.findUniqueOrThrow({ where: { id: request.id } });
    await appendEvent(tx, row, 'request.running', 'running', { stage: 'http', attempt: row.attempts });
    return row;
  });
  if (!started) {
    await ctx.transaction(async () => undefined);
    return;
  }

  if (!started.targetSealed) {
    await ctx.transaction(async (tx) => {
      await finish(tx, started, {
        status: 'failed',
        error: { code: 'TARGET_EXPIRED', message: 'the target URL passed its retention before the request ran' },
        userError: { code: 'TARGET_EXPIRED', message: 'The request expired before it could run.' },
      });
    });
    return;
  }

  const options = started.options as {
    timeout_ms?: number;
    headers?: Record<string, string>;
    cookies?: Record<string, string>;
    user_agent?: string;
  };
  const t0 = Date.now();
  const outcome = await fetchPage(
    {
      url: deps.sealer.open(started.targetSealed, started.id),
      timeoutMs: options.timeout_ms ?? 45_000,
      headers: options.headers ?? {},
      cookies: options.cookies ?? {},
      userAgent: options.user_agent,
    },
    deps.policy,
    deps.maxResultBytes,
  );
  const elapsedMs = Date.now() - t0;

  await ctx.transaction(async (tx) => {
    // Cancelled while the page was being fetched: keep it cancelled and store nothing. The row lock
    // orders this against a concurrent cancel.
    const [current] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM data_requests WHERE id = ${started.id}::uuid FOR UPDATE`;
    if (!current || TERMINAL.has(current.status)) return;
    if (outcome.ok) {
      const expiresAt = new Date(Date.now() + deps.resultRetentionHours * 3600_000);
      await tx.requestResult.upsert({
        where: { requestId: started.id },
        create: {
          requestId: started.id,
          statusCode: outcome.statusCode,
          contentType: outcome.contentType,
          body: new Uint8Array(outcome.body),
          bytes: outcome.body.length,
          expiresAt,
        },
        update: {},
      });
      await finish(tx, started, {
        status: 'completed',
        resultExpiresAt: expiresAt,
        resultMeta: {
          stage: 'http',
          status_code: outcome.statusCode,
          content_type: outcome.contentType,
          bytes: outcome.body.length,
          redirects: outcome.redirects,
          elapsed_ms: elapsedMs,
        },
      });
    } else {
      await finish(tx, started, {
        status: 'failed',
        error: { code: outcome.code, message: outcome.message, stage: 'http', ...(outcome.statusCode ? { status_code: outcome.statusCode } : {}) },
        userError: { code: outcome.code, message: outcome.message },
      });
    }
  });
  deps.log.info({ requestId: started.id, ok: outcome.ok, elapsedMs }, 'http stage finished');
}
