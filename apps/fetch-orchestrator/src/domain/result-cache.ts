import { transactionWithHooks } from '@wdr/kit/db';
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { canonicalJson } from '@wdr/kit/canonical-json';
import type { Sealer } from '@wdr/kit/sealing';
import type { PgSql, PgStatement } from '@wdr/kit/pg-sql';
import type { DataRequest, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { appendEvent } from './requests/events.js';
import { openInputs } from './requests/sealed-inputs.js';
import { finish } from './requests/finish.js';
import { TERMINAL } from './requests/terminal.js';
import { firstStageOf } from './stages.js';

type Tx = Prisma.TransactionClient;

/**
 * The result cache. A request whose result an identical earlier request of the same tenant
 * produced within its `cache_ttl_seconds` is not executed: it gets its own copy of that stored
 * result and completes with `cached: true` (docs/api.md, "Result cache").
 *
 * An entry (`result_cache`) only points at the source request; the page stays in
 * `request_results`, which is what a hit copies. The entry's key is an HMAC of the tenant, the
 * normalised URL and every option that changes the result, so the sealed URL never appears in
 * clear, and a stolen table cannot confirm a guessed URL either.
 */
export interface ResultCacheSettings {
  /** HMAC key of the entries' keys (derived from the at-rest key, see `cacheKeySecretOf`). */
  keySecret: KeyObject;
  /** Entries one tenant may hold; a fill that checks the cap evicts that tenant's oldest beyond it. */
  maxEntriesPerTenant: number;
  /** Which fills check the cap (CapChecks); without it, every fill does. */
  capChecks?: CapChecks | undefined;
  /** Total size of the results the entries serve; the retention purge evicts the oldest beyond it. */
  maxTotalBytes: number;
  /** `fetch_orchestrator_result_cache_total{outcome}`: hit, miss, bypass (not allowed to read), evicted. */
  outcomes?: { inc(labels: { outcome: 'hit' | 'miss' | 'bypass' | 'evicted' }, value?: number): void } | undefined;
}

export interface ResultCacheDeps {
  db: PrismaClient;
  /** The statements that go with a request's end (requests/writes.ts). */
  sql: PgSql;
  sealer: Sealer;
  resultRetentionHours: number;
  /** Absent: no result cache (the stage tests that are not about it). */
  resultCache?: ResultCacheSettings | undefined;
}

/** `cache_ttl_seconds` when a request does not say (the spec's default). */
export const DEFAULT_CACHE_TTL_SECONDS = 300;

/** The cache key's own key, derived from the service's at-rest key: rotating that one empties the cache. */
export function cacheKeySecretOf(targetUrlKeyBase64: string): KeyObject {
  // A KeyObject: every request's key is an HMAC under it (kit's secretKeyOf says why it is imported once).
  return createSecretKey(createHmac('sha256', Buffer.from(targetUrlKeyBase64, 'base64')).update('wdr result cache key v1').digest());
}

export interface CachePolicy {
  /** May an entry answer this request? */
  read: boolean;
  /** Does its completion make (or replace) an entry? */
  write: boolean;
  ttlSeconds: number;
}

/**
 * What the cache may do for a request, from its options: browser actions and debug artifacts
 * bypass it entirely (no read, no write: their point is to run); `cache_ttl_seconds: 0` turns it
 * off for the request; `skip_cache` does not read but writes a fresh entry.
 */
export function cachePolicyOf(options: unknown): CachePolicy {
  const o = (options ?? {}) as Record<string, unknown>;
  const ttl = typeof o['cache_ttl_seconds'] === 'number' ? o['cache_ttl_seconds'] : DEFAULT_CACHE_TTL_SECONDS;
  // As stored, the actions are sealed and `browser_action_steps` shows them (requests/sealed-inputs.ts).
  const actions = o['browser_actions'] ?? o['browser_action_steps'];
  const bypass = (Array.isArray(actions) && actions.length > 0) || o['debug_artifacts'] === true;
  if (bypass || !(ttl > 0)) return { read: false, write: false, ttlSeconds: 0 };
  return { read: o['skip_cache'] !== true, write: true, ttlSeconds: ttl };
}

/**
 * The URL as the cache compares it: scheme and host lower-cased, a default port dropped, the host
 * in its ASCII form, dot segments resolved (all by the WHATWG parser), the fragment dropped (never
 * sent to the target). The path keeps its case and the query its parameters in their order: both
 * can change the answer. A lone `?` counts as no query.
 */
export function normaliseTargetUrl(raw: string): string {
  const u = new URL(raw);
  return `${u.protocol}//${u.host}${u.pathname}${u.search}`;
}

/**
 * Options that can change what a request gets back, besides its route mode and network class.
 * Left out on purpose: `timeout_ms` (a completed result is the same page however long it could
 * have taken), `max_credits_per_request` (money, not content), `mode` (resolved into the route
 * mode), the cache's own fields, and the bookkeeping the orchestrator adds (`input_hash`,
 * `admission_quote`). `browser_actions` and `debug_artifacts` never reach the key: they bypass
 * the cache. Browser-only options count in HTTP modes too: a few missed hits rather than a wrong one.
 */
export const RESULT_CHANGING_OPTIONS = [
  'proxy',
  'geo_country',
  'javascript',
  'headers',
  'cookies',
  'user_agent',
  'wait_for_selector',
  'wait_for_text',
  'result_text_selector',
  'resource_policy',
  'extraction',
] as const;

/** The parts of a request its key is made of. */
export type KeyedRequest = Pick<DataRequest, 'tenantId' | 'routeMode' | 'proxyType'> & { options: unknown };

/** What the key is made of: tenant, normalised URL, route mode, network class and the result-changing options. */
export function cacheKeyMaterial(request: KeyedRequest, url: string): string {
  const o = (request.options ?? {}) as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const name of RESULT_CHANGING_OPTIONS) {
    let v = o[name];
    if (v === undefined || v === null) continue;
    // Header names are case-insensitive; cookie names are not.
    if (name === 'headers' && typeof v === 'object')
      v = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k.toLowerCase(), x]));
    picked[name] = v;
  }
  // Spec defaults, so a request stored before they were filled in compares equal to one after.
  picked['javascript'] ??= true;
  picked['resource_policy'] ??= 'adaptive';
  return canonicalJson({
    v: 1,
    tenant: request.tenantId,
    url: normaliseTargetUrl(url),
    route_mode: request.routeMode,
    proxy_type: request.proxyType ?? null,
    options: picked,
  });
}

