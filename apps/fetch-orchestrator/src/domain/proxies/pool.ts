import CircuitBreaker from 'opossum';
import type { ProxyNetworkTypeName } from '@wdr/contracts';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import { PgListener } from '@wdr/kit/pg-listen';
import type { Sealer } from '@wdr/kit/sealing';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { openExitUrl } from './exits.js';

/** One usable exit, its URL opened (credentials included: never log `url`). */
export interface ProxyExit {
  id: string;
  label: string;
  networkClass: ProxyNetworkTypeName;
  url: URL;
  country: string | null;
  countryAuthoritative: boolean;
  /** Runs work through this exit; opens after repeated exit failures and sheds it for a while. */
  breaker: CircuitBreaker<[() => Promise<unknown>], unknown>;
}

/** The exit itself failed (refused, reset, rejected our credentials): counts against its health. */
export class ExitFailure extends Error {
  constructor(
    message: string,
    readonly exitLabel: string,
  ) {
    super(message);
  }
}

export interface PoolOptions {
  /** Failures in the rolling window, in percent, that open an exit's breaker. */
  errorThresholdPercentage: number;
  /** How long an open exit is left alone before one trial request. */
  resetTimeoutMs: number;
  /** Calls in the window before the percentage applies. */
  volumeThreshold: number;
}

/** How one try through an exit ended (metrics). */
export type AttemptOutcome = 'ok' | 'exit_failed' | 'shed' | 'geo_mismatch';

export const DEFAULT_POOL_OPTIONS: PoolOptions = { errorThresholdPercentage: 50, resetTimeoutMs: 30_000, volumeThreshold: 2 };

/**
 * The enabled exits of every network class, kept in memory (the hot path reads no table) and
 * reloaded when the table changes (NOTIFY wdr_proxy_exits at commit, see the migration) and every
 * minute. Each exit has an opossum breaker: only ExitFailure counts against it (a target's 404 or
 * timeout says nothing about the exit), and an open breaker takes the exit out of rotation until
 * its trial request succeeds. A reload keeps the breaker of an exit whose URL did not change.
 */
export class ProxyPool {
  private exits: ProxyExit[] = [];
  private loaded = false;
  private firstLoad: Promise<void> | undefined;
  private listener: PgListener | undefined;
  private timer: NodeJS.Timeout | undefined;

  private readonly attempts: ReturnType<ServiceMetrics['counter']> | undefined;
  private readonly exitsGauge: ReturnType<ServiceMetrics['gauge']> | undefined;

  constructor(
    private readonly db: PrismaClient,
    private readonly sealer: Sealer,
    private readonly log: Logger,
    private readonly opts: PoolOptions = DEFAULT_POOL_OPTIONS,
    metrics?: ServiceMetrics,
  ) {
    this.attempts = metrics?.counter(
      'proxy_exit_attempts_total',
      'Tries through a proxy exit, by network class and outcome (ok, exit_failed, shed by an open breaker, geo_mismatch).',
      ['network_class', 'outcome'],
    );
    this.exitsGauge = metrics?.gauge(
      'proxy_exits',
      'Enabled proxy exits, by network class and state (healthy, or open: out of rotation after failures).',
      ['network_class', 'state'],
    );
  }

  record(networkClass: ProxyNetworkTypeName, outcome: AttemptOutcome): void {
    this.attempts?.inc({ network_class: networkClass, outcome });
  }

  private refreshGauge(): void {
    if (!this.exitsGauge) return;
    this.exitsGauge.reset();
    for (const e of this.exits) this.exitsGauge.inc({ network_class: e.networkClass, state: e.breaker.opened ? 'open' : 'healthy' });
  }

