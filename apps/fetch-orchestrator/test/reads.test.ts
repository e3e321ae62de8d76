import { randomBytes, randomUUID } from 'node:crypto';
import { PgSql, type PgStatement } from '@wdr/kit/pg-sql';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { requestRowOf } from './database.js';
import { createTestDatabase, withDatabase, type TestDatabase } from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import { createLogger } from '@wdr/kit/log';
import type { HandlerContext } from '@wdr/kit/kafka';
import { GeoVerifier } from '../src/domain/proxies/geo.js';
import { ProxyPool } from '../src/domain/proxies/pool.js';
import { PrismaClient, type Prisma } from '../src/generated/prisma/client.js';
import { cancelRequest } from '../src/domain/cancel.js';
import { listRequests } from '../src/domain/request-list.js';
import { bytesOf, readEvents, readResult, RESULT_CHUNK_BYTES } from '../src/domain/request-reads.js';
import { appendEvent } from '../src/domain/requests/events.js';
import { finish } from '../src/domain/requests/finish.js';
import { endStatements, runStatements, statusAfter, type MoveRow } from '../src/domain/requests/writes.js';
import { purgeExpired } from '../src/domain/retention.js';
import { runHttpStage } from '../src/domain/run-http-stage.js';
import { createServiceClient } from '@wdr/kit/http-client';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';

/** The orchestrator's read side and cancel against the real Postgres (no Kafka needed: the outbox is a table). */
let database: TestDatabase;
let db: PrismaClient;
let sql: PgSql;
const sealer = Sealer.fromBase64(Buffer.alloc(32, 7).toString('base64'));

beforeAll(async () => {
  database = await createTestDatabase('fetch-orchestrator');
  db = new PrismaClient({ adapter: pgAdapterFor(database.url) });
  sql = new PgSql(database.url, { max: 2 });
}, 60_000);

afterAll(async () => {
  await db?.$disconnect();
  await sql?.end();
  await database?.drop();
}, 60_000);

/** A stored request as createRequest leaves it (reservation done), with its first event. */
async function storedRequest(tenantId: string, extra: Partial<Prisma.DataRequestUncheckedCreateInput> = {}) {
  const id = extra.id ?? randomUUID();
  return db.$transaction(async (tx) => {
    const row = await tx.dataRequest.create({
      data: requestRowOf(sealer, tenantId, { url: 'http://127.0.0.1:9/secret/path?q=1', options: { timeout_ms: 45000 }, ...extra, id }),
    });
    await appendEvent(tx, row, 'request.accepted', 'pending', { route_mode: 'http', base_tokens: 1 });
    return row;
  });
}

const errorOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return err as PublicError;
  }
  throw new Error('expected a PublicError');
};

