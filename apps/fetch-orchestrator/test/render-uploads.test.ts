import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { PgSql } from '@wdr/kit/pg-sql';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { errorHandler, PublicError } from '@wdr/kit/errors';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { sendBytesInternal } from '@wdr/kit/internal-call';
import { createLogger } from '@wdr/kit/log';
import { pgPoolFor, type PgPool } from '@wdr/kit/pg-listen';
import { Sealer } from '@wdr/kit/sealing';
import {
  orchestratorApi,
  RENDER_OUTCOME_HEADER,
  RENDER_UPLOAD_DIGEST_HEADER,
  renderUploadApi,
  type RenderMeta,
  type RenderResult,
} from '@wdr/contracts';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { requestRowOf } from './database.js';
import { renderJobRoutes } from '../src/api/render-job-routes.js';
import type { OrchestratorDeps } from '../src/deps.js';
import { bytesOf, readEvents, readResult } from '../src/domain/request-reads.js';
import { acceptRenderResult, startRenderJob } from '../src/domain/render-jobs.js';
import { CHUNK_BYTES, purgeStaleUploads, receiveWholeUpload, stageRenderUpload } from '../src/domain/render-uploads.js';
import { appendEvent } from '../src/domain/requests/events.js';
import { GeoVerifier } from '../src/domain/proxies/geo.js';
import { ProxyPool } from '../src/domain/proxies/pool.js';
import type { RouteDeps } from '../src/domain/proxies/route.js';
import { piecesOf, stagePage, uploadOf } from './staged-page.js';

/**
 * A rendered page handed back as bytes (domain/render-uploads.ts) against the real Postgres and
 * the real route on node:http, sent by the kit's client as browser-renderer sends it: a 10 MB page
 * arrives whole, a length or digest that does not match is refused with nothing kept, and a
 * repeated hand-back finishes the request once.
 */
let database: TestDatabase;
let db: PrismaClient;
let sql: PgSql;
let uploads: PgPool;
let routes: RouteDeps;
let server: http.Server;
let orchestrator: ServiceClient;
const MAX = 10 * 1024 * 1024;
const sealer = Sealer.fromBase64(Buffer.alloc(32, 7).toString('base64'));
const ledger = { post: () => Promise.reject(new Error('the ledger is not asked here')) } as unknown as ServiceClient;
const deps = () => ({ db, sql, ledger, sealer, maxResultBytes: MAX, resultRetentionHours: 1, routes });
const uploadDeps = () => ({ db, uploads, maxResultBytes: MAX });

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
  // The orchestrator's render-job routes as the service mounts them (without its caller gate).
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.use(
    renderJobRoutes(
      {
        db,
        sql,
        uploads,
        ledger,
        sealer,
        routes,
        env: { MAX_RESULT_BYTES: MAX, RESULT_RETENTION_HOURS: 1 },
      } as unknown as OrchestratorDeps,
      () => undefined,
    ),
  );
  app.use(errorHandler(() => undefined));
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  orchestrator = createServiceClient({ name: 'fetch-orchestrator', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await uploads?.end();
  await db?.$disconnect();
  await sql?.end();
  await database?.drop();
}, 60_000);

async function runningRequest(): Promise<{ id: string; tenantId: string }> {
  const id = randomUUID();
  const tenantId = randomUUID();
  await db.$transaction(async (tx) => {
    const row = await tx.dataRequest.create({
      data: requestRowOf(sealer, tenantId, {
        id,
        url: 'http://127.0.0.1:9/big',
        routeMode: 'browser',
        proxyType: null,
        baseTokens: 5,
        options: { timeout_ms: 20000, javascript: true, resource_policy: 'adaptive', debug_artifacts: false },
      }),
    });
    await appendEvent(tx, row, 'request.accepted', 'pending', { route_mode: 'browser', base_tokens: 5 });
  });
  expect((await startRenderJob(deps(), id)).state).toBe('run');
  return { id, tenantId };
}

