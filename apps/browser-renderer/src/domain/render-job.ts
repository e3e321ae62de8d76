import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { BrowserContext, HTTPRequest, Page } from 'puppeteer-core';
import type { RenderFailureCode, RenderJob, RenderMeta, RenderResult } from '@wdr/contracts';
import { challengeVendorOf } from '@wdr/kit/protection';
import type { TargetPolicy } from '@wdr/kit/target-policy';
import { ActionFailedError, runActions, waitForText, type ActionOutcome, type GuardCounters } from './browser-actions.js';
import type { BrowserPool } from './browser-pool.js';
import { geoProfileOf } from './geo-profiles.js';
import { siteLightBlocks } from './resource-policy.js';

/** The spec's bound on wait_for_selector (and, here, on every wait): min(timeout_ms, 30 s). */
const WAIT_BOUND_MS = 30_000;
/** Network quiet time after `load` that counts as the page having settled. */
export const SETTLE_IDLE_MS = 200;

/** What a failed render leaves for its debug artifacts (never page content, URLs, headers or cookies). */
export interface FailureEvidence {
  screenshot: Buffer | undefined;
  report: Record<string, unknown>;
}

export interface RenderOutput {
  result: RenderResult;
  /** Present for failures: what debug artifacts are made of, if the submission asked for them. */
  evidence?: FailureEvidence;
}

class RenderFailure extends Error {
  constructor(
    readonly code: RenderFailureCode,
    message: string,
    readonly causedBy: 'tenant' | 'target' | 'platform',
    readonly statusCode?: number,
  ) {
    super(message);
    this.name = 'RenderFailure';
  }
}

/**
 * Render one job in a fresh isolated context of the pool: navigate, wait, run the actions, take
 * the rendered DOM and its text. Every outcome the tenant can cause or the target can answer is a
 * `failed` result with its code; a crash of the browser propagates (BrowserCrashedError) so the
 * caller can retry the attempt.
 */