describe('listRequests (keyset pages on created_at, id)', () => {
  it('pages through every request exactly once, newest first, while new requests keep arriving', async () => {
    const tenant = randomUUID();
    const base = Date.now() - 3600_000;
    // 45 requests over 15 distinct instants: three share each created_at, so ties straddle pages.
    const initial: string[] = [];
    for (let i = 0; i < 45; i++) initial.push((await storedRequest(tenant, { createdAt: new Date(base + Math.floor(i / 3) * 1000) })).id);
    await storedRequest(randomUUID()); // another tenant's: never listed

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listRequests(db, { tenantId: tenant, limit: 7, cursor });
      seen.push(...page.data.map((d) => d.id));
      expect(page.meta.limit).toBe(7);
      expect(page.meta.has_more).toBe(page.meta.next_cursor !== null);
      cursor = page.meta.next_cursor ?? undefined;
      if (cursor) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      // Concurrent inserts between pages: newer than everything paged so far.
      await storedRequest(tenant);
      pages++;
    } while (cursor);

    // Exactly the requests that existed when paging started, each once, in (created_at, id) desc
    // order; those created meanwhile are newer than the cursor and wait for the next first page.
    expect(pages).toBe(7);
    const rows = await db.dataRequest.findMany({ where: { id: { in: initial } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it('filters by status and rejects a cursor it did not issue', async () => {
    const tenant = randomUUID();
    const a = await storedRequest(tenant);
    const b = await storedRequest(tenant, { status: 'failed' });
    const failed = await listRequests(db, { tenantId: tenant, limit: 50, status: 'failed' });
    expect(failed.data.map((d) => d.id)).toEqual([b.id]);
    expect(failed.meta).toEqual({ next_cursor: null, has_more: false, limit: 50 });
    const pending = await listRequests(db, { tenantId: tenant, limit: 50, status: 'pending' });
    expect(pending.data.map((d) => d.id)).toEqual([a.id]);
    for (const bad of [
      'not a cursor!',
      Buffer.from('{"v":1,"t":"yesterday","i":"x"}').toString('base64url'),
      Buffer.from('[]').toString('base64url'),
    ]) {
      const err = await errorOf(listRequests(db, { tenantId: tenant, limit: 5, cursor: bad }));
      expect(err).toBeInstanceOf(PublicError);
      expect([err.code, err.details?.[0]?.field]).toEqual(['VALIDATION_FAILED', 'cursor']);
    }
  });
});

describe('readEvents and readResult', () => {
  it("returns the history after an id, ascending, and hides other tenants' requests", async () => {
    const tenant = randomUUID();
    const r = await storedRequest(tenant);
    await db.$transaction(async (tx) => {
      await appendEvent(tx, r, 'request.running', 'running', { stage: 'http', attempt: 1 });
      await appendEvent(tx, r, 'request.completed', 'completed', {});
    });
    const all = await readEvents(db, tenant, r.id);
    expect(all.events.map((e) => [e.event_id, e.kind])).toEqual([
      [1, 'request.accepted'],
      [2, 'request.running'],
      [3, 'request.completed'],
    ]);
    expect((await readEvents(db, tenant, r.id, 2)).events.map((e) => e.event_id)).toEqual([3]);
    expect((await errorOf(readEvents(db, randomUUID(), r.id))).code).toBe('NOT_FOUND');
  });

  it('answers the page until it expires, 409 before completion and for failures, and text on request', async () => {
    const tenant = randomUUID();
    const pending = await storedRequest(tenant);
    expect((await errorOf(readResult(db, tenant, pending.id, 'html'))).code).toBe('RESULT_NOT_READY');
    const failed = await storedRequest(tenant, { status: 'failed' });
    expect((await errorOf(readResult(db, tenant, failed.id, 'html'))).code).toBe('CONFLICT');

    const done = await storedRequest(tenant, { status: 'completed' });
    const html = '<html><head><title>T</title><script>var x=1</script></head><body><h1>Hello</h1><p>a  b</p><p>c</p></body></html>';
    await db.requestResult.create({
      data: {
        requestId: done.id,
        statusCode: 200,
        contentType: 'text/html; charset=utf-8',
        body: new Uint8Array(Buffer.from(html)),
        bytes: html.length,
        expiresAt: new Date(Date.now() + 60_000),
      },
    });
    const asHtml = await readResult(db, tenant, done.id, 'html');
    expect([asHtml.content_type, asHtml.length, (await bytesOf(asHtml)).toString()]).toEqual([
      'text/html; charset=utf-8',
      html.length,
      html,
    ]);
    let derived = 0;
    const derivations = { inc: () => void derived++ };
    expect((await db.requestResult.findUniqueOrThrow({ where: { requestId: done.id } })).text).toBeNull();
    // Three first reads at once share one derivation.
    const [asText] = await Promise.all([0, 1, 2].map(() => readResult(db, tenant, done.id, 'text', new Date(), derivations)));
    expect([asText!.content_type, (await bytesOf(asText!)).toString()]).toEqual(['text/plain; charset=utf-8', 'Hello\na b\nc']);
    // Derived once and stored: later reads are served from the row, without parsing the page again.
    expect((await db.requestResult.findUniqueOrThrow({ where: { requestId: done.id } })).text).toBe('Hello\na b\nc');
    for (let i = 0; i < 3; i++)
      expect((await bytesOf(await readResult(db, tenant, done.id, 'text', new Date(), derivations))).toString()).toBe('Hello\na b\nc');
    expect(derived).toBe(1);
    // What is served is the stored text (a row changed behind it shows).
    await db.requestResult.update({ where: { requestId: done.id }, data: { text: 'stored' } });
    expect((await bytesOf(await readResult(db, tenant, done.id, 'text'))).toString()).toBe('stored');
    expect((await errorOf(readResult(db, randomUUID(), done.id, 'html'))).code).toBe('NOT_FOUND');
    expect((await errorOf(readResult(db, tenant, done.id, 'html', new Date(Date.now() + 120_000)))).code).toBe('RESULT_EXPIRED');
  });

  it('reads a large page from its row a slice at a time, and ends with RESULT_EXPIRED when the row goes meanwhile', async () => {
    const tenant = randomUUID();
    const done = await storedRequest(tenant, { status: 'completed' });
    const page = randomBytes(2 * RESULT_CHUNK_BYTES + 12345);
    await db.requestResult.create({
      data: {
        requestId: done.id,
        statusCode: 200,
        contentType: 'application/pdf',
        body: new Uint8Array(page),
        bytes: page.length,
        expiresAt: new Date(Date.now() + 60_000),
      },
    });
    const result = await readResult(db, tenant, done.id, 'html');
    expect([result.content_type, result.length]).toEqual(['application/pdf', page.length]);
    const sizes: number[] = [];
    const parts: Buffer[] = [];
    for await (const part of result.chunks) {
      sizes.push(part.length);
      parts.push(part);
    }
    expect(sizes).toEqual([RESULT_CHUNK_BYTES, RESULT_CHUNK_BYTES, 12345]);
    expect(Buffer.concat(parts).equals(page)).toBe(true);

    const again = await readResult(db, tenant, done.id, 'html');
    const it = again.chunks[Symbol.asyncIterator]();
    expect((await it.next()).value).toHaveLength(RESULT_CHUNK_BYTES);
    await db.requestResult.delete({ where: { requestId: done.id } });
    expect((await errorOf(it.next())).code).toBe('RESULT_EXPIRED');
  });
});

describe('cancelRequest', () => {
  it('cancels once, refunds through the outbox, answers a repeat the same, and refuses finished or foreign requests', async () => {
    const tenant = randomUUID();
    const r = await storedRequest(tenant);
    const first = await cancelRequest(db, tenant, r.id);
    expect(first.changed).toBe(true);
    expect(first.detail).toMatchObject({ status: 'cancelled', token_state: 'settlement_pending', user_error: { code: 'CANCELLED' } });
    const again = await cancelRequest(db, tenant, r.id);
    expect(again).toEqual({ detail: first.detail, changed: false });
    const outbox = await withDatabase(
      database.url,
      async (c) =>
        (
          await c.query<{ topic: string; message_key: string; envelope: { type: string; data: Record<string, unknown> } }>(
            `SELECT topic, message_key, envelope FROM outbox_messages WHERE envelope->'data'->>'request_id' = $1 ORDER BY id`,
            [r.id],
          )
        ).rows,
    );
    const settlements = outbox.filter((m) => m.envelope.type === 'billing.settlement_requested');
    expect(settlements.map((m) => m.envelope.data['outcome'])).toEqual(['cancelled']);
    // Keyed by tenant (one ledger partition settles all of a tenant's requests).
    expect(settlements.map((m) => m.message_key)).toEqual([tenant]);
    expect(outbox.filter((m) => m.envelope.type === 'request.event_appended').map((m) => m.envelope.data['kind'])).toEqual([
      'request.accepted',
      'request.cancelled',
    ]);

    const completed = await storedRequest(tenant, { status: 'completed' });
    expect((await errorOf(cancelRequest(db, tenant, completed.id))).code).toBe('CONFLICT');
    const other = await storedRequest(tenant);
    expect((await errorOf(cancelRequest(db, randomUUID(), other.id))).code).toBe('NOT_FOUND');
    expect((await db.dataRequest.findUniqueOrThrow({ where: { id: other.id } })).status).toBe('pending');
  });

  it('keeps a request cancelled when its fetch job arrives afterwards: it never goes back to running', async () => {
    const tenant = randomUUID();
    const r = await storedRequest(tenant);
    await cancelRequest(db, tenant, r.id);
    const ctx: HandlerContext<Prisma.TransactionClient> = {
      topic: 'fetchJobs',
      alreadyProcessed: async () => false,
      transaction: async (fn) => {
        await db.$transaction(fn);
        return true;
      },
      writes: (statements) => sql.transaction(statements as PgStatement<unknown>[]),
    };
    // The ledger is never asked here (the job stops at the cancelled request): an unreachable one.
    const ledger = createServiceClient({ name: 'billing-ledger', baseUrl: 'http://127.0.0.1:9' });
    const log = createLogger('test', 'silent');
    const routes = { pool: new ProxyPool(db, sealer, log), geo: new GeoVerifier({ echoUrl: undefined }), maxExitAttempts: 1 };
    const deps = {
      db,
      sql,
      ledger,
      sealer,
      policy: new TargetPolicy(['127.0.0.1']),
      log,
      maxResultBytes: 1024,
      resultRetentionHours: 1,
      routes,
    };
    await runHttpStage(deps, r.id, ctx);
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
    expect([row.status, row.attempts, row.startedAt]).toEqual(['cancelled', 0, null]);
    expect((await readEvents(db, tenant, r.id)).events.map((e) => e.kind)).toEqual(['request.accepted', 'request.cancelled']);
  });

  it("lets the first of a cancel and a worker's terminal write win, exactly once", async () => {
    const tenant = randomUUID();
    const r = await storedRequest(tenant, { status: 'running' });
    const [cancelled, finished] = await Promise.allSettled([
      cancelRequest(db, tenant, r.id),
      db.$transaction((tx) => finish(tx, r, { status: 'completed' })),
    ]);
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
    const terminalEvents = (await readEvents(db, tenant, r.id)).events.filter((e) =>
      ['request.completed', 'request.cancelled'].includes(e.kind),
    );
    expect(terminalEvents).toHaveLength(1);
    expect(terminalEvents[0]!.status).toBe(row.status);
    if (row.status === 'completed') expect(cancelled.status === 'rejected' && (cancelled.reason as PublicError).code).toBe('CONFLICT');
    else expect(finished.status).toBe('fulfilled');
  });
});

describe('terminal moves in one statement (requests/writes.ts)', () => {
  it('a cancel and the one-statement terminal move race: exactly one wins, with one event, one settlement command and the page only if completed', async () => {
    for (let round = 0; round < 5; round++) {
      const tenant = randomUUID();
      const r = await storedRequest(tenant, { status: 'running' });
      const expiresAt = new Date(Date.now() + 3600_000);
      const { statements } = endStatements(
        { db, sql, sealer, resultRetentionHours: 1 },
        r,
        { status: 'completed', resultExpiresAt: expiresAt, terminalStage: 'http' },
        { result: { statusCode: 200, contentType: 'text/html', body: Buffer.from('<p>page</p>'), expiresAt } },
      );
      const [cancelled, moved] = await Promise.allSettled([cancelRequest(db, tenant, r.id), runStatements(sql, statements)]);
      const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
      const terminalEvents = (await readEvents(db, tenant, r.id)).events.filter((e) =>
        ['request.completed', 'request.cancelled'].includes(e.kind),
      );
      expect(terminalEvents).toHaveLength(1);
      expect(terminalEvents[0]!.status).toBe(row.status);
      const outbox = await withDatabase(
        database.url,
        async (c) =>
          (
            await c.query<{ type: string; outcome: string | null }>(
              `SELECT envelope->>'type' AS type, envelope->'data'->>'outcome' AS outcome FROM outbox_messages WHERE envelope->'data'->>'request_id' = $1 ORDER BY id`,
              [r.id],
            )
          ).rows,
      );
      expect(outbox.filter((m) => m.type === 'billing.settlement_requested').map((m) => m.outcome)).toEqual([row.status]);
      const stored = await db.requestResult.findUnique({ where: { requestId: r.id } });
      expect(stored !== null).toBe(row.status === 'completed');
      const answer = moved.status === 'fulfilled' ? ((moved.value[0] as MoveRow[])[0] ?? null) : null;
      if (row.status === 'completed') {
        expect(answer).toMatchObject({ moved: true, status: 'completed' });
        expect(cancelled.status === 'rejected' && (cancelled.reason as PublicError).code).toBe('CONFLICT');
      } else {
        expect(answer).toMatchObject({ moved: false });
        expect(await statusAfter(db, r.id, answer!)).toBe('cancelled');
      }
    }
  });

  it('finish() and the one-statement terminal move send the same settlement command, extraction job and terminal event', async () => {
    const tenant = randomUUID();
    const extra = {
      status: 'running',
      routeMode: 'auto',
      captchaTokens: 10,
      trafficCarried: { proxy_type: 'datacenter', measured: true, request_bytes: 100, response_bytes: 2000 },
      options: { timeout_ms: 45000, extraction: { recipe_id: randomUUID(), version_id: randomUUID() } },
    } satisfies Partial<Prisma.DataRequestUncheckedCreateInput>;
    const t = {
      status: 'completed' as const,
      terminalStage: 'browser' as const,
      captchaSolves: 1,
      reason: 'budget_exhausted' as const,
      resultMeta: { status_code: 200 },
      traffic: { proxy_type: 'datacenter' as const, measured: true, request_bytes: 1, response_bytes: 20 },
    };
    const viaFinish = await storedRequest(tenant, extra);
    await db.$transaction((tx) => finish(tx, viaFinish, t));
    const viaMove = await storedRequest(tenant, extra);
    const { statements, done } = endStatements({ db, sql, sealer, resultRetentionHours: 1 }, viaMove, t);
    expect(done(await runStatements(sql, statements))).toMatchObject({ moved: true, status: 'completed' });
    const sent = async (id: string) =>
      (
        await withDatabase(
          database.url,
          async (c) =>
            (
              await c.query<{ topic: string; type: string; data: Record<string, unknown> }>(
                `SELECT topic, envelope->>'type' AS type, envelope->'data' AS data FROM outbox_messages
                  WHERE envelope->'data'->>'request_id' = $1 AND topic <> 'requestLifecycle' ORDER BY topic`,
                [id],
              )
            ).rows,
        )
      ).map((m) => ({ ...m, data: { ...m.data, request_id: 'R' } }));
    const fromFinish = await sent(viaFinish.id);
    expect(fromFinish.map((m) => m.type)).toEqual(['billing.settlement_requested', 'extraction.job_requested']);
    expect(fromFinish[0]!.data).toEqual({
      request_id: 'R',
      outcome: 'completed',
      route_mode: 'auto',
      captcha_tokens: 10,
      terminal_stage: 'browser',
      reason: 'budget_exhausted',
      captcha_solves: 1,
      traffic: { proxy_type: 'datacenter', measured: true, request_bytes: 101, response_bytes: 2020 },
    });
    expect(await sent(viaMove.id)).toEqual(fromFinish);
    const terminal = async (id: string) => (await readEvents(db, tenant, id)).events.filter((e) => e.kind === 'request.completed');
    const [a] = await terminal(viaFinish.id);
    const [b] = await terminal(viaMove.id);
    expect(a).toBeDefined();
    expect(b?.payload).toEqual(a!.payload);
  });
});

describe('retention', () => {
  it('purges sealed target URLs and results past their retention, and nothing else', async () => {
    const tenantId = randomUUID();
    const past = new Date(Date.now() - 1000);
    const expired = await storedRequest(tenantId, { targetPurgeAt: past });
    const kept = await storedRequest(tenantId);
    for (const [r, expiresAt] of [
      [expired, past],
      [kept, new Date(Date.now() + 3600_000)],
    ] as const) {
      await db.requestResult.create({
        data: {
          requestId: r.id,
          statusCode: 200,
          contentType: 'text/html',
          body: new Uint8Array(Buffer.from('<p>x</p>')),
          bytes: 8,
          expiresAt,
        },
      });
    }
    const purged = await purgeExpired(db);
    expect(purged.targets).toBeGreaterThanOrEqual(1);
    expect(purged.results).toBeGreaterThanOrEqual(1);
    const rows = await withDatabase(
      database.url,
      async (c) =>
        (
          await c.query<{ id: string; sealed: boolean; result: boolean }>(
            'SELECT r.id, r.target_sealed IS NOT NULL AS sealed, x.request_id IS NOT NULL AS result FROM data_requests r LEFT JOIN request_results x ON x.request_id = r.id WHERE r.id = ANY($1)',
            [[expired.id, kept.id]],
          )
        ).rows,
    );
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId[expired.id]).toMatchObject({ sealed: false, result: false });
    expect(byId[kept.id]).toMatchObject({ sealed: true, result: true });
    // The request itself and its origin stay readable after the purge.
    expect(await db.dataRequest.findUnique({ where: { id: expired.id } })).toMatchObject({ urlOrigin: 'http://127.0.0.1:9' });
  });
});
