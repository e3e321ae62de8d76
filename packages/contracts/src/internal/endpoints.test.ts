import { describe, expect, it } from '@jest/globals';
import type { AnyInternalEndpoint } from './endpoint.js';
import { ledgerApi } from './ledger.js';
import { orchestratorApi } from './orchestrator.js';
import { RENDER_PATHS } from './render.js';
import { rendererApi } from './renderer.js';
import { renderUploadApi } from './render-upload.js';
import { FLEET_SERVICES, INTERNAL_APIS, internalEndpointsOf } from './services.js';

const ID = '0b4f5a4e-8d1c-4c3e-9f65-1a2b3c4d5e6f';
const TENANT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const HASH = 'a'.repeat(64);

/** The request path Express would match `route` against: `:name` matches one segment. */
function matches(route: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const re = new RegExp(
    `^${route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, n: string) => (names.push(n), '([^/]+)'))}$`,
  );
  const m = re.exec(path);
  return m ? Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) : null;
}

const sample: Record<string, string> = {
  id: ID,
  requestId: ID,
  leaseId: ID,
  tenantId: TENANT,
  name: 'screenshot.png',
  operationId: 'generation:op-1',
  upload: '5f2b8c1e-3a4d-4e6f-8a9b-0c1d2e3f4a5b',
};

/** Every endpoint, with the path its builder must produce for `sample` (spelled out, as callers had it). */
const expected: [string, AnyInternalEndpoint, string][] = [
  ['orchestrator.createRequest', orchestratorApi.createRequest, '/internal/v1/requests'],
  ['orchestrator.readRequest', orchestratorApi.readRequest, `/internal/v1/requests/${ID}`],
  ['orchestrator.listRequests', orchestratorApi.listRequests, '/internal/v1/requests'],
  ['orchestrator.requestEvents', orchestratorApi.requestEvents, `/internal/v1/requests/${ID}/events`],
  ['orchestrator.requestResult', orchestratorApi.requestResult, `/internal/v1/requests/${ID}/result`],
  ['orchestrator.cancelRequest', orchestratorApi.cancelRequest, `/internal/v1/requests/${ID}/cancel`],
  ['orchestrator.retryRequest', orchestratorApi.retryRequest, `/internal/v1/requests/${ID}/retry`],
  ['orchestrator.activeRequests', orchestratorApi.activeRequests, `/internal/v1/tenants/${TENANT}/active-requests`],
  ['orchestrator.createBatch', orchestratorApi.createBatch, '/internal/v1/batches'],
  ['orchestrator.readBatch', orchestratorApi.readBatch, `/internal/v1/batches/${ID}`],
  ['orchestrator.startRenderJob', orchestratorApi.startRenderJob, RENDER_PATHS.start(ID)],
  [
    'orchestrator.renderJobHandBack',
    orchestratorApi.renderJobHandBack,
    `/internal/v1/render-jobs/${ID}/hand-back/5f2b8c1e-3a4d-4e6f-8a9b-0c1d2e3f4a5b`,
  ],
  ['orchestrator.renderJobResult', orchestratorApi.renderJobResult, RENDER_PATHS.result(ID)],
  ['orchestrator.renderJobCaptcha', orchestratorApi.renderJobCaptcha, RENDER_PATHS.captcha(ID)],
  ['orchestrator.renderJobCaptchaSolved', orchestratorApi.renderJobCaptchaSolved, RENDER_PATHS.captchaSolved(ID)],
  ['orchestrator.registerLifecycleListeners', orchestratorApi.registerLifecycleListeners, '/internal/v1/lifecycle-listeners'],
  ['orchestrator.releaseLifecycleListener', orchestratorApi.releaseLifecycleListener, '/internal/v1/lifecycle-listeners/release'],
  ['ledger.reserve', ledgerApi.reserve, '/internal/v1/reservations'],
  ['ledger.reserveBatch', ledgerApi.reserveBatch, '/internal/v1/reservations/batch'],
  ['ledger.grantLease', ledgerApi.grantLease, '/internal/v1/leases'],
  ['ledger.releaseLease', ledgerApi.releaseLease, `/internal/v1/leases/${ID}/release`],
  ['ledger.readReservation', ledgerApi.readReservation, `/internal/v1/reservations/${ID}`],
  ['ledger.authorizeStep', ledgerApi.authorizeStep, `/internal/v1/reservations/${ID}/steps`],
  ['ledger.grant', ledgerApi.grant, `/internal/v1/accounts/${TENANT}/grants`],
  ['ledger.balance', ledgerApi.balance, `/internal/v1/accounts/${TENANT}/balance`],
  ['ledger.statement', ledgerApi.statement, `/internal/v1/accounts/${TENANT}/statement`],
  ['ledger.usage', ledgerApi.usage, `/internal/v1/accounts/${TENANT}/usage`],
  ['ledger.plan', ledgerApi.plan, `/internal/v1/accounts/${TENANT}/plan`],
  ['ledger.holdLlmCharge', ledgerApi.holdLlmCharge, '/internal/v1/llm-charges'],
  ['ledger.settleLlmCharge', ledgerApi.settleLlmCharge, '/internal/v1/llm-charges/generation%3Aop-1/settle'],
  ['renderer.debugArtifact', rendererApi.debugArtifact, RENDER_PATHS.debugArtifact(ID, 'screenshot.png')],
];

