#!/usr/bin/env node
/**
 * fetch-orchestrator's side of one render hand-back of a large page, in process, against the real
 * Postgres (see bench/README.md, "Render hand-back"): CPU of this process (user + system) and the
 * longest event-loop stall per hand-back, for a page of BENCH_MB (10) MB with its text.
 *
 *   - bytes (this tree): the page arrives as a stream of 64 KiB reads (as from a socket) into
 *     stageRenderUpload, then acceptRenderResult with the small JSON outcome;
 *   - json (the tree before it, where the outcome carried body_base64 and text): the received
 *     JSON text decoded from its bytes and parsed with the reviver express.json uses, the zod
 *     schema, then acceptRenderResult (base64 decode, Prisma's bytea parameter).
 *
 * The same file runs in either tree (it picks the path the tree's contracts have).
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   node bench/render-handback.mjs            # BENCH_MB=10 BENCH_RUNS=8
 */
import { createHash, randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { createTestDatabase } from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { createLogger } from '@wdr/kit/log';
import { Sealer } from '@wdr/kit/sealing';
import * as contracts from '@wdr/contracts';
import { PrismaClient } from '../apps/fetch-orchestrator/dist/generated/prisma/client.js';
import { acceptRenderResult, startRenderJob } from '../apps/fetch-orchestrator/dist/domain/render-jobs.js';
import { appendEvent } from '../apps/fetch-orchestrator/dist/domain/requests/events.js';
import { GeoVerifier } from '../apps/fetch-orchestrator/dist/domain/proxies/geo.js';
import { ProxyPool } from '../apps/fetch-orchestrator/dist/domain/proxies/pool.js';

const MB = Number(process.env.BENCH_MB ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const bytesMode = 'renderUploadApi' in contracts;

const database = await createTestDatabase('fetch-orchestrator');
const db = new PrismaClient({ adapter: pgAdapterFor(database.url) });
const sealer = Sealer.fromBase64(Buffer.alloc(32, 7).toString('base64'));
const routes = {
  pool: new ProxyPool(db, sealer, createLogger('bench', 'silent')),
  geo: new GeoVerifier({ echoUrl: undefined }),
  maxExitAttempts: 3,
};
const max = 2 * MB * 1024 * 1024;
const deps = { db, ledger: undefined, sealer, maxResultBytes: max, resultRetentionHours: 1, routes };
let uploads;
let stageRenderUpload;
if (bytesMode) {
  ({ stageRenderUpload } = await import('../apps/fetch-orchestrator/dist/domain/render-uploads.js'));
  uploads = (await import('@wdr/kit/pg-listen')).pgPoolFor(database.url);
}

// A page like the fixture site's /big: MB million bytes of paragraphs; its text about as long.
const row = '<p>' + 'lorem ipsum dolor sit amet '.repeat(36) + '</p>\n';
const body = Buffer.from(row.repeat(Math.floor((MB * 1_000_000) / row.length)), 'utf8');
const text = ('lorem ipsum dolor sit amet '.repeat(36) + '\n').repeat(Math.floor((MB * 1_000_000) / row.length));
const meta = {
  stage: 'browser',
  elapsed_ms: 100,
  javascript: true,
  resource_policy: { requested: 'adaptive', applied: 'full', blocked_requests: {} },
  requests: { document: 1 },
  challenge: false,
  console_errors: 0,
  country: null,
};
// What express.json's reviver does (@wdr/kit/service.ts: noCoercionOverrides), for the json path.
const reviver = (key, value) => (key === '__proto__' || key === 'constructor' ? undefined : value);
const jsonBytes = bytesMode
  ? undefined
  : Buffer.from(
      JSON.stringify({
        outcome: 'completed',
        status_code: 200,
        content_type: 'text/html',
        body_base64: body.toString('base64'),
        text,
        meta,
      }),
    );

async function runningRequest() {
  const id = randomUUID();
  await db.$transaction(async (tx) => {
    const r = await tx.dataRequest.create({
      data: {
        id,
        tenantId: randomUUID(),
        urlOrigin: 'http://127.0.0.1:9',
        targetSealed: sealer.seal('http://127.0.0.1:9/big', id),
        targetPurgeAt: new Date(Date.now() + 3600_000),
        status: 'pending',
        routeMode: 'browser',
        pricingVersion: 2,
        baseTokens: 5,
        tokenState: 'reserved',
        options: { timeout_ms: 20000, javascript: true, resource_policy: 'adaptive', debug_artifacts: false },
      },
    });
    await appendEvent(tx, r, 'request.accepted', 'pending', { route_mode: 'browser', base_tokens: 5 });
  });
  await startRenderJob(deps, id);
  return id;
}

async function handBack(id) {
  if (!bytesMode) {
    const parsed = JSON.parse(jsonBytes.toString('utf8'), reviver);
    return acceptRenderResult(deps, id, contracts.orchestratorApi.renderJobResult.body.parse(parsed));
  }
  const textBytes = Buffer.from(text, 'utf8');
  const all = [body, textBytes];
  const sha256 = createHash('sha256').update(body).update(textBytes).digest('hex');
  const pieces = [];
  for (const b of all) for (let i = 0; i < b.length; i += 65_536) pieces.push(b.subarray(i, i + 65_536));
  const uploadId = randomUUID();
  const length = body.length + textBytes.length;
  // Only the orchestrator's side is timed: the pieces above are what the socket hands it.
  const t = process.cpuUsage();
  const stored = await stageRenderUpload(
    { db, uploads, maxResultBytes: max },
    id,
    uploadId,
    { contentType: 'application/octet-stream', length, sha256 },
    Readable.from(pieces),
  );
  const upload = { upload_id: uploadId, body_bytes: body.length, text_bytes: textBytes.length, sha256: stored.sha256 };
  const answer = await acceptRenderResult(
    deps,
    id,
    contracts.orchestratorApi.renderJobResult.body.parse(
      JSON.parse(JSON.stringify({ outcome: 'completed', status_code: 200, content_type: 'text/html', upload, meta }), reviver),
    ),
  );
  return { answer, cpu: process.cpuUsage(t) };
}

const cpus = [];
const stalls = [];
try {
  for (let i = 0; i < RUNS + 1; i++) {
    const id = await runningRequest();
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t = process.cpuUsage();
    const out = await handBack(id);
    const cpu = bytesMode ? out.cpu : process.cpuUsage(t);
    h.disable();
    const answer = bytesMode ? out.answer : out;
    if (!answer.accepted) throw new Error(`hand-back not accepted: ${JSON.stringify(answer)}`);
    const stored = await db.requestResult.findUniqueOrThrow({ where: { requestId: id }, select: { bytes: true } });
    if (stored.bytes !== body.length) throw new Error(`stored ${stored.bytes} bytes, not ${body.length}`);
    if (i === 0) continue; // warm-up
    cpus.push((cpu.user + cpu.system) / 1000);
    stalls.push(h.max / 1e6);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `${bytesMode ? 'bytes' : 'json'} hand-back of a ${MB} MB page (+ its text), ${RUNS} runs: orchestrator CPU median ${median(cpus).toFixed(1)} ms ` +
      `(min ${Math.min(...cpus).toFixed(1)}, max ${Math.max(...cpus).toFixed(1)}); longest event-loop stall median ${median(stalls).toFixed(1)} ms (max ${Math.max(...stalls).toFixed(1)})`,
  );
} finally {
  await uploads?.end();
  await db.$disconnect();
  await database.drop();
}
