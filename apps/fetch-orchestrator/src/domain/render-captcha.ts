import { PublicError } from '@wdr/kit/errors';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { ledgerApi, type RenderCaptchaAnswer, type RenderCaptchaBody, type RenderCaptchaSolvedBody } from '@wdr/contracts';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { appendEvent } from './requests/events.js';
import { TERMINAL } from './requests/terminal.js';

export interface RenderCaptchaDeps {
  db: PrismaClient;
  /** Asked before every solve: a solve is a paid step under max_credits_per_request. */
  ledger: ServiceClient;
}

const notFound = () => new PublicError('NOT_FOUND', 'No such request.');

/**
 * browser-renderer found a CAPTCHA and has a solver: may it solve? The ledger is asked first
 * (step `captcha:<n>`, with the solves and the measured traffic so far; idempotent per step, so a
 * repeated render asks again harmlessly): a solve that would pass max_credits_per_request, or that
 * the balance does not cover, is refused and the renderer ends the request with that reason. When
 * allowed, the request moves to `solving_captcha` with a `request.solving_captcha` event.
 */
export async function authorizeCaptchaSolve(
  deps: RenderCaptchaDeps,
  requestId: string,
  body: RenderCaptchaBody,
): Promise<RenderCaptchaAnswer> {
  const current = await deps.db.dataRequest.findUnique({ where: { id: requestId }, select: { status: true } });
  if (!current) throw notFound();
  if (TERMINAL.has(current.status)) return { state: 'skip', status: current.status };
  const solve = body.solves_so_far + 1;
  const step = await callInternal(deps.ledger, ledgerApi.authorizeStep, {
    params: { requestId },
    body: {
      step_id: `captcha:${solve}`,
      stage: 'browser',
      captcha_solves: solve,
      ...(body.traffic_bytes !== undefined ? { traffic_bytes: body.traffic_bytes } : {}),
    },
  });
  if (!step.allowed) {
    return {
      state: 'refused',
      reason: step.reason ?? 'insufficient_credits',
      projected_tokens: step.projected_tokens,
      max_credits: step.max_credits,
    };
  }
  return deps.db.$transaction(async (tx) => {
    const [row] = await tx.dataRequest.updateManyAndReturn({
      where: { id: requestId, status: { notIn: [...TERMINAL] } },
      data: { status: 'solving_captcha' },
    });
    if (!row) {
      const ended = await tx.dataRequest.findUniqueOrThrow({ where: { id: requestId }, select: { status: true } });
      return { state: 'skip', status: ended.status };
    }
    await appendEvent(tx, row, 'request.solving_captcha', 'solving_captcha', { stage: 'browser', captcha_kind: body.captcha_kind, solve });
    return { state: 'allowed' };
  });
}

/** The solved token is in the page: the request runs on (`request.captcha_solved`, status `running`). */
export async function captchaSolved(
  deps: Pick<RenderCaptchaDeps, 'db'>,
  requestId: string,
  body: RenderCaptchaSolvedBody,
): Promise<{ status: string }> {
  return deps.db.$transaction(async (tx) => {
    const [row] = await tx.dataRequest.updateManyAndReturn({
      where: { id: requestId, status: 'solving_captcha' },
      data: { status: 'running' },
    });
    if (!row) {
      const current = await tx.dataRequest.findUnique({ where: { id: requestId }, select: { status: true } });
      if (!current) throw notFound();
      return { status: current.status };
    }
    await appendEvent(tx, row, 'request.captcha_solved', 'running', {
      stage: 'browser',
      captcha_kind: body.captcha_kind,
      solves: body.solves,
    });
    return { status: row.status };
  });
}

/**
 * Solves the orchestrator authorized for this request (one `request.solving_captcha` event each):
 * the most a render result may report as made, so a render never bills a solve the ledger was not
 * asked about.
 */
export async function authorizedSolves(tx: Prisma.TransactionClient, requestId: string): Promise<number> {
  const [row] = await tx.$queryRaw<
    { n: bigint }[]
  >`SELECT count(*) AS n FROM request_events WHERE request_id = ${requestId}::uuid AND kind = 'request.solving_captcha'`;
  return Number(row?.n ?? 0);
}
