import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { ledgerApi, orchestratorApi, renderUploadApi } from '@wdr/contracts';
import express from 'express';
import { PublicError } from './errors.js';
import { createServiceClient, type CallOptions, type ServiceClient } from './http-client.js';
import { callInternal, readStreamed, sendBytesInternal, streamInternal } from './internal-call.js';

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

describe('streamInternal (a bytes answer)', () => {
  /** An orchestrator stand-in: the result route answers `page` as bytes, or a PublicError. */
  async function serving(page: Buffer, contentType: string) {
    const app = express();
    let queries: unknown[] = [];
    app.get(orchestratorApi.requestResult.route, (req, res) => {
      queries.push(req.query);
      if (req.params['id'] !== ID) return void res.status(404).json({ code: 'NOT_FOUND', message: 'No such request.' });
      res.setHeader('Content-Type', contentType);
      res.setHeader('Content-Length', String(page.length));
      // In pieces, as a large body arrives.
      let at = 0;
      const more = () => {
        if (at >= page.length) return void res.end();
        const piece = page.subarray(at, (at += 256 * 1024));
        if (res.write(piece)) setImmediate(more);
        else res.once('drain', more);
      };
      more();
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const client = createServiceClient({
      name: 'fetch-orchestrator',
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    return {
      client,
      queries: () => queries,
      close: async () => {
        client.breaker.shutdown();
        queries = [];
        await new Promise((r) => server.close(r));
      },
    };
  }

  it('answers the bytes as a stream with their content type and length, before reading them', async () => {
    const page = Buffer.alloc(3 * 1024 * 1024 + 7);
    for (let i = 0; i < page.length; i++) page[i] = (i * 31) % 251;
    const s = await serving(page, 'application/pdf');
    try {
      const answer = await streamInternal(s.client, orchestratorApi.requestResult, {
        params: { id: ID },
        query: { tenant_id: TENANT, format: 'html' },
      });
      expect([answer.contentType, answer.contentLength]).toEqual(['application/pdf', page.length]);
      const read = await readStreamed(answer);
      expect(read.body.equals(page)).toBe(true);
      expect(s.queries()).toEqual([{ tenant_id: TENANT, format: 'html' }]);
    } finally {
      await s.close();
    }
  });

  it('fails the body when no byte moves for idleTimeoutMs (a reader that stopped reading)', async () => {
    const s = await serving(Buffer.alloc(32 * 1024 * 1024, 1), 'application/octet-stream');
    try {
      const answer = await streamInternal(s.client, orchestratorApi.requestResult, {
        params: { id: ID },
        query: { tenant_id: TENANT, format: 'html' },
        idleTimeoutMs: 300,
      });
      // Nothing reads it: the connection fills, stops, and is cut after the idle bound.
      const failed = await new Promise<Error>((resolve) => answer.body.once('error', resolve));
      expect(failed.message).toMatch(/timeout|timed out/i);
    } finally {
      await s.close();
    }
  }, 20_000);

  it("throws the callee's PublicError, and refuses the wrong kind of endpoint either way", async () => {
    const s = await serving(Buffer.from('x'), 'text/plain');
    try {
      const missing = await streamInternal(s.client, orchestratorApi.requestResult, {
        params: { id: TENANT },
        query: { tenant_id: TENANT, format: 'text' },
      }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(PublicError);
      expect((missing as PublicError).code).toBe('NOT_FOUND');
      // A JSON endpoint is never streamed, a bytes endpoint never parsed as JSON.
      expect(() =>
        streamInternal(s.client, orchestratorApi.readRequest as never, { params: { id: ID }, query: { tenant_id: TENANT } } as never),
      ).toThrow(/answers JSON/);
      expect(() =>
        callInternal(
          s.client,
          orchestratorApi.requestResult as never,
          { params: { id: ID }, query: { tenant_id: TENANT, format: 'html' } } as never,
        ),
      ).toThrow(/answers bytes/);
    } finally {
      await s.close();
    }
  });
});

describe('JSON calls over the client (node:http)', () => {
  /** A callee: echoes what it got, answers a PublicError, a 500, or never answers (`/hang`). */
  async function callee() {
    const app = express();
    app.use(express.json());
    const hanging: express.Response[] = [];
    app.post('/echo', (req, res) => {
      res.json({
        body: req.body,
        query: req.query,
        headers: { 'content-type': req.header('content-type'), 'x-extra': req.header('x-extra') },
      });
    });
    app.get('/echo', (req, res) => void res.json({ query: req.query, method: req.method }));
    // Reads a bytes body as the render upload route does: as a stream, never parsed.
    app.post('/bytes', async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const got = Buffer.concat(chunks);
      res.json({
        bodyHex: got.toString('hex'),
        parsed: req.body !== undefined,
        headers: {
          'content-type': req.header('content-type'),
          'content-length': req.header('content-length'),
          'x-digest': req.header('x-digest'),
        },
      });
    });
    app.get('/empty', (_req, res) => void res.status(204).end());
    app.get(
      '/refused',
      (_req, res) =>
        void res
          .status(429)
          .setHeader('retry-after', '7')
          .json({ code: 'RATE_LIMITED', message: 'Slow down.', details: [{ field: 'x', issue: 'y' }] }),
    );
    app.get('/broken', (_req, res) => void res.status(500).json({ code: 'INTERNAL', message: 'boom' }));
    app.get('/hang', (_req, res) => void hanging.push(res));
    app.get('/cut', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const client = createServiceClient({ name: 'callee', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
    return {
      client,
      close: async () => {
        client.breaker.shutdown();
        for (const r of hanging) r.socket?.destroy();
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      },
    };
  }

  it('sends the body as JSON with the query and headers, and answers the parsed JSON (or undefined when empty)', async () => {
    const c = await callee();
    try {
      const echoed = await c.client.post<{ body: unknown; query: unknown; headers: Record<string, string> }>(
        '/echo',
        { a: 1, b: ['é', null] },
        { searchParams: { s: 'x y', n: 2, t: true }, headers: { 'x-extra': 'yes' } },
      );
      expect(echoed).toEqual({
        body: { a: 1, b: ['é', null] },
        query: { s: 'x y', n: '2', t: 'true' },
        headers: { 'content-type': 'application/json', 'x-extra': 'yes' },
      });
      expect(await c.client.get('/echo')).toEqual({ query: {}, method: 'GET' });
      expect(await c.client.get('/empty')).toBeUndefined();
    } finally {
      await c.close();
    }
  });

  it('sends bytes as they are, in order, with their total length and the given headers (sendBytesInternal), and answers JSON', async () => {
    const c = await callee();
    try {
      const parts = [Buffer.from([0, 1, 2, 255]), Buffer.alloc(0), Buffer.from('{"not":"json"', 'utf8')];
      const id = '0b4f5a4e-8d1c-4c3e-9f65-1a2b3c4d5e6f';
      // The route of the upload endpoint, answered by /bytes: its path is built from the contract.
      const endpoint = { ...renderUploadApi.renderJobUpload, path: () => '/bytes' };
      const answer = (await sendBytesInternal(c.client, endpoint, {
        params: { id, upload: id },
        body: parts,
        headers: { 'x-digest': 'd' },
      })) as unknown as {
        bodyHex: string;
        parsed: boolean;
        headers: Record<string, string>;
      };
      expect(answer.bodyHex).toBe(Buffer.concat(parts).toString('hex'));
      expect(answer.parsed).toBe(false);
      expect(answer.headers).toEqual({ 'content-type': 'application/octet-stream', 'content-length': '17', 'x-digest': 'd' });
      // Each kind of endpoint with its own helper.
      expect(() => callInternal(c.client, renderUploadApi.renderJobUpload as never, { params: { id, upload: id } } as never)).toThrow(
        /sendBytesInternal/,
      );
      expect(() => sendBytesInternal(c.client, orchestratorApi.renderJobResult, { params: { id }, body: [] })).toThrow(/callInternal/);
    } finally {
      await c.close();
    }
  });

  it("rethrows the callee's PublicError with its details and Retry-After; a 5xx, a cut answer and a timeout are DEPENDENCY_UNAVAILABLE", async () => {
    const c = await callee();
    try {
      const refused = await c.client.get('/refused').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PublicError);
      expect((refused as PublicError).code).toBe('RATE_LIMITED');
      expect((refused as PublicError).retryAfterSeconds).toBe(7);
      expect((refused as PublicError).details).toEqual([{ field: 'x', issue: 'y' }]);
      for (const path of ['/broken', '/cut']) {
        const err = await c.client.get(path).catch((e: unknown) => e);
        expect([path, (err as PublicError).code]).toEqual([path, 'DEPENDENCY_UNAVAILABLE']);
      }
      const t0 = Date.now();
      const slow = await c.client.get('/hang', { timeoutMs: 300 }).catch((e: unknown) => e);
      expect((slow as PublicError).code).toBe('DEPENDENCY_UNAVAILABLE');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
      expect(Date.now() - t0).toBeLessThan(3_000);
    } finally {
      await c.close();
    }
  });
});
