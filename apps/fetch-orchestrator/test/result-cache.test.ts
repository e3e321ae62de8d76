import { randomUUID } from 'node:crypto';
import { PgSql } from '@wdr/kit/pg-sql';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { pgAdapterFor } from '@wdr/kit/db';
import { Sealer } from '@wdr/kit/sealing';
import { PrismaClient, type Prisma } from '../src/generated/prisma/client.js';
import { appendEvent } from '../src/domain/requests/events.js';
import { endStatements } from '../src/domain/requests/writes.js';
import { requestRowOf } from './database.js';
import {
  CapChecks,
  cacheKeyOf,
  cacheKeySecretOf,
  cachePolicyOf,
  fillResultCache,
  normaliseTargetUrl,
  purgeResultCache,
  serveFromCache,
  type ResultCacheDeps,
} from '../src/domain/result-cache.js';

/**
 * The result cache's rules that the end-to-end suite (apps/gateway/test/e2e/result-cache) cannot
 * reach cheaply: the key, the bounds (entries per tenant at fill, total bytes and expiry at the
 * purge), what never makes an entry, and a source whose result is gone. Against the real Postgres.
 */
let database: TestDatabase;
let db: PrismaClient;
let sql: PgSql;
const key = Buffer.alloc(32, 7).toString('base64');
const sealer = Sealer.fromBase64(key);
const settings = { keySecret: cacheKeySecretOf(key), maxEntriesPerTenant: 3, maxTotalBytes: 1_000_000 };
const deps = (over: Partial<ResultCacheDeps> = {}): ResultCacheDeps => ({
  db,
  sql,
  sealer,
  resultRetentionHours: 1,
  resultCache: settings,
  ...over,
});

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

const OPTIONS = {
  timeout_ms: 45_000,
  javascript: true,
  resource_policy: 'adaptive',
  debug_artifacts: false,
  skip_cache: false,
  cache_ttl_seconds: 300,
};

async function stored(
  tenantId: string,
  url: string,
  opts: {
    status?: string;
    options?: Record<string, unknown>;
    result?: { statusCode?: number; bytes?: number; expiresAt?: Date } | null;
    extra?: Partial<Prisma.DataRequestUncheckedCreateInput>;
  } = {},
) {
  const id = randomUUID();
  const status = opts.status ?? 'completed';
  await db.$transaction(async (tx) => {
    const r = await tx.dataRequest.create({
      data: requestRowOf(sealer, tenantId, {
        id,
        url,
        status,
        tokenState: status === 'completed' ? 'settlement_pending' : 'reserved',
        options: { ...OPTIONS, ...(opts.options ?? {}) },
        resultMeta: status === 'completed' ? { stage: 'http', status_code: opts.result?.statusCode ?? 200 } : undefined,
        ...(opts.extra ?? {}),
      }),
    });
    await appendEvent(tx, r, 'request.accepted', 'pending', {});
    return r;
  });
  if (opts.result !== null && status === 'completed') {
    const bytes = opts.result?.bytes ?? 10;
    await db.requestResult.create({
      data: {
        requestId: id,
        statusCode: opts.result?.statusCode ?? 200,
        contentType: 'text/html',
        body: new Uint8Array(Buffer.alloc(bytes, 'x')),
        bytes,
        expiresAt: opts.result?.expiresAt ?? new Date(Date.now() + 3600_000),
      },
    });
  }
  return db.dataRequest.findUniqueOrThrow({ where: { id } });
}

const fill = (row: Awaited<ReturnType<typeof stored>>, d = deps()) => db.$transaction((tx) => fillResultCache(tx, d, row));
const entriesOf = (tenantId: string) => db.resultCacheEntry.findMany({ where: { tenantId }, orderBy: { storedAt: 'asc' } });