export function cacheKeyOf(secret: KeyObject, request: KeyedRequest, url: string): string {
  return createHmac('sha256', secret).update(cacheKeyMaterial(request, url)).digest('hex');
}

/**
 * A request's target URL and options as the stage that ran it opened them (run-http-stage.ts): its
 * cache key is made of them without opening the sealed values a second time.
 */
export interface OpenedRequest {
  url: string;
  options: unknown;
}

/** The key of a request that may use the cache the way `want` says, or undefined. */
function keyFor(
  settings: ResultCacheSettings,
  sealer: Sealer,
  request: DataRequest,
  want: 'read' | 'write',
  opened?: OpenedRequest,
): { key: string; policy: CachePolicy } | undefined {
  if (!request.targetSealed) return undefined;
  const policy = cachePolicyOf(request.options);
  if (!policy[want]) return undefined;
  const keyed = { ...request, options: opened ? opened.options : openInputs(sealer, request) };
  return { key: cacheKeyOf(settings.keySecret, keyed, opened ? opened.url : sealer.open(request.targetSealed, request.id)), policy };
}

/** The stage a hit is billed at: the cheapest its route mode can end in (`auto`: HTTP). */
const hitStageOf = (routeMode: string): 'http' | 'browser' => (firstStageOf(routeMode) === 'browser' ? 'browser' : 'http');

/**
 * Serve a request from the cache, when execution starts: true when it was (the request is then
 * completed, with its own copy of the result, events and settlement), false when the caller runs
 * it as usual. A request that is already terminal, or not allowed to read the cache, is a miss.
 * Takes the request row, or its id when the caller has not read it yet.
 */