describe('internal endpoints', () => {
  it('lists every endpoint of the three APIs once', () => {
    const all = [...Object.values(orchestratorApi), ...Object.values(ledgerApi), ...Object.values(rendererApi)];
    const listed = expected.map(([, ep]) => ep);
    expect(listed).toHaveLength(all.length);
    for (const ep of all) expect(listed).toContain(ep);
    const keys = all.map((ep) => `${ep.method} ${ep.route}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(expected)('%s: the path builder gives the spelled-out path, and the route pattern matches it', (_, ep, path) => {
    expect(ep.route.startsWith('/internal/v1/')).toBe(true);
    const names = [...ep.route.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
    // A schema for each path parameter, and no other.
    expect(Object.keys(ep.params).sort()).toEqual([...names].sort());
    const values = Object.fromEntries(names.map((n) => [n, sample[n]!]));
    const built = ep.path(values as never);
    expect(built).toBe(path);
    expect(matches(ep.route, built)).toEqual(values);
    // The sample values are valid for the callee's parameter schemas.
    for (const n of names)
      expect((ep.params as Record<string, { safeParse(v: unknown): { success: boolean } }>)[n]!.safeParse(sample[n]).success).toBe(true);
  });

  it('encodes path values, and refuses a missing one', () => {
    expect(orchestratorApi.readRequest.path({ id: 'a/b' })).toBe('/internal/v1/requests/a%2Fb');
    expect(() => orchestratorApi.readRequest.path({} as never)).toThrow(/id is missing/);
  });
});

describe('orchestrator schemas', () => {
  const create = {
    request_id: ID,
    tenant_id: TENANT,
    url: 'https://example.com/a',
    route_mode: 'auto',
    proxy_type: null,
    max_credits: null,
    options: {},
    input_hash: HASH,
  };

  it('takes a well-formed create and refuses what the orchestrator must refuse', () => {
    expect(orchestratorApi.createRequest.body.safeParse(create).success).toBe(true);
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, url: 'ftp://example.com/' }).success).toBe(false);
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, route_mode: 'mixed' }).success).toBe(false);
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, max_credits: 0 }).success).toBe(false);
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, input_hash: 'abc' }).success).toBe(false);
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, url: `https://example.com/${'a'.repeat(4096)}` }).success).toBe(false);
  });

  it('refuses an empty or oversized batch', () => {
    const job = { url: 'https://example.com/', route_mode: 'http', proxy_type: 'datacenter', max_credits: 5, options: {} };
    const batch = { batch_id: ID, tenant_id: TENANT, input_hash: HASH, jobs: [job] };
    expect(orchestratorApi.createBatch.body.safeParse(batch).success).toBe(true);
    expect(orchestratorApi.createBatch.body.safeParse({ ...batch, jobs: [] }).success).toBe(false);
    expect(orchestratorApi.createBatch.body.safeParse({ ...batch, jobs: Array.from({ length: 1001 }, () => job) }).success).toBe(false);
  });

  it('coerces query strings and applies their defaults', () => {
    expect(orchestratorApi.listRequests.query.parse({ tenant_id: TENANT })).toEqual({ tenant_id: TENANT, limit: 50 });
    expect(orchestratorApi.listRequests.query.parse({ tenant_id: TENANT, limit: '7', status: 'solving_captcha' }).limit).toBe(7);
    expect(orchestratorApi.listRequests.query.safeParse({ tenant_id: TENANT, limit: '101' }).success).toBe(false);
    // The list filter is DataJobStatus: the waiting statuses of a detail are not filters.
    expect(orchestratorApi.listRequests.query.safeParse({ tenant_id: TENANT, status: 'queued' }).success).toBe(false);
    expect(orchestratorApi.requestEvents.query.parse({ tenant_id: TENANT })).toEqual({ tenant_id: TENANT, after: 0 });
    expect(orchestratorApi.requestEvents.query.safeParse({ tenant_id: TENANT, after: '-1' }).success).toBe(false);
    expect(orchestratorApi.requestResult.query.safeParse({ tenant_id: TENANT, format: 'pdf' }).success).toBe(false);
    expect(orchestratorApi.activeRequests.query.shape.limit.parse(undefined)).toBe(1000);
    expect(orchestratorApi.activeRequests.query.shape.limit.safeParse('10000002').success).toBe(false);
    const create = {
      request_id: ID,
      tenant_id: TENANT,
      url: 'https://example.com/',
      route_mode: 'http',
      proxy_type: null,
      max_credits: null,
      options: {},
      input_hash: 'a'.repeat(64),
    };
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, concurrency: { limit: 3, others_in_flight: 0 } }).success).toBe(true);
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, concurrency: { limit: 0, others_in_flight: 0 } }).success).toBe(false);
    expect(orchestratorApi.createRequest.body.safeParse({ ...create, concurrency: { limit: 3, others_in_flight: -1 } }).success).toBe(
      false,
    );
    expect(orchestratorApi.readRequest.query.shape.tenant_id.safeParse('not-a-uuid').success).toBe(false);
  });
});

