import { randomUUID } from 'node:crypto';
import { PgSql } from '@wdr/kit/pg-sql';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { pgPoolFor, type PgPool } from '@wdr/kit/pg-listen';
import { Sealer } from '@wdr/kit/sealing';
import type { ServiceClient } from '@wdr/kit/http-client';
import type { RenderMeta } from '@wdr/contracts';
import { PrismaClient, type Prisma } from '../src/generated/prisma/client.js';
import { cancelRequest } from '../src/domain/cancel.js';
import { bytesOf, readEvents, readResult } from '../src/domain/request-reads.js';
import { acceptRenderResult, startRenderJob } from '../src/domain/render-jobs.js';
import { appendEvent } from '../src/domain/requests/events.js';
import { stagePage } from './staged-page.js';
import { detailView } from '../src/domain/requests/views.js';
import { GeoVerifier } from '../src/domain/proxies/geo.js';
import { ProxyPool } from '../src/domain/proxies/pool.js';
import type { RouteDeps } from '../src/domain/proxies/route.js';
import { createLogger } from '@wdr/kit/log';

/**
 * The orchestrator's half of the render-job contract against the real Postgres: claim, hand back,
 * and the guarantees a repeated job relies on (no second effect, no settlement twice).
 */
let database: TestDatabase;
let db: PrismaClient;
let sql: PgSql;
const sealer = Sealer.fromBase64(Buffer.alloc(32, 7).toString('base64'));
let routes: RouteDeps;
let uploads: PgPool;
/** No request here has a ceiling: the ledger is never asked (a call fails the test). */
const ledger = { post: () => Promise.reject(new Error('the ledger is not asked here')) } as unknown as ServiceClient;
const deps = () => ({ db, sql, ledger, sealer, maxResultBytes: 1024 * 1024, resultRetentionHours: 1, routes });
const uploadDeps = () => ({ db, uploads, maxResultBytes: 1024 * 1024 });

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

async function browserRequest(
  tenantId: string,
  options: Record<string, unknown> = {},
  extra: Partial<Prisma.DataRequestUncheckedCreateInput> = {},
) {
  const id = randomUUID();
  return db.$transaction(async (tx) => {
    const row = await tx.dataRequest.create({
      data: {
        id,
        tenantId,
        urlOrigin: 'http://127.0.0.1:9',
        targetSealed: sealer.seal('http://127.0.0.1:9/app?q=secret', id),
        targetPurgeAt: new Date(Date.now() + 3600_000),
        status: 'pending',
        routeMode: 'browser',
        proxyType: 'datacenter',
        pricingVersion: 2,
        baseTokens: 5,
        tokenState: 'reserved',
        options: { timeout_ms: 20000, javascript: true, resource_policy: 'adaptive', debug_artifacts: false, ...options },
        ...extra,
      },
    });
    await appendEvent(tx, row, 'request.accepted', 'pending', { route_mode: 'browser', base_tokens: 5 });
    return row;
  });
}

const meta = (over: Partial<RenderMeta> = {}): RenderMeta => ({
  stage: 'browser',
  elapsed_ms: 120,
  javascript: true,
  resource_policy: { requested: 'adaptive', applied: 'site-light', blocked_requests: { image: 3 } },
  requests: { document: 1, script: 2, image: 3 },
  challenge: false,
  console_errors: 0,
  country: null,
  ...over,
});

async function settlementsOf(requestId: string) {
  const rows = await db.outboxMessage.findMany({
    where: { topic: 'billingCommands', envelope: { path: ['data', 'request_id'], equals: requestId } },
  });
  return rows.map((r) => (r.envelope as { data: Record<string, unknown> }).data);
}