export async function renderJob(pool: BrowserPool, job: RenderJob, policy: TargetPolicy): Promise<RenderOutput> {
  const o = job.options;
  const t0 = Date.now();
  const deadline = t0 + o.timeout_ms;
  const requests: Record<string, number> = {};
  const blockedRequests: Record<string, number> = {};
  const guard: GuardCounters = { navigations: 0, popups: 0, downloads: 0 };
  const timings: Record<string, number> = {};
  let consoleErrors = 0;
  let siteLight = false;
  let challenge = false;
  const outcomes: ActionOutcome[] = [];
  let page: Page | undefined;
  let country: string | null = null;

  const meta = (): RenderMeta => ({
    stage: 'browser',
    elapsed_ms: Date.now() - t0,
    javascript: o.javascript,
    resource_policy: { requested: o.resource_policy, applied: siteLight ? 'site-light' : 'full', blocked_requests: { ...blockedRequests } },
    requests: { ...requests },
    ...(o.browser_actions.length > 0
      ? {
          actions: {
            run: outcomes.length,
            failed: outcomes.filter((a) => a.outcome === 'failed').length,
            blocked: outcomes.filter((a) => a.outcome === 'blocked').length,
            elapsed_ms: outcomes.reduce((n, a) => n + a.ms, 0),
          },
        }
      : {}),
    challenge,
    console_errors: consoleErrors,
    country,
  });

  const evidence = async (): Promise<FailureEvidence | undefined> => {
    if (!o.debug_artifacts) return undefined;
    let screenshot: Buffer | undefined;
    if (page && !page.isClosed()) {
      screenshot = await withDeadline(page.screenshot({ type: 'png' }).then((b) => Buffer.from(b)), 5_000).catch(() => undefined);
    }
    return {
      screenshot,
      report: {
        timings_ms: { ...timings, total: Date.now() - t0 },
        actions: outcomes.map(({ index, type, outcome, ms, reason }) => ({ index, type, outcome, ms, ...(reason ? { reason } : {}) })),
        requests_by_type: { ...requests },
        blocked_by_type: { ...blockedRequests },
        stopped_attempts: { ...guard },
        console_errors: consoleErrors,
        resource_policy: siteLight ? 'site-light' : 'full',
      },
    };
  };

  const fail = async (f: RenderFailure): Promise<RenderOutput> => {
    const ev = await evidence();
    return {
      result: { outcome: 'failed', code: f.code, message: f.message, caused_by: f.causedBy, ...(f.statusCode ? { status_code: f.statusCode } : {}), meta: meta() },
      ...(ev ? { evidence: ev } : {}),
    };
  };

  const dnsCache = new Map<string, Promise<boolean>>();
  /** SSRF: the target policy on every request the page makes (literal IPs and resolved names). */
  const allowed = (url: string): Promise<boolean> => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return Promise.resolve(false);
    }
    if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') return Promise.resolve(true);
    if (policy.checkUrl(u)) return Promise.resolve(false);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return Promise.resolve(true);
    let known = dnsCache.get(host);
    if (!known) {
      // Resolved here and again by Chromium: a name that changes its answer in between (DNS
      // rebinding) is not caught by this check; the NetworkPolicy egress rules are the backstop.
      known = lookup(host, { all: true })
        .then((addrs) => addrs.length > 0 && addrs.every((a) => policy.addressAllowed(a.address)))
        .catch(() => true); // unresolvable: let Chromium fail it as unreachable
      dnsCache.set(host, known);
    }
    return known;
  };

  const run = async (context: BrowserContext): Promise<RenderOutput> => {
    page = await context.newPage();
    const p = page;
    p.setDefaultTimeout(o.timeout_ms);
    p.setDefaultNavigationTimeout(o.timeout_ms);
    p.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors++;
    });
    p.on('pageerror', () => consoleErrors++);
    p.on('popup', (popup) => {
      guard.popups++;
      void popup?.close().catch(() => undefined);
    });
    const target = new URL(job.url);
    if (!o.javascript) await p.setJavaScriptEnabled(false);
    if (o.user_agent) await p.setUserAgent({ userAgent: o.user_agent });
    if (Object.keys(o.headers).length > 0) await p.setExtraHTTPHeaders(o.headers);
    const cookies = Object.entries(o.cookies);
    if (cookies.length > 0) await context.setCookie(...cookies.map(([name, value]) => ({ name, value, domain: target.hostname, path: '/' })));
    if (job.route.proxy?.username !== undefined) await p.authenticate({ username: job.route.proxy.username, password: job.route.proxy.password ?? '' });
    const geo = geoProfileOf(job.route.country);
    if (geo) {
      await p.emulateTimezone(geo.timezone);
      await context.overridePermissions(target.origin, ['geolocation']);
      await p.setGeolocation({ latitude: geo.latitude, longitude: geo.longitude });
      country = job.route.country;
    }
    if (o.browser_actions.length > 0) await installGuard(p, guard);

    let loaded = false;
    let mainBlocked = false;
    await p.setRequestInterception(true);
    p.on('request', (req: HTTPRequest) => void intercept(req));
    const intercept = async (req: HTTPRequest) => {
      if (req.isInterceptResolutionHandled()) return;
      const type = req.resourceType();
      requests[type] = (requests[type] ?? 0) + 1;
      const mainNavigation = req.isNavigationRequest() && req.frame() === p.mainFrame();
      try {
        if (mainNavigation && loaded) {
          // The page may not leave: a navigating click, a script redirect, a download link.
          guard.navigations++;
          return await req.abort('aborted');
        }
        if (!(await allowed(req.url()))) {
          if (mainNavigation) mainBlocked = true;
          blockedRequests['refused_address'] = (blockedRequests['refused_address'] ?? 0) + 1;
          return await req.abort('accessdenied');
        }
        if (siteLight && !mainNavigation && siteLightBlocks(type, req.url())) {
          blockedRequests[type] = (blockedRequests[type] ?? 0) + 1;
          return await req.abort('blockedbyclient');
        }
        await req.continue();
      } catch {
        // the page or the browser went away meanwhile
      }
    };
    // adaptive: full until the document shows the page is usable (not a challenge), then site-light.
    p.on('response', (res) => {
      const req = res.request();
      if (o.resource_policy !== 'adaptive' || loaded || !req.isNavigationRequest() || req.frame() !== p.mainFrame()) return;
      const vendor = challengeVendorOf({ statusCode: res.status(), headers: res.headers(), html: '' });
      if (vendor || res.status() >= 400) {
        siteLight = false;
        if (vendor) challenge = true;
      } else if (res.status() < 300) {
        siteLight = true;
      }
    });

    let status = 200;
    let contentType: string | null = 'text/html';
    try {
      const response = await p.goto(job.url, { waitUntil: 'load', timeout: Math.max(1, deadline - Date.now()) });
      if (response) {
        status = response.status();
        contentType = response.headers()['content-type'] ?? null;
      }
    } catch (err) {
      if (mainBlocked) throw new RenderFailure('TARGET_BLOCKED', 'the target address is not allowed', 'tenant');
      const e = err as { name?: string; message?: string };
      if (e.name === 'TimeoutError') throw new RenderFailure('TARGET_TIMEOUT', `the page did not load within ${o.timeout_ms} ms`, 'target');
      if (/net::ERR_/.test(String(e.message))) throw new RenderFailure('TARGET_UNREACHABLE', 'the target could not be reached', 'target');
      throw err;
    }
    loaded = true;
    timings['load'] = Date.now() - t0;
    // Pages keep working after `load` (timers, XHR that fill the content): settle until the network
    // has been quiet for a moment, bounded so a page that polls forever costs at most 5 s.
    await p.waitForNetworkIdle({ idleTime: SETTLE_IDLE_MS, timeout: Math.max(1, Math.min(5_000, deadline - Date.now() - 500)) }).catch(() => undefined);
    timings['settled'] = Date.now() - t0;
    if (status >= 500 && !challenge) throw new RenderFailure('TARGET_SERVER_ERROR', `the target answered ${status}`, 'target', status);

    const boundMs = () => Math.max(1, Math.min(o.timeout_ms, WAIT_BOUND_MS, deadline - Date.now()));
    if (o.wait_for_selector) {
      const bound = boundMs();
      try {
        await p.waitForSelector(o.wait_for_selector, { timeout: bound });
      } catch (err) {
        if ((err as { name?: string }).name === 'TimeoutError') {
          throw new RenderFailure('WAIT_FOR_SELECTOR_TIMEOUT', `wait_for_selector did not appear within ${bound} ms`, 'tenant');
        }
        if (isSelectorSyntaxError(err)) throw new RenderFailure('INVALID_SELECTOR', 'wait_for_selector is not a valid CSS selector', 'tenant');
        throw err;
      }
      timings['wait_for_selector'] = Date.now() - t0;
    }
    if (o.wait_for_text) {
      const bound = boundMs();
      try {
        await waitForText(p, o.wait_for_text, bound);
      } catch {
        throw new RenderFailure('WAIT_FOR_TEXT_TIMEOUT', `wait_for_text did not appear within ${bound} ms`, 'tenant');
      }
      timings['wait_for_text'] = Date.now() - t0;
    }

    // A challenge in the rendered page (not only in the first answer) sends the policy back to full.
    let html = await p.content();
    const vendor = challengeVendorOf({ statusCode: status, headers: {}, html });
    if (vendor) {
      challenge = true;
      siteLight = false;
      // Interstitials pass themselves (a script solves, then reloads): let the page navigate for a
      // while; a page still behind its challenge is not delivered, and not billed.
      loaded = false;
      const passed = await p
        .waitForNavigation({ waitUntil: 'load', timeout: Math.max(1, Math.min(10_000, deadline - Date.now() - 1_000)) })
        .then(async (res) => {
          if (res) status = res.status();
          html = await p.content();
          return challengeVendorOf({ statusCode: status, headers: res?.headers() ?? {}, html }) === undefined;
        })
        .catch(() => false);
      loaded = true;
      if (!passed) throw new RenderFailure('PROTECTION_NOT_PASSED', `the page stayed behind an anti-bot challenge (${vendor})`, 'target', status);
    }

    if (o.browser_actions.length > 0) {
      try {
        await runActions(p, o.browser_actions, { guard: () => guard, waitBoundMs: boundMs(), deadline }, outcomes);
      } catch (err) {
        if (err instanceof ActionFailedError) throw new RenderFailure('BROWSER_ACTION_FAILED', err.message, 'tenant');
        throw err;
      }
      timings['actions'] = Date.now() - t0;
    }

    const body = Buffer.from(o.browser_actions.length > 0 ? await p.content() : html, 'utf8');
    if (body.length > job.max_result_bytes) {
      throw new RenderFailure('TARGET_TOO_LARGE', `the rendered page is larger than ${job.max_result_bytes} bytes`, 'target');
    }
    let text: string;
    let textMatches: number | undefined;
    if (o.result_text_selector) {
      let parts: string[];
      try {
        parts = await p.$$eval(o.result_text_selector, (els) => els.map((el) => ((el as HTMLElement).innerText ?? el.textContent ?? '').trim()));
      } catch (err) {
        if (isSelectorSyntaxError(err)) throw new RenderFailure('INVALID_SELECTOR', 'result_text_selector is not a valid CSS selector', 'tenant');
        throw err;
      }
      textMatches = parts.length;
      text = parts.filter((t) => t.length > 0).join('\n');
    } else {
      text = await p.evaluate(() => document.body?.innerText ?? '');
    }
    timings['done'] = Date.now() - t0;
    return {
      result: {
        outcome: 'completed',
        status_code: status,
        content_type: contentType,
        body_base64: body.toString('base64'),
        text,
        meta: { ...meta(), ...(textMatches !== undefined ? { text_matches: textMatches } : {}) },
      },
    };
  };

  return pool.withContext(
    async (context) => {
      const rendering = run(context).catch(async (err: unknown) => {
        if (err instanceof RenderFailure) return fail(err);
        throw err;
      });
      // The overall deadline: whatever the page is doing, the job ends at timeout_ms.
      const timedOut = new Promise<'deadline'>((resolve) => {
        const t = setTimeout(() => resolve('deadline'), Math.max(1, deadline - Date.now()) + 1_000);
        void rendering.finally(() => clearTimeout(t)).catch(() => undefined);
      });
      const first = await Promise.race([rendering, timedOut]);
      if (first === 'deadline') {
        rendering.catch(() => undefined);
        return fail(new RenderFailure('TARGET_TIMEOUT', `the render did not finish within ${o.timeout_ms} ms`, 'target'));
      }
      return first;
    },
    { ...(job.route.proxy ? { proxyServer: job.route.proxy.server } : {}), waitMs: Math.max(o.timeout_ms, 60_000) },
  );
}