export async function serveFromCache(deps: ResultCacheDeps, requestOrId: DataRequest | string): Promise<boolean> {
  const settings = deps.resultCache;
  if (!settings) return false;
  const request = typeof requestOrId === 'string' ? await deps.db.dataRequest.findUnique({ where: { id: requestOrId } }) : requestOrId;
  if (!request || TERMINAL.has(request.status)) return false;
  const k = keyFor(settings, deps.sealer, request, 'read');
  if (!k) {
    settings.outcomes?.inc({ outcome: 'bypass' });
    return false;
  }
  // Misses (most requests) stop at this one index lookup, without a transaction or a lock. An
  // entry must be younger than this request's own TTL too: `cache_ttl_seconds: 5` never gets a
  // copy older than 5 s, whatever TTL the request that made it had.
  // On node-postgres (kit/pg-sql.ts): every page allowed to read the cache pays this lookup.
  const [entry] = await deps.sql.$queryRawUnsafe<{ n: number }[]>(
    `SELECT 1 AS n FROM result_cache
      WHERE tenant_id = $1::uuid AND key_hash = $2 AND expires_at > now()
        AND stored_at > now() - make_interval(secs => $3::double precision)`,
    request.tenantId,
    k.key,
    k.policy.ttlSeconds,
  );
  if (!entry) {
    settings.outcomes?.inc({ outcome: 'miss' });
    return false;
  }

  const served = await transactionWithHooks(deps.db, async (tx) => {
    // Lock the request; one cancelled or finished since it was read stays as it is.
    const [row] = await tx.dataRequest.updateManyAndReturn({
      where: { id: request.id, status: { notIn: [...TERMINAL] } },
      data: { startedAt: request.startedAt ?? new Date() },
    });
    if (!row) return false;
    const resultExpiresAt = new Date(Date.now() + deps.resultRetentionHours * 3600_000);
    // The entry again (it may have been replaced or evicted since), its source's stored result
    // (still there, still the same tenant's), copied for this request in the same statement.
    const [copied] = await tx.$queryRawUnsafe<
      { source_request_id: string; stored_at: Date; result_meta: Record<string, unknown> | null }[]
    >(
      `WITH src AS (
         SELECT c.source_request_id, c.stored_at, s.result_meta, x.status_code, x.content_type, x.body, x.bytes, x.text
           FROM result_cache c
           JOIN data_requests s ON s.id = c.source_request_id AND s.tenant_id = c.tenant_id AND s.status = 'completed'
           JOIN request_results x ON x.request_id = s.id AND x.expires_at > now()
          WHERE c.tenant_id = $1::uuid AND c.key_hash = $2 AND c.expires_at > now()
            AND c.stored_at > now() - make_interval(secs => $5::double precision)
       ), ins AS (
         INSERT INTO request_results (request_id, status_code, content_type, body, bytes, text, expires_at)
         SELECT $3::uuid, status_code, content_type, body, bytes, text, $4::timestamptz FROM src
         ON CONFLICT (request_id) DO NOTHING
         RETURNING request_id
       )
       SELECT src.source_request_id::text AS source_request_id, src.stored_at, src.result_meta FROM src WHERE EXISTS (SELECT 1 FROM ins)`,
      row.tenantId,
      k.key,
      row.id,
      resultExpiresAt,
      k.policy.ttlSeconds,
    );
    if (!copied) return false;
    const ageSeconds = Math.max(0, Math.floor((Date.now() - new Date(copied.stored_at).getTime()) / 1000));
    await appendEvent(tx, row, 'request.cache_hit', row.status, {
      cached: true,
      age_seconds: ageSeconds,
      source_request_id: copied.source_request_id,
    });
    // Nothing runs for it: no CAPTCHA solve, no proxy traffic (`finish` still adds what an `auto` HTTP
    // stage that ran before carried); billed at the base of the mode's cheapest stage.
    await finish(tx, row, {
      status: 'completed',
      resultExpiresAt,
      resultMeta: { ...(copied.result_meta ?? {}), cached: true },
      terminalStage: hitStageOf(row.routeMode),
      captchaSolves: 0,
      cached: true,
    });
    return true;
  });
  // Lost the entry between the lookup and the copy (replaced, evicted, its source result gone).
  settings.outcomes?.inc({ outcome: served ? 'hit' : 'miss' });
  return served;
}

