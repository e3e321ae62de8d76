import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import puppeteer, { type Browser, type BrowserContext } from 'puppeteer-core';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';

export interface PoolOptions {
  chromiumPath: string;
  /** Browsers kept running. */
  size: number;
  /** Pages rendered at once in one browser. */
  pagesPerBrowser: number;
  /** A browser is retired after this many pages. */
  maxPages: number;
  /** A browser whose process tree passes this RSS is retired. */
  maxRssBytes: number;
  /** Probe period; a browser that does not answer within it is killed and replaced. */
  healthIntervalMs: number;
  log: Logger;
  metrics: ServiceMetrics;
}

/** The browser died (or was killed as hung) while the job was using it: the attempt is lost, not the job. */
export class BrowserCrashedError extends Error {
  constructor(message = 'the browser process died during the render') {
    super(message);
    this.name = 'BrowserCrashedError';
  }
}

/** No browser could be launched in time. */
export class BrowserUnavailableError extends Error {
  constructor(message = 'no browser is available') {
    super(message);
    this.name = 'BrowserUnavailableError';
  }
}

type RestartReason = 'crash' | 'hang' | 'recycle_pages' | 'recycle_memory';

interface Entry {
  id: number;
  browser: Browser;
  pid: number | undefined;
  userDataDir: string;
  busy: number;
  served: number;
  /** Takes no new pages; closed and replaced when its last page is done. */
  retiring: RestartReason | undefined;
  /** Disconnected: crashed, killed or closed. */
  dead: boolean;
  /** Closed on purpose (retired or stopped): its disconnect is not a crash. */
  closing: boolean;
  lastProbeOk: boolean;
  /** `served` when the tree's memory was last measured: an idle browser's memory does not grow. */
  servedAtRssCheck: number;
}

/** Chromium as this machine and a container run it; `--no-sandbox` because the service runs as root locally and unprivileged in Kubernetes without user namespaces. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-breakpad',
  '--disable-domain-reliability',
  '--disable-features=Translate,MediaRouter,OptimizationHints',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--metrics-recording-only',
  '--mute-audio',
  '--password-store=basic',
  '--use-mock-keychain',
];

/**
 * A bounded pool of Chromium processes. Each job gets a fresh isolated BrowserContext (cookies,
 * storage and cache are never shared between jobs) on a browser with a free page slot. Browsers
 * that crash are replaced; browsers that stop answering the health probe are killed and replaced;
 * browsers that served `maxPages` pages or grew past `maxRssBytes` are retired once idle.
 */
export class BrowserPool {
  private readonly entries: Entry[] = [];
  private readonly waiters: (() => void)[] = [];
  private nextId = 1;
  private launching = 0;
  private failedLaunches = 0;
  private stopped = false;
  private healthTimer: NodeJS.Timeout | undefined;
  private everLaunched = false;
  private readonly gauges;
  private readonly restarts;
  private readonly queueWait;

  constructor(private readonly opts: PoolOptions) {
    const m = opts.metrics;
    this.gauges = {
      browsers: m.gauge('pool_browsers', 'Chromium processes running.', []),
      busy: m.gauge('pool_busy_pages', 'Pages rendering now.', []),
      slots: m.gauge('pool_page_slots', 'Pages the pool can render at once.', []),
    };
    this.restarts = m.counter('browser_restarts_total', 'Browsers replaced, by reason.', ['reason']);
    this.queueWait = m.histogram(
      'render_queue_wait_seconds',
      'Time a job waited for a free page.',
      [],
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    );
    this.gauges.slots.set(opts.size * opts.pagesPerBrowser);
  }

