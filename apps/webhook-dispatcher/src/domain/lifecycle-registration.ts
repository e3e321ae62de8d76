import { setTimeout as sleep } from 'node:timers/promises';
import { orchestratorApi } from '@wdr/contracts';
import type { RawSql } from '@wdr/kit/db';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import type { Logger } from '@wdr/kit/log';
import type { PrismaClient } from '../generated/prisma/client.js';

/** The registration's name at the orchestrator: one for every replica of the dispatcher. */
export const HOLDER = 'webhook-dispatcher';

/** Tenants per registration call of the sync. */
const SYNC_CHUNK = 5_000;

/**
 * The dispatcher's side of "fan out only what someone listens to": the orchestrator mirrors a
 * request event on `request.lifecycle` only for a tenant somebody listens to, and the dispatcher
 * listens to every tenant that has a webhook endpoint (enabled or not: enabling one needs no
 * registration then).
 *
 * - A create registers the tenant before it inserts, inside its transaction and under the
 *   tenant's lock, and fails if the orchestrator cannot register (fail closed: an endpoint that
 *   would miss events is not created). The orchestrator answers once the registration is in force,
 *   so every event after the create is mirrored.
 * - A delete releases the tenant when it has no endpoint left, under the same lock, so a create
 *   running beside it cannot be left unregistered.
 * - At start, a sync registers every tenant with an endpoint and tells the orchestrator that is all
 *   of them: until then it mirrors every tenant's events (its migration registered "every tenant").
 *   Retried until it succeeds; a registration the dispatcher did not release (it crashed between a
 *   delete and its release) only costs the tenant's mirrors, and the next delete releases it.
 *
 * Without an orchestrator to register with (ORCHESTRATOR_URL unset, as in the dispatcher's own
 * tests), none of this runs and the orchestrator keeps mirroring every tenant.
 */
export class LifecycleRegistration {
  private stopped = false;

  constructor(
    private readonly db: PrismaClient,
    private readonly orchestrator: Pick<ServiceClient, 'get' | 'post'> | undefined,
    private readonly log: Logger,
  ) {}

  /** There is an orchestrator to register with. */
  get enabled(): boolean {
    return this.orchestrator !== undefined;
  }

  /** Inside a create's transaction: take the tenant's lock, then register it (throws when it cannot). */
  async registerIn(tx: RawSql, tenantId: string): Promise<void> {
    if (!this.orchestrator) return;
    await lockTenant(tx, tenantId);
    await callInternal(this.orchestrator, orchestratorApi.registerLifecycleListeners, {
      body: { holder: HOLDER, tenant_ids: [tenantId], ttl_seconds: null },
    });
  }

  /** After a delete: release the tenant if it has no endpoint left. A failure is logged (the registration stays). */
  async releaseIfUnused(tenantId: string): Promise<void> {
    const orchestrator = this.orchestrator;
    if (!orchestrator) return;
    try {
      await this.db.$transaction(
        async (tx) => {
          await lockTenant(tx, tenantId);
          const left = await tx.webhookEndpoint.count({ where: { tenantId } });
          if (left > 0) return;
          await callInternal(orchestrator, orchestratorApi.releaseLifecycleListener, { body: { holder: HOLDER, tenant_id: tenantId } });
        },
        { timeout: 20_000, maxWait: 10_000 },
      );
    } catch (err) {
      this.log.warn({ err, tenantId }, 'releasing the lifecycle registration failed; it stays (its mirrors are only extra messages)');
    }
  }

  /** Register every tenant with an endpoint, then say it is all of them; retried until done or stopped. */
  async sync(): Promise<void> {
    const orchestrator = this.orchestrator;
    if (!orchestrator) return;
    for (let failures = 0; !this.stopped; failures++) {
      try {
        const rows = await this.db.$queryRawUnsafe<{ tenant_id: string }[]>(
          `SELECT DISTINCT tenant_id::text AS tenant_id FROM webhook_endpoints ORDER BY 1`,
        );
        const tenants = rows.map((r) => r.tenant_id);
        for (let i = 0; i === 0 || i < tenants.length; i += SYNC_CHUNK) {
          const chunk = tenants.slice(i, i + SYNC_CHUNK);
          await callInternal(orchestrator, orchestratorApi.registerLifecycleListeners, {
            body: { holder: HOLDER, tenant_ids: chunk, ttl_seconds: null, complete: i + SYNC_CHUNK >= tenants.length },
          });
        }
        this.log.info({ tenants: tenants.length }, 'lifecycle listeners registered');
        return;
      } catch (err) {
        this.log.warn({ err, failures: failures + 1 }, 'registering lifecycle listeners failed; every tenant stays mirrored meanwhile');
        await sleep(Math.min(1_000 * 2 ** Math.min(failures, 5), 30_000), undefined, { ref: false });
      }
    }
  }

  stop(): void {
    this.stopped = true;
  }
}

/** The tenant's endpoints lock: a create and a delete's release never interleave. */
async function lockTenant(tx: RawSql, tenantId: string): Promise<void> {
  await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))::text AS locked`, `webhook-listener:${tenantId}`);
}