/**
 * Make (or replace) the entry of a request that has just completed, in the caller's completion
 * transaction, after `finish`: only a completed request whose page (below 500, no anti-bot
 * protection detected) is stored, that is allowed to write and was not itself served from the
 * cache. Then evict the tenant's oldest entries beyond its cap. One statement.
 */
export async function fillResultCache(tx: Tx, deps: ResultCacheDeps, request: DataRequest): Promise<void> {
  const fill = fillResultCacheSql(deps, request);
  if (!fill) return;
  const [row] = await tx.$queryRawUnsafe<{ evicted: number }[]>(fill.text, ...fill.params);
  countEvicted(deps, Number(row?.evicted ?? 0));
}

/**
 * fillResultCache as a lazy statement of `sql` for `sql.transaction([...])` after the completing move
 * (it reads the row that move wrote), or undefined when the request makes no entry; `counted`
 * takes its answer once the transaction committed.
 */
export function fillResultCacheStatement(
  deps: ResultCacheDeps,
  request: DataRequest,
): { statement: PgStatement<{ evicted: number }[]>; counted: (rows: unknown) => void } | undefined {
  const fill = fillResultCacheSql(deps, request);
  if (!fill) return undefined;
  return {
    statement: deps.sql.rows<{ evicted: number }>(fill.text, fill.params),
    counted: (rows) => countEvicted(deps, Number((rows as { evicted: number }[] | undefined)?.[0]?.evicted ?? 0)),
  };
}

/**
 * Which of a tenant's fills check its entry cap. Checking reads the tenant's entries in age order
 * (2.5 ms of Postgres for a tenant at the default 10,000, more than the rest of the page's
 * statements), so a large cap is checked on one fill in cap/100 per tenant and instance: a tenant
 * holds at most 1 % more than its cap per orchestrator instance, for as long as it takes that
 * instance cap/100 more of its pages. A cap under 200 is checked on every fill. The count is this
 * process's (a restart checks at the tenant's next fill); tenants past 10,000 start counting again.
 */
export class CapChecks {
  private readonly fills = new Map<string, number>();

  constructor(readonly every: number) {}

  static forCap(maxEntriesPerTenant: number): CapChecks {
    return new CapChecks(Math.max(1, Math.floor(maxEntriesPerTenant / 100)));
  }

  /** Whether this fill of the tenant checks its cap (the first one here does). */
  due(tenantId: string): boolean {
    const n = this.fills.get(tenantId) ?? 0;
    if (n === 0 && this.fills.size >= 10_000) this.fills.clear();
    this.fills.set(tenantId, (n + 1) % this.every);
    return n === 0;
  }
}

/** The entry a completing move makes in its own statement (requests/writes.ts moveStatement's `cacheFill`). */
export interface CacheFill {
  tenantId: string;
  key: string;
  ttlSeconds: number;
  /** Entries of the tenant's others kept (the new one is one of the cap); undefined: this fill does not check the cap. */
  keepOthers: number | undefined;
  /** Counts the evicted entries once the statement committed. */
  counted: (evicted: number) => void;
}

/** The entry a request's completion makes, or undefined when it makes none (not allowed to write, no cache). */
export function cacheFillOf(deps: ResultCacheDeps, request: DataRequest, opened?: OpenedRequest): CacheFill | undefined {
  const settings = deps.resultCache;
  if (!settings) return undefined;
  const k = keyFor(settings, deps.sealer, request, 'write', opened);
  if (!k) return undefined;
  return {
    tenantId: request.tenantId,
    key: k.key,
    ttlSeconds: k.policy.ttlSeconds,
    keepOthers: !settings.capChecks || settings.capChecks.due(request.tenantId) ? settings.maxEntriesPerTenant - 1 : undefined,
    counted: (evicted) => countEvicted(deps, evicted),
  };
}

