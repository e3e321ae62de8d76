import { randomUUID } from 'node:crypto';
import { PgSql } from '@wdr/kit/pg-sql';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { pgPoolFor, type PgPool } from '@wdr/kit/pg-listen';
import { createLogger } from '@wdr/kit/log';
import { Sealer } from '@wdr/kit/sealing';
import type { ServiceClient } from '@wdr/kit/http-client';
import type { RenderMeta, RenderResult } from '@wdr/contracts';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { requestRowOf } from './database.js';
import { GeoVerifier } from '../src/domain/proxies/geo.js';
import { ProxyPool } from '../src/domain/proxies/pool.js';
import type { RouteDeps } from '../src/domain/proxies/route.js';
import { captchaSolved } from '../src/domain/render-captcha.js';
import { acceptRenderResult } from '../src/domain/render-jobs.js';
import { appendEvent } from '../src/domain/requests/events.js';
import { stagePage } from './staged-page.js';

/**
 * What a render result carries into the settlement against the real Postgres: measured proxy
 * traffic (measured or not), CAPTCHA solves never above those the orchestrator authorized, a
 * refused solve ending as budget_exhausted; and the way back from solving_captcha. The ledger's
 * side of a solve (authorizeStep) is covered end to end in apps/gateway/test/e2e/captcha.e2e.test.ts.
 */
let database: TestDatabase;
let db: PrismaClient;
let sql: PgSql;
let routes: RouteDeps;
let uploads: PgPool;
const sealer = Sealer.fromBase64(Buffer.alloc(32, 7).toString('base64'));
/** No request here has a ceiling: the ledger is never asked (a call fails the test). */
const ledger = { post: () => Promise.reject(new Error('the ledger is not asked here')) } as unknown as ServiceClient;
const deps = () => ({ db, sql, ledger, sealer, maxResultBytes: 1024 * 1024, resultRetentionHours: 1, routes });

beforeAll(async () => {
  database = await createTestDatabase('fetch-orchestrator');
  db = new PrismaClient({ adapter: pgAdapterFor(database.url) });
  sql = new PgSql(database.url, { max: 2 });
  uploads = pgPoolFor(database.url);
  routes = {
    pool: new ProxyPool(db, sealer, createLogger('test', 'silent')),
    geo: new GeoVerifier({ echoUrl: undefined }),
    maxExitAttempts: 3,
  };
}, 60_000);

afterAll(async () => {
  await uploads?.end();
  await db?.$disconnect();
  await sql?.end();
  await database?.drop();
}, 60_000);

async function runningRequest(status = 'running') {
  const id = randomUUID();
  return db.$transaction(async (tx) => {
    const row = await tx.dataRequest.create({
      data: requestRowOf(sealer, randomUUID(), {
        id,
        url: 'http://127.0.0.1:9/gate',
        status,
        routeMode: 'browser',
        proxyType: 'residential',
        baseTokens: 25,
        options: { timeout_ms: 20000 },
      }),
    });
    await appendEvent(tx, row, 'request.accepted', 'pending', { route_mode: 'browser', base_tokens: 25 });
    return row;
  });
}

const meta = (over: Partial<RenderMeta> = {}): RenderMeta => ({
  stage: 'browser',
  elapsed_ms: 100,
  javascript: true,
  resource_policy: { requested: 'adaptive', applied: 'full', blocked_requests: {} },
  requests: { document: 1 },
  challenge: false,
  console_errors: 0,
  country: null,
  ...over,
});

/** A completed render of `requestId`, its page staged through the upload path first. */
const completed = async (
  requestId: string,
  over: Partial<Extract<RenderResult, { outcome: 'completed' }>> = {},
): Promise<RenderResult> => ({
  outcome: 'completed',
  status_code: 200,
  content_type: 'text/html',
  upload: await stagePage({ db, uploads, maxResultBytes: 1024 * 1024 }, requestId, '<p>ok</p>', 'ok'),
  meta: meta(),
  ...over,
});

async function settlementOf(requestId: string): Promise<Record<string, unknown>> {
  const rows = await db.outboxMessage.findMany({
    where: { topic: 'billingCommands', envelope: { path: ['data', 'request_id'], equals: requestId } },
  });
  expect(rows).toHaveLength(1);
  return (rows[0]!.envelope as { data: Record<string, unknown> }).data;
}

const authorizeSolve = (row: { id: string; tenantId: string }, n: number) =>
  db.$transaction(async (tx) => {
    await tx.dataRequest.update({ where: { id: row.id }, data: { status: 'solving_captcha' } });
    await appendEvent(tx, row, 'request.solving_captcha', 'solving_captcha', { stage: 'browser', captcha_kind: 'recaptcha_v2', solve: n });
  });