describe('render jobs', () => {
  it('hands the claimed job the full URL and the options, and marks the request running in the browser stage', async () => {
    const tenant = randomUUID();
    const actions = [{ type: 'click', selector: '#go' }];
    const r = await browserRequest(tenant, {
      javascript: false,
      browser_actions: actions,
      wait_for_selector: '#x',
      headers: { 'X-A': '1' },
    });
    const answer = await startRenderJob(deps(), r.id);
    expect(answer.state).toBe('run');
    if (answer.state !== 'run') return;
    expect(answer.job).toMatchObject({
      request_id: r.id,
      tenant_id: tenant,
      attempt: 1,
      url: 'http://127.0.0.1:9/app?q=secret',
      reason: 'requested',
      route: { proxy: null, country: null },
      options: { timeout_ms: 20000, wait_for_selector: '#x', headers: { 'X-A': '1' }, browser_actions: actions },
    });
    // Browser actions enable JavaScript, as the spec says.
    expect(answer.job.options.javascript).toBe(true);
    const events = (await readEvents(db, tenant, r.id)).events;
    expect(events.at(-1)).toMatchObject({ kind: 'request.running', status: 'running', payload: { stage: 'browser', attempt: 1 } });
  });

  it('stores a completed render, finishes once, bills the browser stage, and ignores the repeated result', async () => {
    const tenant = randomUUID();
    const r = await browserRequest(tenant, { result_text_selector: '.x' });
    await startRenderJob(deps(), r.id);
    const result = {
      outcome: 'completed' as const,
      status_code: 200,
      content_type: 'text/html; charset=utf-8',
      upload: await stagePage(uploadDeps(), r.id, '<html><body><p class="x">rendered</p></body></html>', 'rendered'),
      meta: meta({ text_matches: 1 }),
    };
    expect(await acceptRenderResult(deps(), r.id, result)).toEqual({ accepted: true, status: 'completed' });
    expect(await acceptRenderResult(deps(), r.id, result)).toEqual({ accepted: false, status: 'completed' });
    // A redelivered job is told to skip.
    expect(await startRenderJob(deps(), r.id)).toEqual({ state: 'skip', status: 'completed' });

    const detail = detailView(await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } }));
    expect(detail.status).toBe('completed');
    expect(detail.result_meta).toMatchObject({
      stage: 'browser',
      status_code: 200,
      text_matches: 1,
      resource_policy: { applied: 'site-light' },
    });
    expect((await bytesOf(await readResult(db, tenant, r.id, 'text'))).toString()).toBe('rendered');
    expect((await bytesOf(await readResult(db, tenant, r.id, 'html'))).toString()).toContain('<p class="x">rendered</p>');
    const settlements = await settlementsOf(r.id);
    expect(settlements).toEqual([expect.objectContaining({ outcome: 'completed', route_mode: 'browser', terminal_stage: 'browser' })]);
    expect((await readEvents(db, tenant, r.id)).events.filter((e) => e.kind === 'request.completed')).toHaveLength(1);
  });

  it("fails a request with the renderer's code, keeps the debug artifact listing, and refunds", async () => {
    const tenant = randomUUID();
    const r = await browserRequest(tenant, { debug_artifacts: true });
    await startRenderJob(deps(), r.id);
    const listing = {
      items: [{ name: 'screenshot.png', content_type: 'image/png', bytes: 1234 }],
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    };
    await acceptRenderResult(deps(), r.id, {
      outcome: 'failed',
      code: 'WAIT_FOR_SELECTOR_TIMEOUT',
      message: 'wait_for_selector did not appear within 5000 ms',
      caused_by: 'tenant',
      debug_artifacts: listing,
    });
    const detail = detailView(await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } }));
    expect(detail.status).toBe('failed');
    expect(detail.user_error).toEqual({ code: 'WAIT_FOR_SELECTOR_TIMEOUT', message: 'wait_for_selector did not appear within 5000 ms' });
    expect(detail.error).toMatchObject({ code: 'WAIT_FOR_SELECTOR_TIMEOUT', stage: 'browser', caused_by: 'tenant' });
    expect(detail.debug_artifacts).toEqual(listing);
    expect(await settlementsOf(r.id)).toEqual([expect.objectContaining({ outcome: 'failed' })]);
  });

  it('refuses a rendered page above the result store limit instead of storing it', async () => {
    const tenant = randomUUID();
    const r = await browserRequest(tenant);
    await startRenderJob(deps(), r.id);
    await acceptRenderResult({ ...deps(), maxResultBytes: 10 }, r.id, {
      outcome: 'completed',
      status_code: 200,
      content_type: 'text/html',
      upload: await stagePage(uploadDeps(), r.id, Buffer.alloc(11), ''),
      meta: meta(),
    });
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
    expect([row.status, (row.error as { code: string }).code]).toEqual(['failed', 'TARGET_TOO_LARGE']);
    expect(await db.requestResult.findUnique({ where: { requestId: r.id } })).toBeNull();
  });

  it('keeps a request cancelled during its render cancelled: the result is ignored', async () => {
    const tenant = randomUUID();
    const r = await browserRequest(tenant);
    await startRenderJob(deps(), r.id);
    const upload = await stagePage(uploadDeps(), r.id, '<p>late</p>', 'late');
    await cancelRequest(db, tenant, r.id);
    const answer = await acceptRenderResult(deps(), r.id, {
      outcome: 'completed',
      status_code: 200,
      content_type: 'text/html',
      upload,
      meta: meta(),
    });
    expect(answer).toEqual({ accepted: false, status: 'cancelled' });
    expect(await db.requestResult.findUnique({ where: { requestId: r.id } })).toBeNull();
  });

  it('marks a request protected when the rendered page carried a challenge', async () => {
    const tenant = randomUUID();
    const r = await browserRequest(tenant);
    await startRenderJob(deps(), r.id);
    await acceptRenderResult(deps(), r.id, {
      outcome: 'completed',
      status_code: 200,
      content_type: 'text/html',
      upload: await stagePage(uploadDeps(), r.id, '<p>x</p>', 'x'),
      meta: meta({ challenge: true, resource_policy: { requested: 'adaptive', applied: 'full', blocked_requests: {} } }),
    });
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
    expect(row.protected).toBe(true);
    expect((await readEvents(db, tenant, r.id)).events.map((e) => e.kind)).toContain('request.protected');
  });

  it('fails (refunds) a request whose stored options the browser cannot run, instead of retrying it forever', async () => {
    const tenant = randomUUID();
    // Stored before browser actions were typed: a click without a selector.
    const r = await browserRequest(tenant, { browser_actions: [{ type: 'click' }] });
    expect(await startRenderJob(deps(), r.id)).toEqual({ state: 'skip', status: 'failed' });
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
    expect((row.userError as { code: string }).code).toBe('INVALID_OPTIONS');
    expect(await settlementsOf(r.id)).toEqual([expect.objectContaining({ outcome: 'failed' })]);
  });
});