/**
 * A request's entry and the eviction of its tenant's oldest beyond the cap, as CTEs of a statement
 * (`p` adds its parameters): `moved` is the CTE of the request's row (its id, and its status, cached
 * and protected as they now are), `bytes` and `expiresAt` the SQL of its stored page's size and
 * expiry. Only a completed request not served from the cache and with no anti-bot protection
 * detected makes one (the caller takes only a page below 500). The `evict` CTE answers one row per
 * entry evicted. Used by a completing move's own statement (requests/writes.ts) and by
 * fillResultCacheSql for a request completed before it.
 */
export function cacheFillCtes(fill: CacheFill, moved: string, bytes: string, expiresAt: string, p: (v: unknown) => string): string {
  const tenant = p(fill.tenantId);
  const key = p(fill.key);
  return `, cfill AS (
      INSERT INTO result_cache (tenant_id, key_hash, source_request_id, bytes, stored_at, expires_at)
      SELECT ${tenant}::uuid, ${key}, ${moved}.id, ${bytes}, now(), LEAST(now() + make_interval(secs => ${p(fill.ttlSeconds)}::double precision), ${expiresAt})
        FROM ${moved} WHERE ${moved}.status = 'completed' AND NOT ${moved}.cached AND NOT ${moved}.protected
      ON CONFLICT (tenant_id, key_hash) DO UPDATE
         SET source_request_id = EXCLUDED.source_request_id, bytes = EXCLUDED.bytes, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at
      RETURNING tenant_id
    ), ${
      fill.keepOthers === undefined
        ? 'evict AS (SELECT 1 WHERE false)'
        : `cold AS (
      SELECT c.key_hash FROM result_cache c
       WHERE c.tenant_id = ${tenant}::uuid AND c.key_hash <> ${key} AND EXISTS (SELECT 1 FROM cfill)
       ORDER BY c.stored_at DESC, c.key_hash
      OFFSET ${p(fill.keepOthers)}::int
    ), evict AS (
      DELETE FROM result_cache c USING cold WHERE c.tenant_id = ${tenant}::uuid AND c.key_hash = cold.key_hash RETURNING 1
    )`
    }`;
}

function countEvicted(deps: ResultCacheDeps, evicted: number): void {
  if (evicted > 0) deps.resultCache?.outcomes?.inc({ outcome: 'evicted' }, evicted);
}

/**
 * The entry and eviction of a request completed before this statement (its stored page read back),
 * answering `evicted`: cacheFillCtes over the row and its result.
 */
function fillResultCacheSql(deps: ResultCacheDeps, request: DataRequest): { text: string; params: unknown[] } | undefined {
  const fill = cacheFillOf(deps, request);
  if (!fill) return undefined;
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const text = `WITH src AS (
      SELECT r.id, r.status, r.cached, r.protected, x.bytes, x.expires_at
        FROM data_requests r JOIN request_results x ON x.request_id = r.id
       WHERE r.id = ${p(request.id)}::uuid AND x.status_code < 500
    )${cacheFillCtes(fill, 'src', 'src.bytes', 'src.expires_at', p)}
    SELECT count(*)::int AS evicted FROM evict`;
  return { text, params };
}

/**
 * The cache's part of the retention purge: expired entries, then the oldest entries beyond the
 * total bytes cap. Returns how many entries went.
 */
export async function purgeResultCache(db: PrismaClient, maxTotalBytes: number | undefined, now = new Date()): Promise<number> {
  const expired = await db.resultCacheEntry.deleteMany({ where: { expiresAt: { lt: now } } });
  if (maxTotalBytes === undefined) return expired.count;
  const evicted = await db.$executeRaw`
    DELETE FROM result_cache c USING (
      SELECT tenant_id, key_hash FROM (
        SELECT tenant_id, key_hash, sum(bytes) OVER (ORDER BY stored_at DESC, tenant_id, key_hash) AS newer_bytes FROM result_cache
      ) s WHERE s.newer_bytes > ${maxTotalBytes}::bigint
    ) o
    WHERE c.tenant_id = o.tenant_id AND c.key_hash = o.key_hash`;
  return expired.count + evicted;
}
