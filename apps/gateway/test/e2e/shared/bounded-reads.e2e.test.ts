import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, get as httpGet, type ClientRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, eventually, sharedFleet, withDatabase, type Fleet } from '@wdr/testkit';

/**
 * Bounded reads (issue 21, item 2), through the public API on the real fleet: a stored result
 * streams from the orchestrator through the gateway as bytes (never whole in the gateway's memory),
 * its text is derived once and served stored, and a tenant's reads are limited in rate and in
 * reads at once, answered 429 with RateLimit headers like submissions.
 */
let fleet: Fleet;
let target: Server;
let targetUrl: string;
/** The large page the target serves, and its type. */
const PAGE_TYPE = 'application/pdf';
/** Reads of it at once (the default READ_CONCURRENCY_LIMIT: all admitted). */
const READS = 16;
let page: Buffer;
let pageSha: string;

const gw = () => request(fleet.url('gateway'));
const orchestratorSql = <T>(sql: string, params: unknown[]) =>
  withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) => (await c.query(sql, params)).rows as T[]);

/** Resident set of the gateway process now, in bytes (from /proc, as the kernel counts it). */
function gatewayRss(): number {
  const pid = fleet.pid('gateway');
  if (pid === undefined) throw new Error('no gateway pid');
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

async function tenant(name: string): Promise<{ key: string; id: string }> {
  const t = await adminCommand(fleet, ['create-tenant', '--name', `${name}-${Date.now()}`, '--credits', '100']);
  return { key: t['api_key'] as string, id: t['tenant_id'] as string };
}

async function completed(key: string, path: string): Promise<string> {
  const sub = await gw()
    .post('/api/v1/data/requests')
    .set('X-API-Key', key)
    .send({ url: `${targetUrl}${path}`, mode: 'http', skip_cache: true });
  expect(sub.status).toBe(202);
  const id = sub.body.id as string;
  const done = await eventually(
    async () => (await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', key)).body as { status: string },
    (d) => ['completed', 'failed', 'cancelled'].includes(d.status),
    60_000,
    200,
  );
  expect(done.status).toBe('completed');
  return id;
}

interface Read {
  status: number;
  headers: IncomingHttpHeaders;
  req: ClientRequest;
  /** Reads the rest of the body, hashing it as it arrives (never held whole here either). */
  finish: () => Promise<{ bytes: number; sha: string }>;
}

/** GET with a raw client that reads nothing until told: a reader that stops reading. */
function open(path: string, key: string): Promise<Read> {
  const u = new URL(fleet.url('gateway'));
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: u.hostname, port: u.port, path, headers: { 'X-API-Key': key } }, (res) => {
      res.pause();
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        req,
        finish: () =>
          new Promise((done, fail) => {
            const hash = createHash('sha256');
            let bytes = 0;
            res.on('data', (c: Buffer) => {
              bytes += c.length;
              hash.update(c);
            });
            res.on('end', () => done({ bytes, sha: hash.digest('hex') }));
            res.on('error', fail);
            res.resume();
          }),
      });
    });
    req.on('error', reject);
  });
}

let reader: { key: string; id: string };
let largeId: string;

