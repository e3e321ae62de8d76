import { randomUUID } from 'node:crypto';
import { orchestratorApi } from '@wdr/contracts';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import type { Logger } from '@wdr/kit/log';

/** How long the orchestrator keeps mirroring a tenant's events after this instance's last renewal. */
const LISTEN_TTL_S = 120;

/** Tenants per renewal call (the endpoint takes at most 10,000). */
const RENEW_CHUNK = 5_000;

/**
 * This instance's registration as a listener of the lifecycle of the tenants it streams events of.
 * The orchestrator mirrors a request event on `request.lifecycle` only for a tenant somebody listens
 * to (webhook-dispatcher for tenants with endpoints, a gateway instance for tenants with open
 * streams), so a stream's first step is `hold(tenant)`: answered once the registration is in force,
 * when every event not mirrored before it is in the stored history the stream reads next.
 *
 * Registered as `gateway:<instance>` with an expiry, renewed (one call for every tenant held) every
 * third of it while a stream of the tenant is open here; once the tenant's last stream closed here
 * it is no longer renewed and lapses (so does a crashed instance's). A renewal that fails is retried
 * at the next tick; if the registration lapsed meanwhile the streams' periodic catch-up from the
 * stored history still delivers every event, later.
 */
export class StreamListeners {
  readonly holder: string;
  /** Open streams per tenant, and the registration each tenant's first stream waits for. */
  private readonly held = new Map<string, { streams: number; registered: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: {
      orchestrator: Pick<ServiceClient, 'get' | 'post'>;
      log: Logger;
      instanceId?: string;
      ttlSeconds?: number;
    },
  ) {
    this.holder = `gateway:${opts.instanceId ?? randomUUID()}`;
  }

  private get ttl(): number {
    return this.opts.ttlSeconds ?? LISTEN_TTL_S;
  }

  /**
   * Listen to `tenantId`'s lifecycle for one stream: resolves when in force (rejects when the
   * orchestrator could not register it: the stream must not start). Call the answer when the stream ends.
   */
  async hold(tenantId: string): Promise<() => void> {
    let entry = this.held.get(tenantId);
    if (!entry) {
      entry = { streams: 0, registered: this.register([tenantId]) };
      this.held.set(tenantId, entry);
    }
    entry.streams++;
    const held = entry;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.streams--;
      // Not released at the orchestrator: it lapses (a release racing the next stream's registration
      // could delete it under that stream), and a stream reconnecting meanwhile renews it cheaply.
      if (held.streams === 0 && this.held.get(tenantId) === held) this.held.delete(tenantId);
      if (this.held.size === 0) this.stopRenewing();
    };
    try {
      await held.registered;
    } catch (err) {
      // Every stream waiting on it releases: the failed registration is dropped with the last, and
      // the tenant's next stream registers again.
      release();
      throw err;
    }
    this.startRenewing();
    return release;
  }

  /** Tenants held now (for tests and the renewal). */
  tenants(): string[] {
    return [...this.held.keys()];
  }

  stop(): void {
    this.stopRenewing();
  }

  private async register(tenantIds: string[]): Promise<void> {
    await callInternal(this.opts.orchestrator, orchestratorApi.registerLifecycleListeners, {
      body: { holder: this.holder, tenant_ids: tenantIds, ttl_seconds: this.ttl },
    });
  }

  private startRenewing(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => {
        const tenants = this.tenants();
        // At most RENEW_CHUNK tenants per call (the endpoint's bound).
        for (let i = 0; i < tenants.length; i += RENEW_CHUNK) {
          const chunk = tenants.slice(i, i + RENEW_CHUNK);
          this.register(chunk).catch((err: unknown) =>
            this.opts.log.warn({ err, tenants: chunk.length }, 'renewing stream listeners failed'),
          );
        }
      },
      Math.floor((this.ttl * 1000) / 3),
    );
    this.timer.unref();
  }

  private stopRenewing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