function isSelectorSyntaxError(err: unknown): boolean {
  return /is not a valid selector|SyntaxError|Unexpected token|Failed to execute 'querySelector/i.test(String((err as { message?: string }).message ?? err));
}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms))]);
}

/**
 * In the page: a link with `download` or a target other than the page itself, and window.open,
 * are stopped before the browser acts on them, and reported to the renderer.
 */
async function installGuard(page: Page, guard: GuardCounters): Promise<void> {
  await page.exposeFunction('__wdrGuardStopped', (kind: string) => {
    if (kind === 'download') guard.downloads++;
    else guard.popups++;
  });
  await page.evaluateOnNewDocument(() => {
    const report = (kind: string) => (window as unknown as { __wdrGuardStopped: (k: string) => void }).__wdrGuardStopped(kind);
    window.open = () => {
      report('popup');
      return null;
    };
    document.addEventListener(
      'click',
      (event) => {
        const anchor = (event.target as Element | null)?.closest?.('a');
        if (!anchor) return;
        if (anchor.hasAttribute('download')) {
          event.preventDefault();
          report('download');
        } else if (anchor.target && !['_self', '_top', '_parent', ''].includes(anchor.target.toLowerCase())) {
          event.preventDefault();
          report('popup');
        }
      },
      true,
    );
  });
}
