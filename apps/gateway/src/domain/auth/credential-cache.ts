import type { AuthenticatedTenant } from '../tenants/authenticated-tenant.js';

/** The channel the gateway database's credential triggers notify, with the tenant id as payload. */
export const CREDENTIALS_CHANNEL = 'wdr_credentials';

interface Entry {
  tenant: AuthenticatedTenant;
  expiresAt: number;
}

/** What a successful lookup gives: the tenant, and when the credential itself stops being valid. */
export interface VerifiedCredential {
  tenant: AuthenticatedTenant;
  credentialExpiresAt?: Date | null;
}

/**
 * Credentials verified recently, so a tenant's every submission is not a database round trip
 * (key row + tenant + limits) before anything else happens.
 *
 * Correctness does not rest on the TTL: the gateway database notifies `wdr_credentials` with the
 * tenant id at the commit of any change to a tenant, its keys, its cabinet tokens or its limits,
 * and every replica drops that tenant's entries. Entries are served only while that notification
 * connection is up (`trust(true)`); a lost connection empties the cache and turns it off until it
 * listens again, so a change made while nobody listened is never missed. A lookup that raced a
 * change (read before the commit, finished after the notification) is not stored. The TTL bounds
 * what a bug or a lost notification could cost. Only successes are cached: a wrong key always
 * reaches the database. Keys are the credentials' peppered HMAC digests, never the secrets.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private trusted = false;

  constructor(private readonly opts: { ttlMs: number; maxEntries: number; now?: () => number }) {}

  /** Serve entries (true) only while change notifications are being received. Empties the cache either way. */
  trust(trusted: boolean): void {
    this.trusted = trusted;
    this.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The cached tenant for this credential digest, or `load()`'s answer (stored when it may be).
   * `load` throws for a credential that is not valid; nothing is stored then.
   */
  async resolve(digest: string, load: () => Promise<VerifiedCredential>): Promise<AuthenticatedTenant> {
    const now = this.now();
    const hit = this.trusted ? this.entries.get(digest) : undefined;
    if (hit && hit.expiresAt > now) return hit.tenant;
    if (hit) this.entries.delete(digest);
    const generation = this.generation;
    const verified = await load();
    if (this.trusted && generation === this.generation && this.opts.ttlMs > 0) {
      const until = verified.credentialExpiresAt
        ? Math.min(now + this.opts.ttlMs, verified.credentialExpiresAt.getTime())
        : now + this.opts.ttlMs;
      if (this.entries.size >= this.opts.maxEntries) {
        // The oldest entry goes (a Map iterates in insertion order).
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
      this.entries.set(digest, { tenant: verified.tenant, expiresAt: until });
    }
    return verified.tenant;
  }

  /** A tenant's credentials or limits changed: drop its entries, and any lookup in flight is not stored. */
  invalidateTenant(tenantId: string): void {
    this.generation++;
    for (const [digest, entry] of this.entries) {
      if (entry.tenant.tenantId === tenantId) this.entries.delete(digest);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }
}