describe('render schemas', () => {
  const upload = { upload_id: ID, body_bytes: 10, text_bytes: 2, sha256: 'a'.repeat(64) };
  const completed = { outcome: 'completed', status_code: 200, content_type: 'text/html', upload };
  const meta = {
    stage: 'browser',
    elapsed_ms: 1,
    javascript: true,
    resource_policy: { requested: 'adaptive', applied: 'full', blocked_requests: {} },
    requests: {},
    challenge: false,
    console_errors: 0,
    country: null,
  };

  it('carries measured traffic and a seen CAPTCHA, and refuses negative bytes or an unknown widget', () => {
    const traffic = { measured: true, request_bytes: 10, response_bytes: 20 };
    expect(orchestratorApi.renderJobResult.body.safeParse({ ...completed, meta, traffic }).success).toBe(true);
    expect(
      orchestratorApi.renderJobResult.body.safeParse({ ...completed, meta: { ...meta, captcha: { kind: 'hcaptcha', solves: 1 } } }).success,
    ).toBe(true);
    expect(orchestratorApi.renderJobResult.body.safeParse({ ...completed, meta, traffic: { ...traffic, request_bytes: -1 } }).success).toBe(
      false,
    );
    expect(
      orchestratorApi.renderJobResult.body.safeParse({ ...completed, meta: { ...meta, captcha: { kind: 'funcaptcha', solves: 0 } } })
        .success,
    ).toBe(false);
    const failed = {
      outcome: 'failed',
      code: 'CAPTCHA_NOT_SOLVED',
      message: 'no',
      caused_by: 'target',
      traffic: { measured: false, request_bytes: 0, response_bytes: 0 },
    };
    expect(orchestratorApi.renderJobResult.body.safeParse(failed).success).toBe(true);
  });

  it('names the upload of a completed page, never the page itself', () => {
    expect(orchestratorApi.renderJobResult.body.safeParse({ ...completed, meta }).success).toBe(true);
    // The page as base64 in JSON is gone: a result carrying it (and no upload) is refused.
    const { upload: _, ...withoutUpload } = completed;
    expect(orchestratorApi.renderJobResult.body.safeParse({ ...withoutUpload, body_base64: '', text: '', meta }).success).toBe(false);
    expect(
      orchestratorApi.renderJobResult.body.safeParse({ ...completed, upload: { ...upload, sha256: 'A'.repeat(64) }, meta }).success,
    ).toBe(false);
    expect(orchestratorApi.renderJobResult.body.safeParse({ ...completed, upload: { ...upload, body_bytes: -1 }, meta }).success).toBe(
      false,
    );
    const ep = renderUploadApi.renderJobUpload;
    expect([ep.method, ep.bodyKind, ep.answerKind, ep.callers]).toEqual(['POST', 'bytes', 'json', ['browser-renderer']]);
    expect(ep.path({ id: ID, upload: ID })).toBe(`/internal/v1/render-jobs/${ID}/uploads/${ID}`);
    // Served by fetch-orchestrator: its gate admits the route (and only from browser-renderer).
    expect(internalEndpointsOf('fetch-orchestrator')).toContain(ep);
    expect(orchestratorApi.renderJobResult.bodyKind).toBe('json');
    // The one-call form takes bytes as well, from the renderer only.
    const one = orchestratorApi.renderJobHandBack;
    expect([one.method, one.bodyKind, one.answerKind, one.callers]).toEqual(['POST', 'bytes', 'json', ['browser-renderer']]);
  });

  it('asks for a CAPTCHA solve with the solves so far', () => {
    expect(orchestratorApi.renderJobCaptcha.body.safeParse({ captcha_kind: 'turnstile', solves_so_far: 0 }).success).toBe(true);
    expect(orchestratorApi.renderJobCaptcha.body.safeParse({ captcha_kind: 'turnstile', solves_so_far: -1 }).success).toBe(false);
    expect(orchestratorApi.renderJobCaptchaSolved.body.safeParse({ captcha_kind: 'recaptcha_v2', solves: 0 }).success).toBe(false);
  });
});

