import { execFile, execFileSync } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import puppeteer, { type Browser, type BrowserContext } from 'puppeteer-core';
import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';
import { coalescePipeWrites } from './cdp-pipe.js';
import { treeMemory, type PssReading } from './process-memory.js';
import type { EgressGate } from './egress-gate.js';

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
  /**
   * How often a busy browser's process tree RSS is measured (default 2 s): past `maxRssBytes` it is
   * retired once idle; past twice that it is killed at once (its pages fail and are retried
   * elsewhere) before one page takes the pod down.
   */
  memoryCheckMs?: number;
  log: Logger;
  metrics: ServiceMetrics;
  /** Every connection of every browser goes through it (started with the pool). */
  gate: EgressGate;
  /**
   * When the service runs as root (a development machine), Chromium is started as this user
   * (`name` or `uid:gid`), because its sandbox refuses to run as root. Ignored otherwise. Default `nobody`.
   */
  chromiumUser?: string;
  /**
   * Development only: when Chromium cannot start with its sandbox, start it with --no-sandbox
   * instead of refusing to start. Default false.
   */
  allowNoSandbox?: boolean;
}

/** Chromium could not start with its sandbox, and running without it is not allowed. */
export class SandboxUnavailableError extends Error {
  constructor(detail: string) {
    super(
      `Chromium cannot start with its sandbox (${detail}); the renderer refuses to start. ` +
        'Fix what the sandbox needs (docs/operations.md, "Chromium sandbox"), or set CHROMIUM_ALLOW_NO_SANDBOX=true on a development machine.',
    );
    this.name = 'SandboxUnavailableError';
  }
}

/** How the pool's browsers run: reported in /readyz. */
export interface SandboxState {
  sandboxed: boolean;
  /** The uid Chromium runs as. */
  uid: number;
  detail: string;
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
  /** The tree's last exact memory reading (PSS), which later checks scale by its RSS (process-memory.ts). */
  lastPss: PssReading | undefined;
}

/**
 * Chromium as this machine and a container run it: with its sandbox (namespace sandbox: user, PID
 * and network namespaces plus seccomp-bpf for renderers), never as root.
 */
const CHROMIUM_ARGS = [
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
  // No target name is resolved by Chromium: every name goes to the egress gate. Names it would
  // resolve itself (a bypass, a prefetch) do not resolve; 127.0.0.1 is the gate's literal address.
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  // WebRTC may not send UDP around the proxy (TCP through the proxy only, which the gate judges).
  // This switch is read by content_shell and the old headless mode only; what holds in Chrome's
  // headless mode is the profile preference below (measured: a STUN probe to a loopback victim
  // sends 4 datagrams with the switch alone, none with the preference, in new contexts too).
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** The WebRTC policy as a profile preference, which every context of the browser inherits. */
const PROFILE_PREFERENCES = {
  webrtc: { ip_handling_policy: 'disable_non_proxied_udp', multiple_routes_enabled: false, nonproxied_udp_enabled: false },
};

/** The whole environment Chromium gets: none of the service's (database URL, keys, solver key). */
function chromiumEnv(userDataDir: string): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: userDataDir,
    XDG_CONFIG_HOME: userDataDir,
    XDG_CACHE_HOME: userDataDir,
    TMPDIR: userDataDir,
    LANG: 'C.UTF-8',
  };
}