describe('the key', () => {
  const secret = cacheKeySecretOf(key);
  const base: { tenantId: string; routeMode: string; proxyType: string; options: Record<string, unknown> } = {
    tenantId: randomUUID(),
    routeMode: 'http',
    proxyType: 'datacenter',
    options: { ...OPTIONS, headers: { 'X-A': '1' } },
  };
  const k = (over: Partial<typeof base> = {}, url = 'https://example.com/a?x=1&y=2') => cacheKeyOf(secret, { ...base, ...over }, url);

  it('normalises the URL: scheme and host case, default port, fragment; keeps path case and query order', () => {
    expect(normaliseTargetUrl('HTTPS://Example.COM:443/A/./b?x=1&y=2#frag')).toBe('https://example.com/A/b?x=1&y=2');
    expect(normaliseTargetUrl('http://example.com')).toBe('http://example.com/');
    expect(normaliseTargetUrl('http://example.com:8080/?')).toBe('http://example.com:8080/');
    expect(normaliseTargetUrl('https://example.com/a?y=2&x=1')).not.toBe(normaliseTargetUrl('https://example.com/a?x=1&y=2'));
  });

  it('is the same for what does not change the result, and differs for what does', () => {
    expect(k()).toMatch(/^[0-9a-f]{64}$/);
    expect(k({}, 'HTTPS://EXAMPLE.com:443/a?x=1&y=2#top')).toBe(k());
    expect(k({ options: { ...base.options, headers: { 'x-a': '1' } } })).toBe(k());
    expect(
      k({
        options: {
          ...base.options,
          timeout_ms: 9_000,
          skip_cache: true,
          cache_ttl_seconds: 5,
          max_credits_per_request: 3,
          input_hash: 'h',
        },
      }),
    ).toBe(k());
    expect(k({ tenantId: randomUUID() })).not.toBe(k());
    expect(k({}, 'https://example.com/a?y=2&x=1')).not.toBe(k());
    expect(k({ routeMode: 'auto' })).not.toBe(k());
    expect(k({ proxyType: 'residential' })).not.toBe(k());
    for (const [name, value] of Object.entries({
      headers: { 'X-A': '2' },
      cookies: { s: '1' },
      user_agent: 'ua',
      geo_country: 'DE',
      proxy: 'off',
      javascript: false,
      wait_for_selector: '#x',
      wait_for_text: 't',
      result_text_selector: '.p',
      resource_policy: 'compatible',
    })) {
      expect([name, k({ options: { ...base.options, [name]: value } })]).not.toEqual([name, k()]);
    }
    // Under another secret the same request has another key: the table alone confirms no guess.
    expect(cacheKeyOf(cacheKeySecretOf(Buffer.alloc(32, 8).toString('base64')), base, 'https://example.com/a?x=1&y=2')).not.toBe(k());
  });

  it("follows the request's cache fields: skip_cache writes only, TTL 0 and the bypassing options do neither", () => {
    expect(cachePolicyOf(OPTIONS)).toEqual({ read: true, write: true, ttlSeconds: 300 });
    expect(cachePolicyOf({})).toEqual({ read: true, write: true, ttlSeconds: 300 });
    expect(cachePolicyOf({ ...OPTIONS, skip_cache: true })).toEqual({ read: false, write: true, ttlSeconds: 300 });
    expect(cachePolicyOf({ ...OPTIONS, cache_ttl_seconds: 0 })).toMatchObject({ read: false, write: false });
    expect(cachePolicyOf({ ...OPTIONS, debug_artifacts: true })).toMatchObject({ read: false, write: false });
    expect(cachePolicyOf({ ...OPTIONS, browser_actions: [{ type: 'wait', ms: 1 }] })).toMatchObject({ read: false, write: false });
    expect(cachePolicyOf({ ...OPTIONS, browser_actions: [] })).toMatchObject({ read: true, write: true });
  });
});