describe('ledger schemas', () => {
  it('refuses a reservation without a tenant, a step without an id, and a negative grant', () => {
    const item = { request_id: ID, route_mode: 'browser', proxy_type: 'residential', max_credits: null };
    expect(ledgerApi.reserve.body.safeParse({ ...item, tenant_id: TENANT }).success).toBe(true);
    expect(ledgerApi.reserve.body.safeParse(item).success).toBe(false);
    expect(ledgerApi.reserve.body.safeParse({ ...item, tenant_id: TENANT, proxy_type: 'mobile' }).success).toBe(false);
    expect(ledgerApi.reserveBatch.body.safeParse({ tenant_id: TENANT, items: [] }).success).toBe(false);
    expect(ledgerApi.authorizeStep.body.parse({ step_id: 's' })).toEqual({ step_id: 's', captcha_solves: 0, traffic_bytes: 0 });
    expect(ledgerApi.authorizeStep.body.safeParse({ step_id: '' }).success).toBe(false);
    expect(ledgerApi.grant.body.safeParse({ amount: -5, reference: 'r' }).success).toBe(false);
    expect(ledgerApi.grant.body.safeParse({ amount: 5, reference: 'r'.repeat(201) }).success).toBe(false);
    expect(ledgerApi.statement.query.parse({ limit: '20' })).toEqual({ limit: 20 });
    expect(ledgerApi.statement.query.safeParse({ limit: '0' }).success).toBe(false);
  });

  it('refuses a lease grant without a lease id, with n below 1, or with an empty block', () => {
    const grant = { tenant_id: TENANT, lease_id: ID, n: 1, block_tokens: 100, route_mode: 'http', proxy_type: null };
    expect(ledgerApi.grantLease.body.safeParse(grant).success).toBe(true);
    expect(ledgerApi.grantLease.body.safeParse({ ...grant, lease_id: 'x' }).success).toBe(false);
    expect(ledgerApi.grantLease.body.safeParse({ ...grant, n: 0 }).success).toBe(false);
    expect(ledgerApi.grantLease.body.safeParse({ ...grant, block_tokens: 0 }).success).toBe(false);
    expect(ledgerApi.grantLease.body.safeParse({ ...grant, proxy_type: 'mobile' }).success).toBe(false);
    expect(ledgerApi.grantLease.callers).toEqual(['fetch-orchestrator']);
  });
});

describe('renderer schemas', () => {
  it('refuses an artifact name that could leave its directory', () => {
    expect(rendererApi.debugArtifact.params.name.safeParse('screenshot.png').success).toBe(true);
    expect(rendererApi.debugArtifact.params.name.safeParse('../secrets').success).toBe(false);
    expect(rendererApi.debugArtifact.query.safeParse({}).success).toBe(false);
  });
});

describe('who may call what', () => {
  it('every endpoint of every callee names only services of the fleet, and the table lists every internal API', () => {
    expect(Object.keys(INTERNAL_APIS).sort()).toEqual([
      'billing-ledger',
      'browser-renderer',
      'fetch-orchestrator',
      'recipe-extractor',
      'webhook-dispatcher',
    ]);
    expect(INTERNAL_APIS['billing-ledger']).toBe(ledgerApi);
    // The orchestrator's table and the render upload, spelled in its own module (render-upload.ts).
    expect(INTERNAL_APIS['fetch-orchestrator']).toEqual({ ...orchestratorApi, ...renderUploadApi });
    expect(INTERNAL_APIS['browser-renderer']).toBe(rendererApi);
    expect(internalEndpointsOf('gateway')).toEqual([]);
    for (const callee of Object.keys(INTERNAL_APIS) as (keyof typeof INTERNAL_APIS)[])
      for (const ep of internalEndpointsOf(callee)) {
        for (const c of ep.callers) expect(FLEET_SERVICES).toContain(c);
        // A service never calls its own internal API over HTTP.
        expect(ep.callers).not.toContain(callee);
        expect(Object.isFrozen(ep.callers)).toBe(true);
      }
  });

  it('keeps money and render results with the services that own them', () => {
    // Top-ups and corrections mint credits: no route at all (the ledger's admin CLI runs them).
    expect(Object.keys(ledgerApi).some((k) => /top.?up|correction/i.test(k))).toBe(false);
    expect(ledgerApi.grant.callers).toEqual(['gateway']);
    for (const ep of [
      orchestratorApi.startRenderJob,
      orchestratorApi.renderJobResult,
      orchestratorApi.renderJobCaptcha,
      orchestratorApi.renderJobCaptchaSolved,
      renderUploadApi.renderJobUpload,
    ])
      expect(ep.callers).toEqual(['browser-renderer']);
    for (const ep of Object.values(ledgerApi)) expect(ep.callers).not.toContain('browser-renderer');
  });
});