const meta: RenderMeta = {
  stage: 'browser',
  elapsed_ms: 120,
  javascript: true,
  resource_policy: { requested: 'adaptive', applied: 'full', blocked_requests: {} },
  requests: { document: 1 },
  challenge: false,
  console_errors: 0,
  country: null,
};

const completed = (upload: Extract<RenderResult, { outcome: 'completed' }>['upload']): RenderResult => ({
  outcome: 'completed',
  status_code: 200,
  content_type: 'text/html; charset=utf-8',
  upload,
  meta,
});

/** Send an upload over HTTP as browser-renderer does (the kit's client), with the given digest. */
function send(id: string, uploadId: string, parts: Buffer[], sha256: string) {
  return sendBytesInternal(orchestrator, renderUploadApi.renderJobUpload, {
    params: { id, upload: uploadId },
    body: parts,
    headers: { [RENDER_UPLOAD_DIGEST_HEADER]: sha256 },
  });
}

async function stagedRows(requestId: string): Promise<{ chunks: number; uploads: number }> {
  return {
    chunks: await db.renderUploadChunk.count({ where: { requestId } }),
    uploads: await db.renderUpload.count({ where: { requestId } }),
  };
}

describe('a rendered page handed back as bytes', () => {
  it('arrives whole: a 10 MB page and its text, over HTTP, byte for byte, and the staging area is emptied', async () => {
    const r = await runningRequest();
    // Random bytes (not valid UTF-8, no two chunks alike) and a text with multi-byte characters.
    const body = randomBytes(MAX);
    const text = 'Zürich — 東京 '.repeat(50_000);
    const { textBytes, sha256 } = uploadOf(body, text);
    const uploadId = randomUUID();
    // The event loop keeps turning while the page arrives: the longest gap between timer ticks is printed.
    let last = performance.now();
    let worst = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 5);
    const stored = await send(r.id, uploadId, [body, textBytes], sha256).finally(() => clearInterval(ticker));
    process.stdout.write(`10 MB upload: longest event-loop gap ${Math.round(worst)} ms\n`);
    expect(stored).toEqual({ state: 'stored', bytes: body.length + textBytes.length, sha256 });
    expect((await stagedRows(r.id)).chunks).toBeGreaterThanOrEqual(10);

    const ref = { upload_id: uploadId, body_bytes: body.length, text_bytes: textBytes.length, sha256 };
    expect(await acceptRenderResult(deps(), r.id, completed(ref))).toEqual({ accepted: true, status: 'completed' });
    expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'html'))).equals(body)).toBe(true);
    expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'text'))).toString('utf8')).toBe(text);
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
    expect((row.resultMeta as { bytes: number }).bytes).toBe(MAX);
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
  }, 120_000);

  it('refuses an upload whose digest or length does not match, and keeps nothing of it', async () => {
    const r = await runningRequest();
    const body = Buffer.from('<html><body>page</body></html>');
    const { bytes, sha256 } = uploadOf(body, 'page');
    const wrong = sha256.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    await expect(send(r.id, randomUUID(), [bytes], wrong)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
    // Fewer bytes than declared (a sender cut short): refused.
    await expect(
      stageRenderUpload(
        uploadDeps(),
        r.id,
        randomUUID(),
        { contentType: 'application/octet-stream', length: bytes.length + 1, sha256 },
        Readable.from(piecesOf(bytes, 8)),
      ),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    // More bytes than declared: refused as soon as they pass it.
    await expect(
      stageRenderUpload(
        uploadDeps(),
        r.id,
        randomUUID(),
        { contentType: 'application/octet-stream', length: bytes.length - 1, sha256 },
        Readable.from(piecesOf(bytes, 8)),
      ),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    // Without a digest, or as JSON: refused before a byte is read.
    await expect(
      stageRenderUpload(
        uploadDeps(),
        r.id,
        randomUUID(),
        { contentType: 'application/octet-stream', length: bytes.length, sha256: undefined },
        Readable.from([bytes]),
      ),
    ).rejects.toMatchObject({ code: 'MALFORMED_REQUEST' });
    await expect(
      stageRenderUpload(
        uploadDeps(),
        r.id,
        randomUUID(),
        { contentType: 'application/json', length: bytes.length, sha256 },
        Readable.from([bytes]),
      ),
    ).rejects.toMatchObject({ code: 'MALFORMED_REQUEST' });
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
    // The request still runs: the job's next attempt can hand its page back.
    expect((await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } })).status).toBe('running');
  });

  it('refuses a result that names its upload with another length or digest, or an upload that never arrived: nothing is stored', async () => {
    const r = await runningRequest();
    const ref = await stagePage(uploadDeps(), r.id, '<p>page</p>', 'page');
    const refusals = [
      { ...ref, body_bytes: ref.body_bytes + 1 },
      { ...ref, text_bytes: ref.text_bytes + 1 },
      { ...ref, sha256: 'f'.repeat(64) },
      { ...ref, upload_id: randomUUID() },
    ];
    for (const wrong of refusals) {
      const err = await acceptRenderResult(deps(), r.id, completed(wrong)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PublicError);
      expect(err).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await db.requestResult.findUnique({ where: { requestId: r.id } })).toBeNull();
    const row = await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } });
    expect(row.status).toBe('running');
    expect(
      await db.outboxMessage.count({ where: { topic: 'billingCommands', envelope: { path: ['data', 'request_id'], equals: r.id } } }),
    ).toBe(0);
    // The right reference still finishes it.
    expect(await acceptRenderResult(deps(), r.id, completed(ref))).toEqual({ accepted: true, status: 'completed' });
  });

  it('finishes once when the hand-back is repeated (a renderer that timed out or crashed and ran the job again)', async () => {
    const r = await runningRequest();
    // Two attempts staged their pages before either result arrived.
    const first = await stagePage(uploadDeps(), r.id, '<p>first</p>', 'first');
    const second = await stagePage(uploadDeps(), r.id, '<p>second</p>', 'second');
    const answers = await Promise.all([
      acceptRenderResult(deps(), r.id, completed(first)),
      acceptRenderResult(deps(), r.id, completed(second)),
    ]);
    expect(answers.filter((a) => a.accepted)).toHaveLength(1);
    expect(answers.every((a) => a.status === 'completed')).toBe(true);
    const winner = answers[0]!.accepted ? 'first' : 'second';
    expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'text'))).toString()).toBe(winner);
    // Replayed once more, upload and result: the upload is told to skip, the result is ignored.
    const { bytes, sha256 } = uploadOf(Buffer.from('<p>third</p>'), 'third');
    expect(await send(r.id, randomUUID(), [bytes], sha256)).toEqual({ state: 'skip', status: 'completed' });
    expect(await acceptRenderResult(deps(), r.id, completed(first))).toEqual({ accepted: false, status: 'completed' });
    expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'text'))).toString()).toBe(winner);
    expect((await readEvents(db, r.tenantId, r.id)).events.filter((e) => e.kind === 'request.completed')).toHaveLength(1);
    expect(
      await db.outboxMessage.count({ where: { topic: 'billingCommands', envelope: { path: ['data', 'request_id'], equals: r.id } } }),
    ).toBe(1);
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
  });

  it('purges uploads never handed back after their retention', async () => {
    const r = await runningRequest();
    await stagePage(uploadDeps(), r.id, '<p>orphan</p>', 'orphan');
    expect(await purgeStaleUploads(db)).toBe(0);
    expect((await stagedRows(r.id)).uploads).toBe(1);
    expect(await purgeStaleUploads(db, new Date(Date.now() + 2 * 3600_000))).toBeGreaterThanOrEqual(1);
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
  });
});

