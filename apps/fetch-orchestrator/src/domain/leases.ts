import { randomUUID } from 'node:crypto';
import { ledgerApi, type LedgerLeaseGrant, type ProxyNetworkTypeName, type RouteModeName } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import type { Logger } from '@wdr/kit/log';
import { admissionOf, priceBookOf, type NetworkClass, type PriceBook } from '@wdr/kit/pricing';
import type { PrismaClient } from '../generated/prisma/client.js';

/**
 * Credit leases (issue 24, item 2; docs/architecture.md, "Credit leases"). With LEASE_ENABLED, a
 * tenant's common requests (no max_credits_per_request, outside a project budget cap, not
 * premium, standard pricing policy) are admitted against blocks of tokens the ledger granted, held
 * in `tenant_leases` (LEASE_SLOTS rows per tenant, a request's slot picked by its id): the hold is
 * taken from a slot in the statement that stores the request (requests/create.ts insertAccepted),
 * priced with @wdr/kit/pricing and the price rows of the grant's answer, so no ledger call is made.
 * A slot without room sends that request the synchronous way and is topped up in the background.
 *
 * A grant's `(lease_id, n)` is written to the slot (`pending_*`) before the ledger is asked and the
 * slot is credited only from the answer, clearing it in the same statement: a crash of either side
 * re-asks the same ids, and the ledger replays one grant.
 */
export interface LeaseSettings {
  enabled: boolean;
  blockTokens: number;
  slots: number;
}

/** The terms a slot's lease prices with: the lease's plan, pricing version and price book. */
interface Terms {
  planId: string;
  pricingVersion: number;
  book: PriceBook;
  /** Known until then (the lease's admission end); then asked again. */
  until: number;
}

/** What a leased admission holds: the request's price, from the slot `slot`, on these terms. */
export interface LeasedQuote {
  slot: number;
  hold: number;
  networkClass: NetworkClass;
  planId: string;
  pricingVersion: number;
}

/** Admissions stop this long before the lease's admission end (the ledger's clock and ours). */
const ADMIT_MARGIN_S = 2;
/** A slot refused for want of credits is not asked again before this. */
const REFUSED_RETRY_S = 5;

interface SlotRow {
  lease_id: string | null;
  n: number;
  granted: bigint;
  held: bigint;
  admit_until: Date;
  plan_id: string | null;
  pricing_version: number | null;
  policy: string | null;
  prices: LedgerLeaseGrant['prices'] | null;
  pending_lease_id: string | null;
  pending_n: number | null;
  retry_after: Date;
  released_lease_id: string | null;
}

export class CreditLeases {
  private readonly terms = new Map<string, Terms>();
  private readonly inflight = new Map<string, Promise<void>>();
  /** Tenants no lease serves until then (a guarded plan, a refused grant): no top-up is tried before. */
  private readonly unserved = new Map<string, number>();

  constructor(
    private readonly db: PrismaClient,
    private readonly ledger: ServiceClient,
    readonly settings: LeaseSettings,
    private readonly log: Logger,
  ) {}

  /** The slot of a request: by its id, so a hot tenant's admissions spread over its slots. */
  slotOf(requestId: string): number {
    return Number.parseInt(requestId.replaceAll('-', '').slice(-8), 16) % this.settings.slots;
  }

  /**
   * The hold of a request a lease may serve, or null: not a lease's request, or its tenant's terms
   * are not known here yet (a top-up of its slot is then asked for, which learns them).
   */
  quote(cmd: {
    request_id: string;
    tenant_id: string;
    route_mode: string;
    proxy_type: string | null;
    max_credits: number | null;
  }): LeasedQuote | null {
    if (!this.settings.enabled || cmd.max_credits !== null || cmd.proxy_type === 'premium') return null;
    const slot = this.slotOf(cmd.request_id);
    if ((this.unserved.get(cmd.tenant_id) ?? 0) > Date.now()) return null;
    const terms = this.terms.get(cmd.tenant_id);
    if (!terms || terms.until <= Date.now()) {
      void this.topUp(cmd.tenant_id, slot, cmd.route_mode, cmd.proxy_type);
      return null;
    }
    try {
      const a = admissionOf(
        terms.book,
        { guardedPricing: false, worstCaseCaptchaSolves: 0, worstCaseTrafficBytes: 0n },
        { route_mode: cmd.route_mode, proxy_type: cmd.proxy_type, max_credits: null },
      );
      return { slot, hold: a.hold, networkClass: a.networkClass, planId: terms.planId, pricingVersion: terms.pricingVersion };
    } catch {
      // Not priced on these terms: the ledger words the refusal.
      return null;
    }
  }

  /** After a leased admission: what its slot has left of what it was granted; under the low-water mark it is topped up. */
  afterAdmission(tenantId: string, slot: number, s: { left: number; granted: number }, routeMode: string, proxyType: string | null): void {
    if (s.left < this.lowWater(s.granted)) void this.topUp(tenantId, slot, routeMode, proxyType);
  }