  get slots(): number {
    return this.opts.size * this.opts.pagesPerBrowser;
  }

  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.opts.size }, () => this.launch()));
    this.healthTimer = setInterval(() => void this.probe(), this.opts.healthIntervalMs);
    this.healthTimer.unref();
  }

  /** A browser really launched and answered its last probe. */
  ready(): boolean {
    return this.everLaunched && this.entries.some((e) => !e.dead && e.lastProbeOk);
  }

  /** Process ids of the running browsers (tests and diagnostics). */
  pids(): number[] {
    return this.entries.filter((e) => !e.dead && e.pid !== undefined).map((e) => e.pid!);
  }

  /**
   * Run `fn` with a fresh context on a browser with a free page slot, then close the context. A
   * crash of that browser during `fn` surfaces as BrowserCrashedError.
   */
  async withContext<T>(
    fn: (context: BrowserContext) => Promise<T>,
    opts: { proxyServer?: string; proxyBypassList?: string[]; waitMs: number },
  ): Promise<T> {
    const t0 = performance.now();
    const entry = await this.acquire(opts.waitMs);
    this.queueWait.observe((performance.now() - t0) / 1000);
    let context: BrowserContext | undefined;
    try {
      context = await entry.browser.createBrowserContext({
        downloadBehavior: { policy: 'deny' },
        ...(opts.proxyServer ? { proxyServer: opts.proxyServer } : {}),
        ...(opts.proxyBypassList ? { proxyBypassList: opts.proxyBypassList } : {}),
      });
      return await fn(context);
    } catch (err) {
      if (entry.dead) throw new BrowserCrashedError();
      throw err;
    } finally {
      if (context && !entry.dead) await withTimeout(context.close(), 5_000).catch(() => this.kill(entry, 'hang'));
      this.release(entry);
    }
  }

  /** Kill a browser as hung (or for tests): its jobs fail with BrowserCrashedError and it is replaced. */
  kill(entry: Entry, reason: RestartReason): void {
    if (entry.dead) return;
    this.opts.log.warn({ browser: entry.id, reason }, 'killing browser');
    entry.retiring = reason;
    try {
      entry.browser.process()?.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.healthTimer);
    for (const w of this.waiters.splice(0)) w();
    await Promise.all(this.entries.map((e) => this.close(e)));
  }

  private async acquire(waitMs: number): Promise<Entry> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.stopped) throw new BrowserUnavailableError('the pool is stopping');
      const free = this.entries
        .filter((e) => !e.dead && !e.retiring && e.busy < this.opts.pagesPerBrowser)
        .sort((a, b) => a.busy - b.busy)[0];
      if (free) {
        free.busy++;
        this.gauges.busy.inc();
        return free;
      }
      this.topUp();
      const left = deadline - Date.now();
      if (left <= 0) throw new BrowserUnavailableError();
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 1_000));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  private release(entry: Entry): void {
    entry.busy--;
    entry.served++;
    this.gauges.busy.dec();
    if (!entry.retiring && entry.served >= this.opts.maxPages) entry.retiring = 'recycle_pages';
    if (entry.retiring && entry.busy === 0 && !entry.dead) void this.retire(entry);
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Launch replacements until the pool has its size (counting launches under way). */
  private topUp(): void {
    if (this.stopped) return;
    const alive = this.entries.filter((e) => !e.dead && !e.retiring).length;
    for (let i = alive + this.launching; i < this.opts.size; i++) void this.launch();
  }

  private async launch(): Promise<void> {
    this.launching++;
    try {
      // Back off while launches keep failing (a missing binary, no memory): 0.5 s doubling to 30 s.
      if (this.failedLaunches > 0) await sleep(Math.min(30_000, 500 * 2 ** (this.failedLaunches - 1)));
      if (this.stopped) return;
      const userDataDir = await mkdtemp(join(tmpdir(), 'wdr-chromium-'));
      let browser: Browser;
      try {
        browser = await puppeteer.launch({
          executablePath: this.opts.chromiumPath,
          headless: true,
          userDataDir,
          args: CHROMIUM_ARGS,
          protocolTimeout: 60_000,
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        });
      } catch (err) {
        this.failedLaunches++;
        await rm(userDataDir, { recursive: true, force: true });
        this.opts.log.error({ err, failures: this.failedLaunches }, 'chromium did not launch');
        return;
      }
      this.failedLaunches = 0;
      this.everLaunched = true;
      const entry: Entry = {
        id: this.nextId++,
        browser,
        pid: browser.process()?.pid,
        userDataDir,
        busy: 0,
        served: 0,
        retiring: undefined,
        dead: false,
        closing: false,
        lastProbeOk: true,
        servedAtRssCheck: -1,
      };
      browser.on('disconnected', () => void this.onDisconnected(entry));
      if (this.stopped) {
        await this.close(entry);
        return;
      }
      this.entries.push(entry);
      this.gauges.browsers.set(this.entries.filter((e) => !e.dead).length);
    } finally {
      this.launching--;
      this.wake();
    }
  }

  private async onDisconnected(entry: Entry): Promise<void> {
    if (entry.dead) return;
    entry.dead = true;
    const index = this.entries.indexOf(entry);
    if (index >= 0) this.entries.splice(index, 1);
    this.gauges.browsers.set(this.entries.filter((e) => !e.dead).length);
    await rm(entry.userDataDir, { recursive: true, force: true }).catch(() => undefined);
    if (this.stopped) return;
    if (!entry.closing) {
      const reason = entry.retiring ?? 'crash';
      this.restarts.inc({ reason });
      this.opts.log.warn({ browser: entry.id, reason, busy: entry.busy }, 'browser gone; launching a replacement');
    }
    this.topUp();
    this.wake();
  }

  private async retire(entry: Entry): Promise<void> {
    const reason = entry.retiring!;
    this.restarts.inc({ reason });
    this.opts.log.info({ browser: entry.id, reason, served: entry.served }, 'retiring browser');
    this.topUp();
    await this.close(entry);
  }

  private async close(entry: Entry): Promise<void> {
    if (entry.dead) return;
    entry.closing = true;
    await withTimeout(entry.browser.close(), 5_000).catch(() => entry.browser.process()?.kill('SIGKILL'));
  }

  /** Health: every browser must answer within the interval; the tree's RSS is checked at the same time. */
  private async probe(): Promise<void> {
    for (const entry of [...this.entries]) {
      if (entry.dead || entry.closing) continue;
      try {
        await withTimeout(entry.browser.version(), Math.max(1_000, this.opts.healthIntervalMs - 100));
        entry.lastProbeOk = true;
      } catch {
        entry.lastProbeOk = false;
        this.kill(entry, 'hang');
        continue;
      }
      // Measuring walks /proc: only when the browser rendered something since the last measurement.
      const rendered = entry.served !== entry.servedAtRssCheck || entry.busy > 0;
      if (!rendered) continue;
      entry.servedAtRssCheck = entry.served;
      if (!entry.retiring && entry.pid !== undefined && (await treeRss(entry.pid)) > this.opts.maxRssBytes) {
        entry.retiring = 'recycle_memory';
        if (entry.busy === 0) void this.retire(entry);
      }
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * Memory of a process and all its descendants (Chromium's renderers, GPU and utility processes),
 * from /proc. Proportional set size (PSS): pages shared between Chromium's processes are counted
 * once in total, not once per process as RSS would, so the sum is what the tree really holds.
 */
export async function treeRss(rootPid: number): Promise<number> {
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name (which may contain spaces) start after the last ')'.
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  let total = 0;
  const stack = [rootPid];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    total += await pssOf(pid);
    for (const [child, parent] of parents) if (parent === pid) stack.push(child);
  }
  return total;
}

async function pssOf(pid: number): Promise<number> {
  try {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