describe('filling', () => {
  it("keeps at most maxEntriesPerTenant entries per tenant, evicting the oldest, and never another tenant's", async () => {
    const tenant = randomUUID();
    const other = randomUUID();
    await fill(await stored(other, 'https://example.com/other'));
    const rows = [];
    for (let i = 0; i < 5; i++) {
      const row = await stored(tenant, `https://example.com/p${i}`);
      rows.push(row);
      await fill(row);
    }
    expect((await entriesOf(tenant)).map((e) => e.sourceRequestId)).toEqual(rows.slice(2).map((r) => r.id));
    expect(await entriesOf(other)).toHaveLength(1);
    // Refilling an existing key replaces its entry (no growth).
    const again = await stored(tenant, 'https://example.com/p4');
    await fill(again);
    expect((await entriesOf(tenant)).map((e) => e.sourceRequestId)).toEqual([rows[2]!.id, rows[3]!.id, again.id]);
  });

  it('with a large cap, checks it on one fill in cap/100 per tenant: over by less than that between checks, back to the cap at the next', async () => {
    const checks = CapChecks.forCap(300);
    expect(checks.every).toBe(3);
    const tenant = randomUUID();
    const other = randomUUID();
    const withChecks = deps({ resultCache: { ...settings, capChecks: checks } });
    const counts: number[] = [];
    for (let i = 0; i < 7; i++) {
      // Another tenant's fill between each: its count is its own.
      await fill(await stored(other, `https://example.com/o${i}`), withChecks);
      await fill(await stored(tenant, `https://example.com/c${i}`), withChecks);
      counts.push((await entriesOf(tenant)).length);
    }
    // Checked at fills 1, 4 and 7 (cap 3 here): 4, 5 and 6 ran past it by at most every - 1.
    expect(counts).toEqual([1, 2, 3, 3, 4, 5, 3]);
    expect((await entriesOf(other)).length).toBe(3);
    // Every fill checks a cap under 200 (one instance, as the service holds it).
    const small = CapChecks.forCap(199);
    expect([1, 2, 3].map(() => small.due(tenant))).toEqual([true, true, true]);
  });

  it('a completing move that stores its page makes the entry in its own statement, under the same cap and conditions', async () => {
    const tenant = randomUUID();
    const complete = async (url: string, opts: { statusCode?: number; protected?: boolean } = {}) => {
      const row = await stored(tenant, url, { status: 'running', result: null });
      const expiresAt = new Date(Date.now() + 3600_000);
      const { statements, done } = endStatements(
        deps(),
        row,
        { status: 'completed', resultExpiresAt: expiresAt, terminalStage: 'http', ...(opts.protected ? { protected: true } : {}) },
        {
          result: { statusCode: opts.statusCode ?? 200, contentType: 'text/html', body: Buffer.alloc(12, 'y'), expiresAt },
          fillCache: true,
        },
      );
      // One statement: the move, its page and the entry (no batch, so nothing else).
      expect(statements).toHaveLength(1);
      expect(done(await sql.transaction(statements))).toMatchObject({ moved: true, status: 'completed' });
      return row;
    };
    const rows = [];
    for (let i = 0; i < 5; i++) rows.push(await complete(`https://example.com/m${i}`));
    const entries = await entriesOf(tenant);
    expect(entries.map((e) => [e.sourceRequestId, e.bytes])).toEqual(rows.slice(2).map((r) => [r.id, 12]));
    const again = await complete('https://example.com/m4');
    expect((await entriesOf(tenant)).map((e) => e.sourceRequestId)).toEqual([rows[2]!.id, rows[3]!.id, again.id]);
    // A protected page, or one of 500 and above, makes none.
    await complete('https://example.com/protected', { protected: true });
    await complete('https://example.com/5xx', { statusCode: 503 });
    expect(await entriesOf(tenant)).toHaveLength(3);
  });

  it('makes no entry for a failed request, a 5xx page, a protected page, a cached copy, TTL 0, or without a stored result', async () => {
    const tenant = randomUUID();
    await fill(await stored(tenant, 'https://example.com/failed', { status: 'failed' }));
    await fill(await stored(tenant, 'https://example.com/5xx', { result: { statusCode: 502 } }));
    await fill(await stored(tenant, 'https://example.com/protected', { extra: { protected: true } }));
    await fill(await stored(tenant, 'https://example.com/copy', { extra: { cached: true } }));
    await fill(await stored(tenant, 'https://example.com/ttl0', { options: { cache_ttl_seconds: 0 } }));
    await fill(await stored(tenant, 'https://example.com/none', { result: null }));
    expect(await entriesOf(tenant)).toHaveLength(0);
    await fill(await stored(tenant, 'https://example.com/404', { result: { statusCode: 404 } }));
    expect(await entriesOf(tenant)).toHaveLength(1);
  });

  it("expires an entry with its TTL, or with its source's result when that goes first", async () => {
    const tenant = randomUUID();
    const soon = new Date(Date.now() + 60_000);
    await fill(await stored(tenant, 'https://example.com/short', { options: { cache_ttl_seconds: 10 } }));
    await fill(await stored(tenant, 'https://example.com/result-first', { result: { expiresAt: soon } }));
    const [short, resultFirst] = await entriesOf(tenant);
    expect(short!.expiresAt.getTime() - short!.storedAt.getTime()).toBeLessThanOrEqual(10_000 + 50);
    expect(resultFirst!.expiresAt.getTime()).toBe(soon.getTime());
  });
});