/** A completed render handed back in one call, as browser-renderer sends it: the bytes, and the outcome in a header. */
function handBack(id: string, uploadId: string, parts: Buffer[], sha256: string, outcome: unknown) {
  return sendBytesInternal(orchestrator, orchestratorApi.renderJobHandBack, {
    params: { id, upload: uploadId },
    body: parts,
    headers: {
      [RENDER_UPLOAD_DIGEST_HEADER]: sha256,
      ...(outcome === undefined ? {} : { [RENDER_OUTCOME_HEADER]: Buffer.from(JSON.stringify(outcome)).toString('base64url') }),
    },
  });
}

/** A page and its text as one upload under a fresh id, with the reference its outcome names. */
function oneCallUpload(body: Buffer, text: string) {
  const { bytes, textBytes, sha256 } = uploadOf(body, text);
  const uploadId = randomUUID();
  return {
    bytes,
    textBytes,
    sha256,
    uploadId,
    ref: { upload_id: uploadId, body_bytes: body.length, text_bytes: textBytes.length, sha256 },
  };
}

describe('a rendered page handed back in one call', () => {
  it('finishes the request with the bytes, once: a repeat is answered not accepted', async () => {
    const r = await runningRequest();
    const body = Buffer.from('<html><body>Zürich — 東京</body></html>');
    const { bytes, textBytes, sha256, uploadId, ref } = oneCallUpload(body, 'Zürich — 東京');
    expect(await handBack(r.id, uploadId, [body, textBytes], sha256, completed(ref))).toEqual({ accepted: true, status: 'completed' });
    expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'html'))).equals(body)).toBe(true);
    expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'text'))).toString('utf8')).toBe('Zürich — 東京');
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
    // The job ran again (a renderer that timed out): not accepted, nothing staged, charged once.
    const again = randomUUID();
    expect(await handBack(r.id, again, [bytes], sha256, completed({ ...ref, upload_id: again }))).toEqual({
      accepted: false,
      status: 'completed',
    });
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
    expect((await readEvents(db, r.tenantId, r.id)).events.filter((e) => e.kind === 'request.completed')).toHaveLength(1);
    expect(
      await db.outboxMessage.count({ where: { topic: 'billingCommands', envelope: { path: ['data', 'request_id'], equals: r.id } } }),
    ).toBe(1);
  });

  it('stores a page within one chunk from memory, never staging it; a page over one chunk is staged, and both are stored alike', async () => {
    // Every row ever written to the staging area is counted by a trigger (staged rows are deleted
    // with the request's end, so the table's contents afterwards could not tell).
    await uploads.query(`CREATE TABLE IF NOT EXISTS staged_chunk_log (request_id uuid NOT NULL);
      CREATE OR REPLACE FUNCTION log_staged_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO staged_chunk_log VALUES (NEW.request_id); RETURN NEW; END $$;
      CREATE OR REPLACE TRIGGER log_staged_chunk AFTER INSERT ON render_upload_chunks FOR EACH ROW EXECUTE FUNCTION log_staged_chunk();`);
    const stagedChunks = async (requestId: string) =>
      (await uploads.query<{ n: number }>('SELECT count(*)::int AS n FROM staged_chunk_log WHERE request_id = $1::uuid', [requestId]))
        .rows[0]!.n;
    for (const [size, staged] of [
      [1_000, false],
      [CHUNK_BYTES - 64, false],
      [CHUNK_BYTES + 4_096, true],
    ] as const) {
      const r = await runningRequest();
      const body = randomBytes(size);
      const { bytes, sha256, uploadId, ref } = oneCallUpload(body, 'Zürich — 東京');
      expect(bytes.length > CHUNK_BYTES).toBe(staged);
      expect(await handBack(r.id, uploadId, piecesOf(bytes, 7), sha256, completed(ref))).toEqual({ accepted: true, status: 'completed' });
      expect((await stagedChunks(r.id)) > 0).toBe(staged);
      expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'html'))).equals(body)).toBe(true);
      expect((await bytesOf(await readResult(db, r.tenantId, r.id, 'text'))).toString('utf8')).toBe('Zürich — 東京');
      expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
    }
  });

  it('refuses, from memory, bytes over or under their declared length and text that is not UTF-8: the request keeps running', async () => {
    const r = await runningRequest();
    const body = Buffer.from('<p>page</p>');
    const bad = Buffer.from([0xc3, 0x28]); // not UTF-8
    const bytes = Buffer.concat([body, bad]);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const uploadId = randomUUID();
    const ref = { upload_id: uploadId, body_bytes: body.length, text_bytes: bad.length, sha256 };
    await expect(handBack(r.id, uploadId, [bytes], sha256, completed(ref))).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    // Fewer or more bytes than declared (a sender cut short, or one that lies): refused, as staging does.
    const other = uploadOf(body, 'page');
    for (const length of [other.bytes.length + 1, other.bytes.length - 1]) {
      await expect(
        receiveWholeUpload(
          uploadDeps(),
          { contentType: 'application/octet-stream', length, sha256: other.sha256 },
          Readable.from(piecesOf(other.bytes, 4)),
        ),
      ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    // Over one chunk: not read here (the route stages it).
    const big = Readable.from([Buffer.alloc(1)]);
    expect(
      await receiveWholeUpload(
        uploadDeps(),
        { contentType: 'application/octet-stream', length: CHUNK_BYTES + 1, sha256: other.sha256 },
        big,
      ),
    ).toBeUndefined();
    expect(big.readableEnded).toBe(false);
    expect((await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } })).status).toBe('running');
  });

  it('refuses an outcome that is missing, malformed, not completed or names other bytes, and keeps nothing', async () => {
    const r = await runningRequest();
    const body = Buffer.from('<p>page</p>');
    const { bytes, textBytes, sha256, uploadId, ref } = oneCallUpload(body, 'page');
    const refusals: [unknown, string][] = [
      [undefined, 'MALFORMED_REQUEST'],
      [{ ...completed(ref), upload: { ...ref, upload_id: randomUUID() } }, 'VALIDATION_FAILED'],
      [completed({ ...ref, body_bytes: ref.body_bytes + 1 }), 'VALIDATION_FAILED'],
      [completed({ ...ref, sha256: 'f'.repeat(64) }), 'VALIDATION_FAILED'],
      [{ outcome: 'failed', code: 'RENDER_FAILED', message: 'no', caused_by: 'platform' }, 'VALIDATION_FAILED'],
      [{ outcome: 'completed' }, 'VALIDATION_FAILED'],
    ];
    for (const [outcome, code] of refusals) {
      await expect(handBack(r.id, uploadId, [bytes], sha256, outcome)).rejects.toMatchObject({ code });
    }
    // Not base64url JSON.
    await expect(
      sendBytesInternal(orchestrator, orchestratorApi.renderJobHandBack, {
        params: { id: r.id, upload: uploadId },
        body: [bytes],
        headers: { [RENDER_UPLOAD_DIGEST_HEADER]: sha256, [RENDER_OUTCOME_HEADER]: Buffer.from('{"outcome":').toString('base64url') },
      }),
    ).rejects.toMatchObject({ code: 'MALFORMED_REQUEST' });
    // The outcome names the declared digest, but the bytes are not those: the upload refuses them.
    const other = Buffer.from('<p>pagf</p>');
    await expect(handBack(r.id, uploadId, [other, textBytes], sha256, completed(ref))).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    expect(await stagedRows(r.id)).toEqual({ chunks: 0, uploads: 0 });
    expect((await db.dataRequest.findUniqueOrThrow({ where: { id: r.id } })).status).toBe('running');
    // The right one still finishes it.
    expect(await handBack(r.id, uploadId, [bytes], sha256, completed(ref))).toEqual({ accepted: true, status: 'completed' });
  });
});
