import { describe, expect, it } from '@jest/globals';
import { ledgerApi, orchestratorApi } from '@wdr/contracts';
import type { CallOptions, ServiceClient } from './http-client.js';
import { callInternal } from './internal-call.js';

const ID = '0b4f5a4e-8d1c-4c3e-9f65-1a2b3c4d5e6f';
const TENANT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

/** A client that records what it was asked and answers `answer`. */
function recording(answer: unknown) {
  const calls: { method: string; path: string; body?: unknown; opts: CallOptions | undefined }[] = [];
  const client: Pick<ServiceClient, 'get' | 'post'> = {
    get: async <T>(path: string, opts?: CallOptions) => (calls.push({ method: 'GET', path, opts }), answer as T),
    post: async <T>(path: string, body: unknown, opts?: CallOptions) => (calls.push({ method: 'POST', path, body, opts }), answer as T),
  };
  return { client, calls };
}

describe('callInternal', () => {
  it('GETs the built path with the query as search params, leaving absent values out', async () => {
    const { client, calls } = recording({ data: [], meta: {} });
    await callInternal(client, orchestratorApi.listRequests, { query: { tenant_id: TENANT, limit: 20, cursor: undefined } });
    expect(calls).toEqual([{ method: 'GET', path: '/internal/v1/requests', opts: { searchParams: { tenant_id: TENANT, limit: 20 } } }]);
  });

  it('POSTs the body to the built path, with the timeout, and answers what the client answered', async () => {
    const { client, calls } = recording({ allowed: true });
    const step = await callInternal(client, ledgerApi.authorizeStep, {
      params: { requestId: ID },
      body: { step_id: 'escalate:browser', stage: 'browser' },
      timeoutMs: 1234,
    });
    expect(step.allowed).toBe(true);
    expect(calls).toEqual([
      {
        method: 'POST',
        path: `/internal/v1/reservations/${ID}/steps`,
        body: { step_id: 'escalate:browser', stage: 'browser' },
        opts: { timeoutMs: 1234 },
      },
    ]);
  });

  it('sends no search params and an empty POST body when the endpoint has none', async () => {
    const { client, calls } = recording({ state: 'skip', status: 'completed' });
    await callInternal(client, ledgerApi.balance, { params: { tenantId: TENANT } });
    await callInternal(client, orchestratorApi.startRenderJob, { params: { id: ID } });
    expect(calls).toEqual([
      { method: 'GET', path: `/internal/v1/accounts/${TENANT}/balance`, opts: {} },
      { method: 'POST', path: `/internal/v1/render-jobs/${ID}/start`, body: {}, opts: {} },
    ]);
  });
});