describe('the purge', () => {
  it('drops expired entries and the oldest beyond the total bytes cap', async () => {
    const tenant = randomUUID();
    const rows = [];
    for (let i = 0; i < 3; i++) {
      const row = await stored(tenant, `https://example.com/big${i}`, { result: { bytes: 400 } });
      rows.push(row);
      await fill(row, deps({ resultCache: { ...settings, maxEntriesPerTenant: 100 } }));
    }
    const expired = await stored(tenant, 'https://example.com/expired');
    await fill(expired, deps({ resultCache: { ...settings, maxEntriesPerTenant: 100 } }));
    await db.resultCacheEntry.updateMany({ where: { sourceRequestId: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    // The two newest 400-byte entries fill the cap exactly: the expired one goes, and every entry
    // older than them (the oldest big one, and what earlier tests left).
    const purged = await purgeResultCache(db, 800);
    expect(purged).toBeGreaterThanOrEqual(2);
    expect((await entriesOf(tenant)).map((e) => e.sourceRequestId)).toEqual([rows[1]!.id, rows[2]!.id]);
    expect(await purgeResultCache(db, 800)).toBe(0);
  });
});

describe('serving', () => {
  it('completes a pending request with a copy, cached, billed at the HTTP stage with no CAPTCHA solve or traffic', async () => {
    const tenant = randomUUID();
    const source = await stored(tenant, 'https://example.com/served');
    await fill(source);
    const pending = await stored(tenant, 'https://example.com/served#x', { status: 'pending' });
    expect(await serveFromCache(deps(), pending.id)).toBe(true);
    const done = await db.dataRequest.findUniqueOrThrow({ where: { id: pending.id } });
    expect([done.status, done.cached, done.tokenState]).toEqual(['completed', true, 'settlement_pending']);
    expect(done.resultMeta).toEqual({ stage: 'http', status_code: 200, cached: true });
    const copy = await db.requestResult.findUniqueOrThrow({ where: { requestId: pending.id } });
    expect(Buffer.from(copy.body)).toEqual(Buffer.alloc(10, 'x'));
    const settlement = (
      await db.outboxMessage.findMany({
        where: { topic: 'billingCommands', envelope: { path: ['data', 'request_id'], equals: pending.id } },
      })
    ).map((m) => (m.envelope as { data: Record<string, unknown> }).data);
    expect(settlement).toEqual([expect.objectContaining({ outcome: 'completed', terminal_stage: 'http', captcha_solves: 0 })]);
    expect(settlement[0]).not.toHaveProperty('traffic');
    // Served once: a repeated start finds it terminal.
    expect(await serveFromCache(deps(), pending.id)).toBe(false);
  });

  it("is a miss when the source's result is gone, for another tenant, or without a cache configured", async () => {
    const tenant = randomUUID();
    const source = await stored(tenant, 'https://example.com/gone');
    await fill(source);
    const foreign = await stored(randomUUID(), 'https://example.com/gone', { status: 'pending' });
    expect(await serveFromCache(deps(), foreign.id)).toBe(false);
    const mine = await stored(tenant, 'https://example.com/gone', { status: 'pending' });
    expect(await serveFromCache(deps({ resultCache: undefined }), mine.id)).toBe(false);
    await db.requestResult.update({ where: { requestId: source.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await serveFromCache(deps(), mine.id)).toBe(false);
    const after = await db.dataRequest.findUniqueOrThrow({ where: { id: mine.id } });
    expect([after.status, after.cached]).toEqual(['pending', false]);
    expect(await db.requestResult.findUnique({ where: { requestId: mine.id } })).toBeNull();
  });
});