beforeAll(async () => {
  fleet = sharedFleet();
  // Just under the stored-result cap (MAX_RESULT_BYTES, 10 MiB by default), of bytes that are not text.
  const cap = Number(fleet.envOf('fetch-orchestrator')['MAX_RESULT_BYTES'] ?? 10 * 1024 * 1024);
  page = randomBytes(Math.min(cap, 10 * 1024 * 1024) - 4096);
  pageSha = createHash('sha256').update(page).digest('hex');
  target = createServer((req, res) => {
    if (req.url?.startsWith('/large')) {
      res.writeHead(200, { 'content-type': PAGE_TYPE, 'content-length': String(page.length) }).end(page);
      return;
    }
    const html = `<html><head><title>T</title><style>p{}</style></head><body><h1>Bounded ${req.url}</h1><p>one  two</p></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
  reader = await tenant('bounded-reads');
  largeId = await completed(reader.key, '/large');
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => target.close(() => resolve()));
});

describe('results stream as stored bytes', () => {
  it('delivers a 10 MB result intact, with its content type and length, without the gateway holding it', async () => {
    const path = `/api/v1/data/requests/${largeId}/result`;
    // One read first: whatever the route costs once (code paths, pools) is not counted below.
    const warm = await open(path, reader.key);
    expect(warm.status).toBe(200);
    expect((await warm.finish()).sha).toBe(pageSha);

    const before = gatewayRss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, gatewayRss())), 10);
    let heads: Read[] = [];
    let reads: { bytes: number; sha: string }[];
    try {
      heads = await Promise.all(Array.from({ length: READS }, () => open(path, reader.key)));
      reads = await Promise.all(heads.map((r) => r.finish()));
    } finally {
      clearInterval(sampler);
    }
    for (const h of heads) {
      expect(h.status).toBe(200);
      expect(h.headers['content-type']).toBe(PAGE_TYPE);
      expect(h.headers['content-length']).toBe(String(page.length));
      expect(h.headers['content-security-policy']).toContain('sandbox');
    }
    for (const r of reads) expect(r).toEqual({ bytes: page.length, sha: pageSha });
    const mb = (n: number) => Math.round(n / 1048576);
    console.log(
      `gateway RSS ${mb(before)} MB before, peak +${mb(peak - before)} MB during ${READS} parallel reads of a ${(page.length / 1048576).toFixed(1)} MB result`,
    );
    // Streamed, the gateway holds what is in flight; the chunks that passed through are garbage
    // until the next collection, which V8 runs long before they add up to the pages (measured: about
    // +60 MB whether 4, 8 or 16 reads, for 40 to 160 MB carried). As base64 in JSON, each read held
    // the JSON text, the parsed string and the decoded page at once before its first byte went out
    // (measured +285 MB for eight; about 35 MB per read).
    expect(peak - before).toBeLessThan(96 * 1024 * 1024);
  }, 60_000);

  it('derives format=text once, stores it, and serves the stored text afterwards', async () => {
    const id = await completed(reader.key, '/text-once');
    const stored = async () =>
      (await orchestratorSql<{ text: string | null }>('SELECT text FROM request_results WHERE request_id = $1', [id]))[0];
    const derivations = async () => {
      const text = (await request(fleet.metricsUrl('fetch-orchestrator')).get('/metrics').expect(200)).text;
      const m = /^fetch_orchestrator_result_texts_derived_total(?:\{[^}]*\})? (\d+)/m.exec(text);
      return m ? Number(m[1]) : 0;
    };
    // An HTTP result has no text until it is asked for; the page as fetched needs none.
    expect((await stored())?.text).toBeNull();
    const html = await gw().get(`/api/v1/data/requests/${id}/result`).set('X-API-Key', reader.key).expect(200);
    expect(html.text).toContain('<h1>Bounded /text-once</h1>');
    expect((await stored())?.text).toBeNull();

    const before = await derivations();
    const first = await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', reader.key).expect(200);
    expect([first.headers['content-type'], first.text]).toEqual(['text/plain; charset=utf-8', 'Bounded /text-once\none two']);
    expect((await stored())?.text).toBe('Bounded /text-once\none two');
    for (let i = 0; i < 3; i++) {
      const again = await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', reader.key).expect(200);
      expect(again.text).toBe('Bounded /text-once\none two');
    }
    // The shared fleet's other files may derive texts meanwhile: this file's four reads derived one.
    expect((await derivations()) - before).toBeGreaterThanOrEqual(1);
    // What the tenant gets is the stored row, not a new parse: a row changed behind it shows.
    await orchestratorSql('UPDATE request_results SET text = $2 WHERE request_id = $1', [id, 'served from storage']);
    const served = await gw().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', reader.key).expect(200);
    expect(served.text).toBe('served from storage');
  }, 90_000);
});

describe('read limits per tenant', () => {
  it('answers reads past the read rate 429 RATE_LIMITED with RateLimit headers, event streams included; other tenants unaffected', async () => {
    const t = await tenant('read-rate');
    const id = await completed(t.key, '/rate');
    await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--read-rate', '4']);
    const detail = () => gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', t.key);
    // The change reaches the gateway's credential cache a moment after the commit.
    const first = await eventually(detail, (r) => String(r.headers['ratelimit-policy']).includes('4;w=60;name="reads"'), 5_000, 50);
    // Whatever the wait used, the budget is spent within a few more reads.
    const statuses = [first.status];
    let refused: request.Response | undefined;
    for (let i = 0; i < 10 && !refused; i++) {
      const r = await detail();
      statuses.push(r.status);
      if (r.status === 429) refused = r;
    }
    expect(statuses[0]).toBe(200);
    expect(refused).toBeDefined();
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(4);
    expect(refused!.body.code).toBe('RATE_LIMITED');
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused!.headers['ratelimit-limit']).toBe('4');
    expect(refused!.headers['ratelimit-remaining']).toBe('0');
    expect(Number(refused!.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    expect(refused!.headers['ratelimit-policy']).toBe('4;w=60;name="reads"');
    // Results, lists and the event stream draw on the same budget.
    expect((await gw().get(`/api/v1/data/requests/${id}/result`).set('X-API-Key', t.key)).status).toBe(429);
    expect((await gw().get('/api/v1/data/requests').set('X-API-Key', t.key)).status).toBe(429);
    const stream = await open(`/api/v1/data/requests/${id}/events/stream`, t.key);
    stream.req.destroy();
    expect(stream.status).toBe(429);
    // Submissions keep their own budget.
    const sub = await gw()
      .post('/api/v1/data/requests')
      .set('X-API-Key', t.key)
      .send({ url: `${targetUrl}/after`, mode: 'http' });
    expect(sub.status).toBe(202);
    expect(sub.headers['ratelimit-policy']).not.toContain('reads');
    // Another tenant reads as before, with the default policy.
    const other = await gw().get(`/api/v1/data/requests/${largeId}`).set('X-API-Key', reader.key).expect(200);
    expect(other.headers['ratelimit-policy']).toContain(`${fleet.envOf('gateway')['READ_RATE_LIMIT'] ?? 6000};w=60;name="reads"`);
  }, 90_000);

  it('answers a read past the reads in progress 429 CONCURRENCY_LIMITED, and takes one again once a read ends', async () => {
    const t = await tenant('read-concurrency');
    const id = await completed(t.key, '/large-concurrency');
    await adminCommand(fleet, ['set-limits', '--tenant', t.id, '--read-concurrency', '2']);
    await eventually(
      () => gw().get('/api/v1/data/balance').set('X-API-Key', t.key),
      (r) => String(r.headers['ratelimit-policy']).includes('2;w=0;name="concurrent-reads"'),
      5_000,
      50,
    );
    const path = `/api/v1/data/requests/${id}/result`;
    // Two readers that stop reading a 10 MB result: each answer stays in progress.
    const held = [await open(path, t.key), await open(path, t.key)];
    try {
      // Each held read took a place: the second saw the first still held (no place remaining).
      expect(held.map((h) => [h.status, h.headers['ratelimit-remaining']])).toEqual([
        [200, '1'],
        [200, '0'],
      ]);
      const over = await gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', t.key);
      // All of it at once: a flake here (a clean-clone run once answered 200) says which part moved.
      expect([over.status, over.headers['ratelimit-policy'], over.headers['ratelimit-remaining']]).toEqual([
        429,
        expect.stringContaining('2;w=0;name="concurrent-reads"'),
        '0',
      ]);
      expect(over.body.code).toBe('CONCURRENCY_LIMITED');
      expect(over.headers['retry-after']).toBe('1');
      expect(over.headers['ratelimit-limit']).toBe('2');
      expect(over.headers['ratelimit-remaining']).toBe('0');
      expect(over.headers['ratelimit-policy']).toContain('2;w=0;name="concurrent-reads"');
      // Another tenant is not affected.
      await gw().get(`/api/v1/data/requests/${largeId}`).set('X-API-Key', reader.key).expect(200);
      // One reader finishes: its place is free again, and the bytes it got are the page.
      expect(await held[0]!.finish()).toEqual({ bytes: page.length, sha: pageSha });
      const again = await eventually(
        () => gw().get(`/api/v1/data/requests/${id}`).set('X-API-Key', t.key),
        (r) => r.status === 200,
        5_000,
        50,
      );
      expect(again.status).toBe(200);
      // One that goes away without reading frees its place too.
      held[1]!.req.destroy();
      const third = await open(path, t.key);
      held.push(third);
      expect(third.status).toBe(200);
      const fourth = await eventually(
        () => open(path, t.key),
        (r) => {
          if (r.status !== 200) r.req.destroy();
          return r.status === 200;
        },
        5_000,
        50,
      );
      held.push(fourth);
    } finally {
      for (const h of held) h.req.destroy();
    }
  }, 90_000);
});