/** `uid:gid` or a user name (its primary group). */
export function resolveUser(spec: string): { uid: number; gid: number } {
  const numeric = /^(\d+):(\d+)$/.exec(spec);
  if (numeric) return { uid: Number(numeric[1]), gid: Number(numeric[2]) };
  const id = (flag: string) => Number(execFileSync('id', [flag, spec], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

const SETPRIV = '/usr/bin/setpriv';

/** setpriv's arguments up to the program: that user and group only, no capabilities, no privilege gain. */
function setprivArgs(runAs: { uid: number; gid: number }): string[] {
  return [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--inh-caps=-all', '--no-new-privs', '--'];
}

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
  private memoryTimer: NodeJS.Timeout | undefined;
  private everLaunched = false;
  /** Decided at start: the user Chromium runs as (when the service is root), and whether it runs without its sandbox. */
  private runAs: { uid: number; gid: number } | undefined;
  private unsandboxed = false;
  private sandboxDetail = 'not started';
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

  /**
   * Start the gate and the browsers. The first launch decides the sandbox: a Chromium that cannot
   * start sandboxed makes start() throw (SandboxUnavailableError) unless allowNoSandbox is set.
   */
  async start(): Promise<void> {
    await this.opts.gate.start();
    try {
      await this.startBrowsers();
    } catch (err) {
      // A pool that refuses to start leaves nothing behind: no browser, no gate listening.
      await this.stop();
      throw err;
    }
  }

  private async startBrowsers(): Promise<void> {
    const allow = this.opts.allowNoSandbox === true;
    const user = this.opts.chromiumUser ?? 'nobody';
    if (process.getuid?.() === 0) {
      try {
        if (!user) throw new Error('the service runs as root and CHROMIUM_USER is empty');
        this.runAs = resolveUser(user);
        if (this.runAs.uid === 0) throw new Error('CHROMIUM_USER is root');
      } catch (err) {
        if (!allow) throw new SandboxUnavailableError((err as Error).message);
        this.runAs = undefined;
        this.unsandboxed = true;
        this.sandboxDetail = `DISABLED (CHROMIUM_ALLOW_NO_SANDBOX=true): ${(err as Error).message}`;
      }
    }
    const failure = await this.launch();
    // Over a pipe puppeteer's error does not carry Chromium's stderr: ask Chromium once more, alone.
    const sandboxProblem = failure && !this.unsandboxed ? await this.sandboxFailure() : undefined;
    if (sandboxProblem) {
      if (!allow) throw new SandboxUnavailableError(sandboxProblem);
      this.unsandboxed = true;
      this.sandboxDetail = `DISABLED (CHROMIUM_ALLOW_NO_SANDBOX=true): ${sandboxProblem}`;
      this.failedLaunches = 0;
      await this.launch();
    }
    if (!this.unsandboxed) {
      this.sandboxDetail = `sandboxed, as uid ${this.runAs?.uid ?? process.getuid?.() ?? 'unknown'}`;
    } else {
      this.opts.log.warn({ detail: this.sandboxDetail }, 'Chromium runs WITHOUT its sandbox (development setting)');
    }
    await Promise.all(Array.from({ length: this.opts.size - 1 }, () => this.launch()));
    this.healthTimer = setInterval(() => void this.probe(), this.opts.healthIntervalMs);
    this.healthTimer.unref();
    this.memoryTimer = setInterval(() => void this.checkMemory(), this.opts.memoryCheckMs ?? 2_000);
    this.memoryTimer.unref();
  }

  /**
   * After a failed launch: start Chromium once as the pool does (same user, same sandbox) to dump a
   * blank page, and return the line of its stderr that names the sandbox if that is why it failed.
   */
  private async sandboxFailure(): Promise<string | undefined> {
    const userDataDir = await mkdtemp(join(tmpdir(), 'wdr-chromium-probe-'));
    try {
      const runAs = this.runAs;
      if (runAs) await chown(userDataDir, runAs.uid, runAs.gid);
      const chromeArgs = ['--headless', '--disable-gpu', `--user-data-dir=${userDataDir}`, '--dump-dom', 'about:blank'];
      const [cmd, args] = runAs
        ? [SETPRIV, [...setprivArgs(runAs), this.opts.chromiumPath, ...chromeArgs]]
        : [this.opts.chromiumPath, chromeArgs];
      const stderr = await new Promise<string>((resolve) => {
        execFile(cmd, args, { env: chromiumEnv(userDataDir), timeout: 30_000 }, (err, _out, errText) =>
          resolve(err ? String(errText) + String(err.message) : ''),
        );
      });
      return /sandbox/i.test(stderr) ? firstLine(stderr) : undefined;
    } finally {
      await removeProfile(userDataDir);
    }
  }

  /** Whether the browsers run sandboxed, and as whom: for /readyz. */
  sandbox(): SandboxState {
    return { sandboxed: !this.unsandboxed, uid: this.runAs?.uid ?? process.getuid?.() ?? -1, detail: this.sandboxDetail };
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
   * crash of that browser during `fn` surfaces as BrowserCrashedError. `proxyServer` is the
   * render's route through the egress gate (EgressGate.open).
   */
  async withContext<T>(fn: (context: BrowserContext) => Promise<T>, opts: { proxyServer: string; waitMs: number }): Promise<T> {
    const t0 = performance.now();
    const entry = await this.acquire(opts.waitMs);
    this.queueWait.observe((performance.now() - t0) / 1000);
    let context: BrowserContext | undefined;
    try {
      context = await entry.browser.createBrowserContext({
        downloadBehavior: { policy: 'deny' },
        // The render's route through the egress gate; loopback too (Chromium bypasses proxies for it by default).
        proxyServer: opts.proxyServer,
        proxyBypassList: ['<-loopback>'],
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
    clearInterval(this.memoryTimer);
    for (const w of this.waiters.splice(0)) w();
    await Promise.all(this.entries.map((e) => this.close(e)));
    await this.opts.gate.stop();
  }

  /** The gate the browsers' connections go through. */
  get gate(): EgressGate {
    return this.opts.gate;
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

  /** Launch one browser; resolves the launch error when it failed (it is logged and retried with back-off). */
  private async launch(): Promise<Error | undefined> {
    this.launching++;
    try {
      // Back off while launches keep failing (a missing binary, no memory): 0.5 s doubling to 30 s.
      if (this.failedLaunches > 0) await sleep(Math.min(30_000, 500 * 2 ** (this.failedLaunches - 1)));
      if (this.stopped) return undefined;
      const userDataDir = await mkdtemp(join(tmpdir(), 'wdr-chromium-'));
      let browser: Browser;
      try {
        await mkdir(join(userDataDir, 'Default'));
        await writeFile(join(userDataDir, 'Default', 'Preferences'), JSON.stringify(PROFILE_PREFERENCES));
        const runAs = this.runAs;
        if (runAs) {
          for (const path of [userDataDir, join(userDataDir, 'Default'), join(userDataDir, 'Default', 'Preferences')]) {
            await chown(path, runAs.uid, runAs.gid);
          }
        }
        const chromeArgs = (
          await puppeteer.defaultArgs({
            headless: true,
            userDataDir,
            args: [
              ...CHROMIUM_ARGS,
              // Everything through the egress gate, loopback included; contexts name their own route
              // (a token), so what has none (the default context, the browser's own requests) is refused.
              `--proxy-server=${this.opts.gate.proxyServer}`,
              '--proxy-bypass-list=<-loopback>',
              ...(this.unsandboxed ? ['--no-sandbox'] : []),
            ],
          })
        )
          // Sandboxed means sandboxed, whatever PUPPETEER_DANGEROUS_NO_SANDBOX says.
          .filter((a) => this.unsandboxed || a !== '--no-sandbox');
        browser = await puppeteer.launch({
          // As root: dropped to the unprivileged user before Chromium runs (setpriv execs it: same pid).
          executablePath: runAs ? SETPRIV : this.opts.chromiumPath,
          ignoreDefaultArgs: true,
          args: runAs ? [...setprivArgs(runAs), this.opts.chromiumPath, ...chromeArgs] : chromeArgs,
          headless: true,
          // DevTools over a pipe (fds 3 and 4), no TCP port; and none of the service's environment.
          pipe: true,
          env: chromiumEnv(userDataDir),
          protocolTimeout: 60_000,
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        });
      } catch (err) {
        this.failedLaunches++;
        await removeProfile(userDataDir);
        this.opts.log.error({ err, failures: this.failedLaunches }, 'chromium did not launch');
        return err instanceof Error ? err : new Error(String(err));
      }
      this.failedLaunches = 0;
      this.everLaunched = true;
      // Each DevTools command in one write to Chromium's pipe (fd 3), not two (cdp-pipe.ts).
      coalescePipeWrites(browser.process()?.stdio[3] as Writable | null | undefined);
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
        lastPss: undefined,
      };
      browser.on('disconnected', () => void this.onDisconnected(entry));
      if (this.stopped) {
        await this.close(entry);
        return undefined;
      }
      this.entries.push(entry);
      this.gauges.browsers.set(this.entries.filter((e) => !e.dead).length);
      return undefined;
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
    await removeProfile(entry.userDataDir);
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
    }
  }

  /** Memory: the tree's RSS of every browser that rendered since the last measurement (checkMemory's interval). */
  private async checkMemory(): Promise<void> {
    for (const entry of [...this.entries]) {
      if (entry.dead || entry.closing) continue;
      // Measuring walks /proc: only when the browser rendered something since the last measurement.
      const rendered = entry.served !== entry.servedAtRssCheck || entry.busy > 0;
      if (!rendered || entry.pid === undefined) continue;
      entry.servedAtRssCheck = entry.served;
      // Compared with the bound only: PSS is read only when the summed RSS is over it, and then at
      // most every PSS_READING_MAX_AGE_MS while the last reading, scaled, stays well under it.
      const { bytes: rss, reading } = await treeMemory(entry.pid, this.opts.maxRssBytes, entry.lastPss);
      entry.lastPss = reading;
      if (rss > 2 * this.opts.maxRssBytes && entry.busy > 0) {
        this.kill(entry, 'recycle_memory');
      } else if (!entry.retiring && rss > this.opts.maxRssBytes) {
        entry.retiring = 'recycle_memory';
        if (entry.busy === 0) void this.retire(entry);
      }
    }
  }
}

function firstLine(text: string): string {
  return (text.split('\n').find((l) => /sandbox/i.test(l)) ?? text.split('\n')[0] ?? '').trim().slice(0, 300);
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
 * Remove a browser's profile directory. Chromium's crash handler can still be writing into it for a
 * moment after a failed launch (ENOTEMPTY on "Crash Reports"): retried a few times, and a directory
 * that still will not go is left for the temp cleaner rather than turning a launch failure into
 * another error.
 */
async function removeProfile(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
}