  /** No room in the slot: top it up in the background (the request itself goes the synchronous way). */
  noRoom(tenantId: string, slot: number, routeMode: string, proxyType: string | null): void {
    void this.topUp(tenantId, slot, routeMode, proxyType);
  }

  /**
   * A quarter of a block, or of the slot's grants when the ledger granted less (its share of a
   * small balance): a small lease is not re-asked after every admission.
   */
  private lowWater(granted: number): number {
    return Math.max(1, Math.floor(Math.min(this.settings.blockTokens, granted) / 4));
  }

  /** Top up one slot, once at a time per slot in this process; failures are logged, never thrown (the promise never rejects). */
  topUp(tenantId: string, slot: number, routeMode: string, proxyType: string | null): Promise<void> {
    const key = `${tenantId}:${slot}`;
    const running = this.inflight.get(key);
    if (running) return running;
    const p = this.topUpNow(tenantId, slot, routeMode, proxyType)
      .catch((err: unknown) => this.log.warn({ err, tenant_id: tenantId, slot }, 'lease top-up failed'))
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  /** Wait for the top-ups under way (tests, shutdown). */
  async settle(): Promise<void> {
    await Promise.all([...this.inflight.values()]);
  }

  private async topUpNow(tenantId: string, slot: number, routeMode: string, proxyType: string | null): Promise<void> {
    // Decide what to ask, and write it down before asking.
    const ask = await this.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(
        'INSERT INTO tenant_leases (tenant_id, slot) VALUES ($1::uuid, $2) ON CONFLICT DO NOTHING',
        tenantId,
        slot,
      );
      const [row] = await tx.$queryRawUnsafe<SlotRow[]>(
        `SELECT lease_id::text, n, granted, held, admit_until, plan_id, pricing_version, policy, prices,
                pending_lease_id::text, pending_n, retry_after, released_lease_id::text
           FROM tenant_leases WHERE tenant_id = $1::uuid AND slot = $2 FOR UPDATE`,
        tenantId,
        slot,
      );
      const s = row!;
      const now = Date.now();
      if (s.pending_lease_id && s.pending_n) return { leaseId: s.pending_lease_id, n: s.pending_n };
      if (s.retry_after.getTime() > now) {
        this.noLeaseUntil(tenantId, s.retry_after.getTime());
        return null;
      }
      const admits = s.lease_id !== null && s.admit_until.getTime() > now + ADMIT_MARGIN_S * 1000;
      if (s.policy === 'guarded' && s.admit_until.getTime() > now) {
        this.noLeaseUntil(tenantId, s.admit_until.getTime());
        return null;
      }
      if (admits && s.policy === 'standard') {
        this.learn(tenantId, s);
        if (Number(s.granted - s.held) >= this.lowWater(Number(s.granted))) return null;
      }
      const next = admits && s.policy === 'standard' ? { leaseId: s.lease_id!, n: s.n + 1 } : { leaseId: randomUUID(), n: 1 };
      // A lease replaced here admits no more: its final holds are written down, and what it never
      // held goes back to the tenant (releaseExpired) instead of waiting for its return_after.
      const replaced = next.n === 1 && s.lease_id !== null && s.lease_id !== s.released_lease_id ? s.lease_id : null;
      await tx.$executeRawUnsafe(
        `UPDATE tenant_leases SET pending_lease_id = $3::uuid, pending_n = $4, updated_at = now(),
                release_lease_id = COALESCE($5::uuid, release_lease_id),
                release_held = CASE WHEN $5::uuid IS NULL THEN release_held ELSE held END
          WHERE tenant_id = $1::uuid AND slot = $2`,
        tenantId,
        slot,
        next.leaseId,
        next.n,
        replaced,
      );
      return next;
    });
    if (!ask) return;
    let answer: LedgerLeaseGrant;
    try {
      answer = await callInternal(this.ledger, ledgerApi.grantLease, {
        body: {
          tenant_id: tenantId,
          lease_id: ask.leaseId,
          n: ask.n,
          block_tokens: this.settings.blockTokens,
          route_mode: routeMode as RouteModeName,
          proxy_type: proxyType as ProxyNetworkTypeName | null,
        },
      });
    } catch (err) {
      if (err instanceof PublicError && err.status < 500 && err.code !== 'INTERNAL') {
        // Refused (the balance cannot cover the request): nothing was written at the ledger.
        await this.db.$executeRawUnsafe(
          `UPDATE tenant_leases SET pending_lease_id = NULL, pending_n = NULL, retry_after = now() + make_interval(secs => $5::float8)
            WHERE tenant_id = $1::uuid AND slot = $2 AND pending_lease_id = $3::uuid AND pending_n = $4`,
          tenantId,
          slot,
          ask.leaseId,
          ask.n,
          REFUSED_RETRY_S,
        );
        this.noLeaseUntil(tenantId, Date.now() + REFUSED_RETRY_S * 1000);
        return;
      }
      throw err; // unanswered: the pending ids stay, and are asked again
    }
    // Credit the slot from the answer, once: only while the ids it answers are the pending ones.
    const [credited] = await this.db.$queryRawUnsafe<SlotRow[]>(
      `UPDATE tenant_leases SET
          lease_id = $3::uuid, n = $4,
          granted = CASE WHEN $4 = 1 THEN $5::bigint ELSE granted + $5::bigint END,
          held = CASE WHEN $4 = 1 THEN 0 ELSE held END,
          admit_until = $6::timestamptz, plan_id = $7, pricing_version = $8, policy = $9, prices = $10::jsonb,
          pending_lease_id = NULL, pending_n = NULL, updated_at = now()
        WHERE tenant_id = $1::uuid AND slot = $2 AND pending_lease_id = $3::uuid AND pending_n = $4
        RETURNING lease_id::text, n, granted, held, admit_until, plan_id, pricing_version, policy, prices,
                  pending_lease_id::text, pending_n, retry_after`,
      tenantId,
      slot,
      ask.leaseId,
      ask.n,
      answer.granted_tokens,
      answer.admit_until,
      answer.plan_id,
      answer.pricing_version,
      answer.policy,
      JSON.stringify(answer.prices),
    );
    if (credited && credited.policy === 'standard') this.learn(tenantId, credited);
    if (credited && credited.policy !== 'standard') this.noLeaseUntil(tenantId, credited.admit_until.getTime());
  }

  /**
   * The early return of leases that admit no more (run every few seconds): every slot's expired
   * lease not yet released, and every replaced one written down by a top-up, is sent to the ledger
   * with the holds its slot took; the ledger gives back granted - held at once (idempotent per
   * lease), and its own sweep returns the rest at return_after. A lease the ledger does not have
   * (a guarded plan's, never granted) needs nothing; one it still counts as admitting (clocks) is
   * asked again on the next pass. Answers the leases released.
   */
  async releaseExpired(limit = 100): Promise<number> {
    // One statement: expired leases still in their slots written down (the CTE), and every release
    // written down before (the outer read's snapshot does not see the CTE's rows: no row twice).
    const due = await this.db.$queryRawUnsafe<{ tenant_id: string; slot: number; lease_id: string; held: bigint }[]>(
      `WITH marked AS (
         UPDATE tenant_leases SET release_lease_id = lease_id, release_held = held
          WHERE lease_id IS NOT NULL AND release_lease_id IS NULL AND pending_lease_id IS NULL
            AND released_lease_id IS DISTINCT FROM lease_id AND admit_until < now() - ${ADMIT_MARGIN_SQL}
          RETURNING tenant_id, slot, release_lease_id, release_held
       )
       (SELECT tenant_id::text, slot, release_lease_id::text AS lease_id, release_held AS held FROM marked
        UNION ALL
        SELECT tenant_id::text, slot, release_lease_id::text, release_held FROM tenant_leases WHERE release_lease_id IS NOT NULL)
       LIMIT $1`,
      limit,
    );
    let released = 0;
    for (const d of due) {
      try {
        await callInternal(this.ledger, ledgerApi.releaseLease, {
          params: { leaseId: d.lease_id },
          body: { tenant_id: d.tenant_id, held_tokens: Number(d.held) },
        });
      } catch (err) {
        const code = err instanceof PublicError ? err.code : undefined;
        // NOT_FOUND: nothing to give back. CONFLICT: still admitting on the ledger's clock; next pass.
        if (code !== 'NOT_FOUND') {
          if (code !== 'CONFLICT') this.log.warn({ err, tenant_id: d.tenant_id, lease_id: d.lease_id }, 'lease release failed');
          continue;
        }
      }
      await this.db.$executeRawUnsafe(
        `UPDATE tenant_leases SET release_lease_id = NULL, release_held = NULL, released_lease_id = $3::uuid
          WHERE tenant_id = $1::uuid AND slot = $2 AND release_lease_id = $3::uuid`,
        d.tenant_id,
        d.slot,
        d.lease_id,
      );
      released++;
    }
    return released;
  }

  private noLeaseUntil(tenantId: string, until: number): void {
    if (this.unserved.size >= 100_000) this.unserved.clear();
    this.unserved.set(tenantId, until);
  }

  private learn(tenantId: string, s: SlotRow): void {
    if (this.terms.size >= 100_000) this.terms.clear();
    if (!s.plan_id || s.pricing_version === null || !s.prices) return;
    const rows = (typeof s.prices === 'string' ? (JSON.parse(s.prices) as LedgerLeaseGrant['prices']) : s.prices).map((p) => ({
      ...p,
      override: false,
    }));
    this.terms.set(tenantId, {
      planId: s.plan_id,
      pricingVersion: s.pricing_version,
      book: priceBookOf(s.plan_id, s.pricing_version, rows),
      until: s.admit_until.getTime() - ADMIT_MARGIN_S * 1000,
    });
  }
}

/** SQL condition of a slot that can admit a hold of `$price` now (the admission statement's). */
export const ADMIT_MARGIN_SQL = `interval '${ADMIT_MARGIN_S} seconds'`;
