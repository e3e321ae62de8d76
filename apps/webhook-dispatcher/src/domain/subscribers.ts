import type { Logger } from '@wdr/kit/log';
import { PgListener, pgConnectionFor } from '@wdr/kit/pg-listen';
import type { RawSql } from '@wdr/kit/db';
import type { WebhookEvent } from './fan-out.js';

/** What one enabled endpoint takes: its event types, and its scope (null: tenant-wide). */
interface EndpointFilter {
  projectId: string | null;
  environmentId: string | null;
  types: ReadonlySet<string>;
}

interface EndpointRow {
  tenant_id: string;
  project_id: string | null;
  environment_id: string | null;
  event_types: string[];
}

const ENABLED_ENDPOINTS = `SELECT tenant_id::text AS tenant_id, project_id, environment_id, event_types
  FROM webhook_endpoints WHERE status = 'enabled'`;

/**
 * Who listens: the enabled webhook endpoints of every tenant (scope and event types), kept in
 * memory so the fan-out skips, without touching the database, every event nobody subscribes to: the
 * events of tenants without endpoints (most request events of the fleet), of a project or
 * environment without endpoints when the tenant's endpoints are all scoped elsewhere, and of types
 * no endpoint takes. The same rule as the fan-out's statement (`FanOut`, `recordMessages`).
 *
 * Kept fresh by `NOTIFY`: every write to an endpoint (create, update of status, types or scope,
 * delete) announces its tenant at commit (`wdr_webhook_subscribers`, trigger on
 * webhook_endpoints), and the dispatcher that made the write announces it to itself before it
 * answers. An announced tenant receives everything until its endpoints have been read again (one
 * query for that tenant), so a new endpoint is never missed while the set catches up; a full
 * reload runs whenever the listening connection is (re)established, and periodically.
 *
 * Fails closed: whenever the set may be incomplete (before the first load, while the listening
 * connection is down, until the reload after it is back) `mayReceive` answers true for everyone,
 * and the fan-out asks the database as it would without this set. So the set can only save work,
 * never drop an event of a subscriber; the one window left is the milliseconds between another
 * replica's commit of a new endpoint and its notification reaching this one.
 */
export class Subscribers {
  private tenants: Map<string, EndpointFilter[]> | undefined;
  /** Tenants announced and not read again yet (they receive everything), with a version per announcement. */
  private readonly pending = new Map<string, number>();
  /** Tenants announced while a full reload was reading: read again after it (it may predate them). */
  private announced: Set<string> | undefined;
  private version = 0;
  private readonly listener: PgListener;
  private readonly schema: string;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: RawSql,
    databaseUrl: string,
    private readonly log: Logger,
    private readonly reloadEveryMs = 60_000,
    /** The listening connection's heartbeat (PgListener's; 0 turns it off). */
    heartbeatMs = 5_000,
  ) {
    const { schema, config } = pgConnectionFor(databaseUrl);
    this.schema = schema;
    this.listener = new PgListener({
      // Named, so an operator (or a test) can tell this connection apart in pg_stat_activity.
      connection: { ...config, application_name: 'webhook-dispatcher:subscribers' },
      channel: 'wdr_webhook_subscribers',
      log,
      heartbeatMs,
      heartbeatTimeoutMs: Math.min(2_000, Math.max(100, Math.ceil(heartbeatMs / 2))),
      onNotify: (payload) => {
        const [schemaName, tenantId] = payload.split(':');
        if (schemaName === this.schema && tenantId) this.add(tenantId);
      },
      onListening: () => void this.reload(),
      onLost: () => {
        this.tenants = undefined;
        this.pending.clear();
      },
    });
  }

  start(): void {
    this.listener.start();
    this.timer = setInterval(() => void this.reload(), this.reloadEveryMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.listener.stop();
  }

  /** True while the set is complete: `mayReceive` can answer false. */
  loaded(): boolean {
    return this.tenants !== undefined;
  }

  /**
   * False only when no enabled endpoint of the tenant takes an event of this type and scope (see
   * WebhookEvent's `scope`): a project's event reaches tenant-wide endpoints and that project's
   * (environment's); an event of no project only tenant-wide ones; a tenant-level fact every one.
   */
  mayReceive(tenantId: string, type: string, scope: WebhookEvent['scope']): boolean {
    if (this.tenants === undefined || this.pending.has(tenantId)) return true;
    const filters = this.tenants.get(tenantId);
    if (!filters) return false;
    return filters.some(
      (f) =>
        f.types.has(type) &&
        (scope === 'tenant' ||
          f.projectId === null ||
          (scope !== null && f.projectId === scope.projectId && (f.environmentId === null || f.environmentId === scope.environmentId))),
    );
  }

  /** False only when the tenant has no enabled endpoint at all (and the set is complete): nothing of its is for anyone here. */
  mayReceiveAny(tenantId: string): boolean {
    if (this.tenants === undefined || this.pending.has(tenantId)) return true;
    return this.tenants.has(tenantId);
  }

  /** A tenant whose endpoints changed: it receives everything until they have been read again. */
  add(tenantId: string): void {
    this.announced?.add(tenantId);
    if (this.tenants === undefined) return; // the next full reload reads it
    const version = ++this.version;
    this.pending.set(tenantId, version);
    void this.readTenant(tenantId, version);
  }

  private async readTenant(tenantId: string, version: number): Promise<void> {
    try {
      const rows = await this.db.$queryRawUnsafe<EndpointRow[]>(`${ENABLED_ENDPOINTS} AND tenant_id = $1::uuid`, tenantId);
      // Applied only if nothing was announced for the tenant since, and the set still stands.
      if (this.pending.get(tenantId) !== version || this.tenants === undefined || !this.listener.listening()) return;
      const filters = rows.map(filterOf);
      if (filters.length) this.tenants.set(tenantId, filters);
      else this.tenants.delete(tenantId);
      this.pending.delete(tenantId);
    } catch (err) {
      // Stays pending (receives everything) until the next full reload.
      this.log.warn({ err, tenant_id: tenantId }, "could not read a tenant's webhook endpoints; its events go through the database");
    }
  }

  /** Read the whole set anew (only while listening: otherwise a notification could be missed after it). */
  async reload(): Promise<void> {
    if (!this.listener.listening()) return;
    const announced = new Set<string>();
    this.announced = announced;
    try {
      const rows = await this.db.$queryRawUnsafe<EndpointRow[]>(ENABLED_ENDPOINTS);
      if (this.announced !== announced || !this.listener.listening()) return; // a newer reload, or the connection was lost meanwhile
      const tenants = new Map<string, EndpointFilter[]>();
      for (const row of rows) {
        const list = tenants.get(row.tenant_id);
        if (list) list.push(filterOf(row));
        else tenants.set(row.tenant_id, [filterOf(row)]);
      }
      this.tenants = tenants;
      // Announcements the snapshot may predate are read again; earlier ones are in it.
      this.pending.clear();
      this.announced = undefined;
      for (const tenantId of announced) this.add(tenantId);
    } catch (err) {
      this.log.warn({ err }, 'could not read the webhook endpoints; fanning out through the database');
      this.tenants = undefined;
      this.pending.clear();
    } finally {
      if (this.announced === announced) this.announced = undefined;
    }
  }
}

const filterOf = (row: EndpointRow): EndpointFilter => ({
  projectId: row.project_id,
  environmentId: row.environment_id,
  types: new Set(row.event_types),
});
