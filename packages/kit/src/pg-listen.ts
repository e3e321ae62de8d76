import pg from 'pg';
import type { Logger } from './log.js';

/** Connection settings for a service's database URL (with `?schema=`, as Prisma takes it). */
export function pgConnectionFor(databaseUrl: string): { schema: string; config: pg.ClientConfig } {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema') ?? 'public';
  url.searchParams.delete('schema');
  return {
    schema,
    config: { connectionString: url.toString(), options: `-c search_path=${schema}`, connectionTimeoutMillis: 5_000, keepAlive: true },
  };
}

/**
 * One `LISTEN` connection of its own, kept open: reconnects a second after it breaks. Postgres
 * delivers a `NOTIFY` at commit (never for a rolled-back transaction) to every session listening
 * at that moment; one sent while this connection was down is lost, so `onListening` runs after
 * every (re)connection for the caller to catch up (drain, or drop what it cached).
 */
export class PgListener {
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly opts: {
      connection: pg.ClientConfig;
      channel: string;
      log: Logger;
      onNotify: (payload: string) => void;
      onListening?: () => void;
      /** Runs when a listening connection is lost (before the reconnection). */
      onLost?: () => void;
      /**
       * Every this many ms the listening connection must answer a `SELECT 1` within
       * `heartbeatTimeoutMs`, or it counts as lost (onLost, then a new one): a connection that died
       * silently (a dropped NAT entry, a frozen peer) delivers no notification and no error either.
       * Default 5,000; 0 turns it off.
       */
      heartbeatMs?: number;
      /** Default 2,000. */
      heartbeatTimeoutMs?: number;
    },
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(opts.channel)) throw new Error(`not a plain channel name: ${opts.channel}`);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  /** True while a connection is listening: every notification from now on will arrive. */
  listening(): boolean {
    return this.client !== undefined;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (!this.running) return;
    const client = new pg.Client(this.opts.connection);
    let lost = false;
    let heartbeat: NodeJS.Timeout | undefined;
    const reconnect = (err?: unknown) => {
      if (lost) return;
      lost = true;
      if (heartbeat) clearInterval(heartbeat);
      if (err && this.running) this.opts.log.warn({ err, channel: this.opts.channel }, 'listening connection lost, reconnecting');
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      // A silently dead peer never answers the goodbye: the socket is dropped rather than left waiting.
      (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
      if (this.client === client) {
        this.client = undefined;
        this.opts.onLost?.();
      }
      if (!this.running || this.retry) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        void this.connect();
      }, 1_000);
    };
    client.on('error', reconnect);
    client.on('end', () => reconnect());
    client.on('notification', (n) => {
      if (n.channel === this.opts.channel) this.opts.onNotify(n.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.opts.channel}`);
      if (lost || !this.running) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.opts.onListening?.();
      const every = this.opts.heartbeatMs ?? 5_000;
      if (every > 0) {
        const timeoutMs = this.opts.heartbeatTimeoutMs ?? 2_000;
        let inFlight = false;
        heartbeat = setInterval(() => {
          if (inFlight) return;
          inFlight = true;
          let timer: NodeJS.Timeout | undefined;
          const timedOut = new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer to the heartbeat within ${timeoutMs} ms`)), timeoutMs);
          });
          Promise.race([client.query('SELECT 1'), timedOut])
            .then(
              () => undefined,
              (err: unknown) => reconnect(err),
            )
            .finally(() => {
              clearTimeout(timer);
              inFlight = false;
            });
        }, every);
        heartbeat.unref();
      }
    } catch (err) {
      reconnect(err);
    }
  }
}

/** A pool of plain node-postgres connections (see pgPoolFor). */
export type PgPool = pg.Pool;

/**
 * A small pool of plain node-postgres connections to a service's database, beside its Prisma
 * client: kit/pg-sql.ts's hot statements, and writing bytes (node-postgres sends a Buffer as a
 * binary parameter as it is, where Prisma's raw queries carry bytes as base64 text). A caller waits
 * at most 5 s for a connection (pgConnectionFor's `connectionTimeoutMillis`). The caller ends it
 * (`end()`) when it stops.
 */
export function pgPoolFor(
  databaseUrl: string,
  opts: {
    max?: number;
    idleTimeoutMillis?: number;
    onError?: (err: Error) => void;
    types?: pg.CustomTypesConfig;
    /** Settings for every session of the pool (`-c name=value` in the startup packet). */
    settings?: Record<string, string>;
    /**
     * node-postgres's pipeline mode: queries queued on a connection are written without waiting
     * for the answers of those before them (each still gets its own answer, in order).
     */
    pipeline?: boolean;
  } = {},
): pg.Pool {
  const { config } = pgConnectionFor(databaseUrl);
  const settings = Object.entries(opts.settings ?? {}).map(([k, v]) => ` -c ${k}=${v}`);
  const pool = new pg.Pool({
    ...config,
    options: `${config.options ?? ''}${settings.join('')}`,
    max: opts.max ?? 4,
    ...(opts.idleTimeoutMillis !== undefined ? { idleTimeoutMillis: opts.idleTimeoutMillis } : {}),
    ...(opts.types ? { types: opts.types } : {}),
    ...(opts.pipeline ? { pipeline: true } : {}),
  } as pg.PoolConfig);
  // An idle connection that breaks is dropped by the pool; unhandled, its error would end the process.
  pool.on('error', (err) => opts.onError?.(err));
  // So would one that breaks while checked out between two queries (a transaction's connection while
  // the server goes away): the pool listens only to idle ones. Its next query fails, and its holder
  // releases it with that error (the pool then drops it).
  pool.on('connect', (client) => client.on('error', (err) => opts.onError?.(err)));
  return pool;
}