  async reload(): Promise<void> {
    const rows = await this.db.proxyExit.findMany({ where: { enabled: true }, orderBy: { label: 'asc' } });
    const before = new Map(this.exits.map((e) => [e.id, e]));
    const next: ProxyExit[] = [];
    for (const row of rows) {
      let url: URL;
      try {
        url = new URL(openExitUrl(this.sealer, row));
      } catch (err) {
        this.log.error({ err, exit: row.label }, 'proxy exit cannot be opened with the current key; skipped');
        continue;
      }
      const old = before.get(row.id);
      const breaker = old && old.url.href === url.href ? old.breaker : this.breakerFor(row.label);
      next.push({
        id: row.id,
        label: row.label,
        networkClass: row.networkClass as ProxyNetworkTypeName,
        url,
        country: row.country,
        countryAuthoritative: row.countryAuthoritative,
        breaker,
      });
    }
    for (const old of before.values()) if (!next.some((e) => e.breaker === old.breaker)) old.breaker.shutdown();
    this.exits = next;
    this.loaded = true;
    this.refreshGauge();
  }

  private breakerFor(label: string): ProxyExit['breaker'] {
    const breaker = new CircuitBreaker(async (work: () => Promise<unknown>) => work(), {
      timeout: false,
      errorThresholdPercentage: this.opts.errorThresholdPercentage,
      resetTimeout: this.opts.resetTimeoutMs,
      volumeThreshold: this.opts.volumeThreshold,
      rollingCountTimeout: 60_000,
      errorFilter: (err: unknown) => !(err instanceof ExitFailure),
    });
    breaker.on('open', () => {
      this.log.warn({ exit: label }, 'proxy exit failing: taken out of rotation');
      this.refreshGauge();
    });
    breaker.on('close', () => {
      this.log.info({ exit: label }, 'proxy exit healthy again');
      this.refreshGauge();
    });
    return breaker;
  }

  /** Resolves once the exits were read at least once (the first caller triggers the read). */
  ready(): Promise<void> {
    if (this.loaded) return Promise.resolve();
    this.firstLoad ??= this.reload().catch((err: unknown) => {
      this.firstLoad = undefined;
      throw err;
    });
    return this.firstLoad;
  }

  /** Follow changes: NOTIFY at commit (reload at once), and a periodic reload as a safety net. */
  watch(connection: ConstructorParameters<typeof PgListener>[0]['connection'], everyMs = 60_000): void {
    const reload = (): void => {
      void this.reload().catch((err: unknown) => this.log.warn({ err }, 'proxy exits reload failed'));
    };
    // The pool also reloads every `everyMs`: a quietly dead listener delays a change, loses none.
    this.listener = new PgListener({
      connection,
      channel: 'wdr_proxy_exits',
      log: this.log,
      onNotify: reload,
      onListening: reload,
      heartbeatMs: 30_000,
    });
    this.listener.start();
    this.timer = setInterval(reload, everyMs);
    this.timer.unref();
  }

  /** Whether the class has any enabled exit at all (healthy or not). */
  has(networkClass: ProxyNetworkTypeName): boolean {
    return this.exits.some((e) => e.networkClass === networkClass);
  }

  /**
   * The exits to try for a request, in order: healthy ones first (open breakers last, so a class
   * whose exits all failed still gets a trial), random within each group so load spreads. With a
   * country: exits labelled with it first, then unlabelled ones (verified through an IP lookup);
   * exits labelled with another country are never candidates.
   */
  candidates(networkClass: ProxyNetworkTypeName, country: string | null): ProxyExit[] {
    const ofClass = this.exits.filter((e) => e.networkClass === networkClass);
    const groups: ProxyExit[][] =
      country === null ? [ofClass] : [ofClass.filter((e) => e.country === country), ofClass.filter((e) => e.country === null)];
    const ordered: ProxyExit[] = [];
    for (const group of groups) {
      const shuffled = shuffle(group);
      ordered.push(...shuffled.filter((e) => !e.breaker.opened), ...shuffled.filter((e) => e.breaker.opened));
    }
    return ordered;
  }

  async shutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.listener?.stop();
    for (const e of this.exits) e.breaker.shutdown();
    this.exits = [];
  }
}

function shuffle<T>(items: T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}