describe('a render result into the settlement', () => {
  it('passes measured proxy traffic on with the request proxy type, and unmeasured traffic as unmeasured (never as zero bytes measured)', async () => {
    const measured = await runningRequest();
    await acceptRenderResult(
      deps(),
      measured.id,
      await completed(measured.id, { traffic: { measured: true, request_bytes: 1234, response_bytes: 56789 } }),
    );
    expect((await settlementOf(measured.id))['traffic']).toEqual({
      proxy_type: 'residential',
      measured: true,
      request_bytes: 1234,
      response_bytes: 56789,
    });

    const unmeasured = await runningRequest();
    await acceptRenderResult(deps(), unmeasured.id, {
      outcome: 'failed',
      code: 'TARGET_TIMEOUT',
      message: 'slow',
      caused_by: 'target',
      traffic: { measured: false, request_bytes: 0, response_bytes: 0 },
    });
    expect((await settlementOf(unmeasured.id))['traffic']).toEqual({
      proxy_type: 'residential',
      measured: false,
      request_bytes: 0,
      response_bytes: 0,
    });

    const direct = await runningRequest();
    await acceptRenderResult(deps(), direct.id, await completed(direct.id));
    expect((await settlementOf(direct.id))['traffic']).toBeUndefined();
  });

  it('bills the CAPTCHA solves the render made, never more than were authorized', async () => {
    const unauthorized = await runningRequest();
    await acceptRenderResult(
      deps(),
      unauthorized.id,
      await completed(unauthorized.id, { meta: meta({ captcha: { kind: 'recaptcha_v2', solves: 2 } }) }),
    );
    expect((await settlementOf(unauthorized.id))['captcha_solves']).toBeUndefined();
    expect((await db.dataRequest.findUniqueOrThrow({ where: { id: unauthorized.id } })).captchaType).toBeNull();

    const one = await runningRequest();
    await authorizeSolve(one, 1);
    expect(await captchaSolved({ db }, one.id, { captcha_kind: 'recaptcha_v2', solves: 1 })).toEqual({ status: 'running' });
    await acceptRenderResult(deps(), one.id, await completed(one.id, { meta: meta({ captcha: { kind: 'recaptcha_v2', solves: 2 } }) }));
    expect((await settlementOf(one.id))['captcha_solves']).toBe(1);
    expect((await db.dataRequest.findUniqueOrThrow({ where: { id: one.id } })).captchaType).toBe('captcha');

    const seen = await runningRequest();
    await acceptRenderResult(deps(), seen.id, await completed(seen.id, { meta: meta({ captcha: { kind: 'turnstile', solves: 0 } }) }));
    expect((await settlementOf(seen.id))['captcha_solves']).toBeUndefined();
  });

  it('ends a render stopped at the ceiling as budget_exhausted (charged), with the solves made before it', async () => {
    const row = await runningRequest();
    await authorizeSolve(row, 1);
    await captchaSolved({ db }, row.id, { captcha_kind: 'hcaptcha', solves: 1 });
    const answer = await acceptRenderResult(deps(), row.id, {
      outcome: 'failed',
      code: 'BUDGET_EXHAUSTED',
      message: 'solving the CAPTCHA (45 tokens in all) would pass max_credits_per_request (40)',
      caused_by: 'tenant',
      meta: meta({ captcha: { kind: 'hcaptcha', solves: 1 } }),
    });
    expect(answer).toEqual({ accepted: true, status: 'failed' });
    expect(await settlementOf(row.id)).toMatchObject({
      outcome: 'failed',
      reason: 'budget_exhausted',
      captcha_solves: 1,
      terminal_stage: 'browser',
    });
    const stored = await db.dataRequest.findUniqueOrThrow({ where: { id: row.id } });
    expect(stored.userError).toMatchObject({ code: 'BUDGET_EXHAUSTED', reason: 'budget_exhausted' });

    // Any other failure is refunded: no reason, no solves billed.
    const other = await runningRequest();
    await authorizeSolve(other, 1);
    await acceptRenderResult(deps(), other.id, {
      outcome: 'failed',
      code: 'CAPTCHA_NOT_SOLVED',
      message: 'no',
      caused_by: 'target',
      meta: meta({ captcha: { kind: 'hcaptcha', solves: 0 } }),
    });
    const s = await settlementOf(other.id);
    expect([s['reason'], s['captcha_solves']]).toEqual([undefined, undefined]);
  });
});

describe('back from solving_captcha', () => {
  it('returns to running with request.captcha_solved once, and leaves any other status alone', async () => {
    const row = await runningRequest();
    await authorizeSolve(row, 1);
    expect(await captchaSolved({ db }, row.id, { captcha_kind: 'turnstile', solves: 1 })).toEqual({ status: 'running' });
    expect(await captchaSolved({ db }, row.id, { captcha_kind: 'turnstile', solves: 1 })).toEqual({ status: 'running' });
    const events = await db.requestEvent.findMany({ where: { requestId: row.id }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => [e.kind, e.status])).toEqual([
      ['request.accepted', 'pending'],
      ['request.solving_captcha', 'solving_captcha'],
      ['request.captcha_solved', 'running'],
    ]);
    const cancelled = await runningRequest('cancelled');
    expect(await captchaSolved({ db }, cancelled.id, { captcha_kind: 'turnstile', solves: 1 })).toEqual({ status: 'cancelled' });
  });
});
