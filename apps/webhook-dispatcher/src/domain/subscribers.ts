import type { Logger } from '@wdr/kit/log';
import { PgListener, pgConnectionFor } from '@wdr/kit/pg-listen';
import type { RawSql } from '@wdr/kit/db';

/**
 * The tenants that have at least one enabled webhook endpoint, kept in memory so the fan-out can
 * skip, without a transaction, the events of every other tenant (most request events of the
 * fleet). A new or re-enabled endpoint announces its tenant at commit (`wdr_webhook_subscribers`,
 * trigger on webhook_endpoints), and the dispatcher that created it adds it at once; a periodic
 * reload prunes tenants whose endpoints are all gone.
 *
 * Whenever the set may be incomplete (before the first load, while the listening connection is
 * down, and until the reload after it is back) `mayReceive` answers true for everyone: the fan-out
 * then asks the database, as it would without this set. So the set can only save work, never drop
 * an event of a subscribed tenant; the one window left is the milliseconds between another
 * replica's commit of a new endpoint and its notification reaching this one.
 */
export class Subscribers {
  private tenants: Set<string> | undefined;
  /** Tenants announced while a reload was reading: merged into its result (it may predate them). */
  private announced: Set<string> | undefined;
  private readonly listener: PgListener;
  private readonly schema: string;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: RawSql,
    databaseUrl: string,
    private readonly log: Logger,
    private readonly reloadEveryMs = 60_000,
  ) {
    const { schema, config } = pgConnectionFor(databaseUrl);
    this.schema = schema;
    this.listener = new PgListener({
      connection: config,
      channel: 'wdr_webhook_subscribers',
      log,
      onNotify: (payload) => {
        const [schemaName, tenantId] = payload.split(':');
        if (schemaName === this.schema && tenantId) this.add(tenantId);
      },
      onListening: () => void this.reload(),
      onLost: () => {
        this.tenants = undefined;
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

  /** False only when the tenant is known to have no enabled endpoint. */
  mayReceive(tenantId: string): boolean {
    return this.tenants === undefined || this.tenants.has(tenantId);
  }

  /** A tenant that has (or may just have got) an enabled endpoint. */
  add(tenantId: string): void {
    this.tenants?.add(tenantId);
    this.announced?.add(tenantId);
  }

  /** Read the set anew (only while listening: otherwise a notification could be missed after it). */
  async reload(): Promise<void> {
    if (!this.listener.listening()) return;
    const announced = new Set<string>();
    this.announced = announced;
    try {
      const rows = await this.db.$queryRawUnsafe<{ tenant_id: string }[]>(
        `SELECT DISTINCT tenant_id::text AS tenant_id FROM webhook_endpoints WHERE status = 'enabled'`,
      );
      if (this.announced !== announced || !this.listener.listening()) return; // a newer reload, or the connection was lost meanwhile
      this.tenants = new Set([...rows.map((r) => r.tenant_id), ...announced]);
    } catch (err) {
      this.log.warn({ err }, 'could not read the tenants with webhook endpoints; fanning out through the database');
      this.tenants = undefined;
    } finally {
      if (this.announced === announced) this.announced = undefined;
    }
  }
}
