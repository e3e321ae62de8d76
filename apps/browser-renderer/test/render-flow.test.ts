import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { eventually, startFixtureSite, testCallerCredentials, type FixtureSite } from '@wdr/testkit';
import { createServiceClient } from '@wdr/kit/http-client';
import { createLogger } from '@wdr/kit/log';
import { createMetrics } from '@wdr/kit/metrics';
import { TargetPolicy } from '@wdr/kit/target-policy';
import { RENDER_OUTCOME_HEADER, RenderOptions, type RenderJob } from '@wdr/contracts';
import { BrowserPool } from '../src/domain/browser-pool.js';
import { handBack, renderFlow, type RenderFlowDeps } from '../src/domain/render-flow.js';
import { testPool } from './pool.js';

/**
 * The render flow (claim, render, hand back) against the real Chromium and a local stand-in for
 * the orchestrator's internal routes that speaks their wire format and can hold a hand-back: the
 * pool's page slots bound the renders, and neither a claim nor a hand-back holds a slot.
 */
let site: FixtureSite;
let pool: BrowserPool;
let orchestrator: Server;
let orchestratorUrl: string;
/** What the stand-in saw, in order: `start <id>`, `hand-back <id>` (or `uploads <id>` and `result <id>`). */
const calls: string[] = [];
/** What each one-call hand-back carried: the outcome from its header, and the bytes' length and digest. */
const handedBack = new Map<
  string,
  { outcome: { outcome: string; upload: { body_bytes: number; text_bytes: number; sha256: string } }; bytes: number; sha256: string }
>();
/** Results answered only once released (by request id). */
const heldResults = new Map<string, () => void>();
let holdResults = true;

const job = (requestId: string): RenderJob => ({
  request_id: requestId,
  tenant_id: randomUUID(),
  attempt: 1,
  url: `${site.url}/js-page`,
  route_mode: 'browser',
  reason: 'requested',
  options: RenderOptions.parse({ javascript: true, timeout_ms: 15_000, resource_policy: 'adaptive', debug_artifacts: false }),
  route: { proxy: null, country: null },
  max_result_bytes: 10 * 1024 * 1024,
});

const bodyOf = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

beforeAll(async () => {
  site = await startFixtureSite();
  pool = testPool({ healthIntervalMs: 2_000 });
  await pool.start();
  orchestrator = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const answer = (value: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const [, id, kind] = /^\/internal\/v1\/render-jobs\/([^/]+)\/(start|uploads|result|hand-back)/.exec(req.url ?? '') ?? [];
      calls.push(`${kind} ${id}`);
      if (kind === 'start') return answer({ state: 'run', job: job(id!) });
      if (kind === 'uploads')
        return answer({ state: 'stored', bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
      if (kind === 'hand-back') {
        // The page's bytes and, in a header, the completed outcome naming them.
        const outcome = JSON.parse(Buffer.from(String(req.headers[RENDER_OUTCOME_HEADER]), 'base64url').toString('utf8'));
        handedBack.set(id!, { outcome, bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
      }
      if (kind === 'result' || kind === 'hand-back') {
        if (holdResults) await new Promise<void>((resolve) => heldResults.set(id!, resolve));
        return answer({ accepted: true, status: 'completed' });
      }
      res.writeHead(404).end();
    })();
  });
  await new Promise<void>((resolve) => orchestrator.listen(0, '127.0.0.1', resolve));
  orchestratorUrl = `http://127.0.0.1:${(orchestrator.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  holdResults = false;
  for (const release of heldResults.values()) release();
  await pool?.stop();
  await new Promise((resolve) => orchestrator?.close(resolve));
  await site?.close();
});

it('renders no more pages at once than the pool has slots, claims without waiting for one, and renders the next while the last is still handed back', async () => {
  const metrics = createMetrics('browser-renderer');
  const deps = {
    orchestrator: createServiceClient({
      name: 'fetch-orchestrator',
      baseUrl: orchestratorUrl,
      metrics,
      identity: testCallerCredentials('browser-renderer'),
    }),
    pool,
    policy: new TargetPolicy(['127.0.0.1']),
    captchaSolver: undefined,
    log: createLogger('test', 'silent'),
    metrics,
  } as unknown as RenderFlowDeps;
  // Each render's end, in the same record as the stand-in's calls, and how many ran at once.
  const withContext = pool.withContext.bind(pool);
  let rendering = 0;
  let mostAtOnce = 0;
  pool.withContext = async (fn, opts) => {
    mostAtOnce = Math.max(mostAtOnce, ++rendering);
    try {
      return await withContext(fn, opts);
    } finally {
      rendering--;
      calls.push('rendered');
    }
  };
  const render = renderFlow(deps);
  const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
  const flows = [a, b, c].map((id) => render(id));
  // One slot: the first renders...
  await eventually(
    async () => [...calls],
    (seen) => seen.includes(`hand-back ${a}`),
    30_000,
  );
  // ...and the second is claimed and rendered while the first's hand-back is still held.
  await eventually(
    async () => [...calls],
    (seen) => seen.includes(`hand-back ${b}`),
    30_000,
  );
  expect(heldResults.has(a)).toBe(true);
  holdResults = false;
  for (const release of heldResults.values()) release();
  const outcomes = await Promise.all(flows);
  expect(outcomes.map((o) => (o === 'skipped' ? o : o.outcome))).toEqual(['completed', 'completed', 'completed']);
  // Each page in one call, its outcome naming exactly the bytes that came with it.
  expect(calls.filter((call) => call.startsWith('uploads') || call.startsWith('result'))).toEqual([]);
  for (const id of [a, b, c]) {
    const h = handedBack.get(id)!;
    expect(h.outcome.outcome).toBe('completed');
    expect(h.outcome.upload.body_bytes + h.outcome.upload.text_bytes).toBe(h.bytes);
    expect(h.outcome.upload.sha256).toBe(h.sha256);
  }
  // One render at a time (one slot), but no claim waited for a slot: the three were claimed before
  // the first render ended (the consumer, not the flow, bounds how many jobs wait claimed).
  expect(mostAtOnce).toBe(1);
  expect(calls.filter((call) => call.startsWith('start') || call === 'rendered')).toEqual([
    `start ${a}`,
    `start ${b}`,
    `start ${c}`,
    'rendered',
    'rendered',
    'rendered',
  ]);
}, 90_000);

it('hands an outcome too large for the header back in two calls: the upload, then the result naming it', async () => {
  holdResults = false;
  const orchestratorClient = createServiceClient({
    name: 'fetch-orchestrator',
    baseUrl: orchestratorUrl,
    metrics: createMetrics('browser-renderer'),
    identity: testCallerCredentials('browser-renderer'),
  });
  const id = randomUUID();
  // Some 600 resource types' counts: over RENDER_OUTCOME_HEADER_MAX once encoded.
  const blocked = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`type-${i}`, i]));
  const answer = await handBack(orchestratorClient, id, {
    outcome: 'completed',
    status_code: 200,
    content_type: 'text/html',
    body: Buffer.from('<p>big outcome</p>'),
    text: 'big outcome',
    meta: {
      stage: 'browser',
      elapsed_ms: 1,
      javascript: true,
      resource_policy: { requested: 'compatible', applied: 'full', blocked_requests: blocked },
      requests: {},
      challenge: false,
      console_errors: 0,
      country: null,
    },
  });
  expect(answer).toEqual({ accepted: true, status: 'completed' });
  expect(calls.filter((call) => call.endsWith(id))).toEqual([`uploads ${id}`, `result ${id}`]);
  expect(handedBack.has(id)).toBe(false);
});
