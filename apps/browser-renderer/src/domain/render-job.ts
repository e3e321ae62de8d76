import type { BrowserContext, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import type { RenderFailureCode, RenderJob, RenderMeta, RenderResult, RenderTraffic } from '@wdr/contracts';
import { challengeVendorOf } from '@wdr/kit/protection';
import type { Logger } from '@wdr/kit/log';
import type { TargetPolicy } from '@wdr/kit/target-policy';
import { ActionFailedError, runActions, waitForText, type ActionOutcome, type GuardCounters } from './browser-actions.js';
import type { BrowserPool } from './browser-pool.js';
import { findCaptcha, injectToken, websiteUrlOf, type CaptchaHooks, type CaptchaWidget } from './captcha.js';
import { CaptchaSolveError } from './captcha-solver.js';
import { geoProfileOf } from './geo-profiles.js';
import type { GateRoute } from './egress-gate.js';
import { siteLightBlocks } from './resource-policy.js';

/** The spec's bound on wait_for_selector (and, here, on every wait): min(timeout_ms, 30 s). */
const WAIT_BOUND_MS = 30_000;
/** Network quiet time after `load` that counts as the page having settled. */
export const SETTLE_IDLE_MS = 200;
/** CAPTCHAs solved at most per render: a page that keeps asking is delivered as it stands. */
const MAX_CAPTCHA_SOLVES = 3;
/** Time a render keeps after a solve for the rest of its work (waits, text, the hand-back). */
const AFTER_SOLVE_RESERVE_MS = 3_000;

/** What a failed render leaves for its debug artifacts (never page content, URLs, headers or cookies). */
export interface FailureEvidence {
  screenshot: Buffer | undefined;
  report: Record<string, unknown>;
}

/**
 * A render's outcome as the renderer holds it: a completed page with its bytes and its text (sent
 * to the orchestrator as bytes, then named by the small JSON result: render-flow.ts), or a failure
 * as it is handed back.
 */
export type RenderOutcome =
  | (Omit<Extract<RenderResult, { outcome: 'completed' }>, 'upload'> & {
      /** The rendered DOM (`page.content()`) as UTF-8: the page as the browser ended with it. */
      body: Buffer;
      /** Readable text of the page, or of the elements matching result_text_selector. */
      text: string;
    })
  | Extract<RenderResult, { outcome: 'failed' }>;

export interface RenderOutput {
  result: RenderOutcome;
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

/** What a render may use besides the pool (and its egress gate): CAPTCHA solving. */
export interface RenderServices {
  /** Without it a CAPTCHA is reported in the meta and left alone. */
  captcha?: CaptchaHooks | undefined;
  /** For what the tenant must not see but an operator needs (a solver's error code). */
  log?: Logger | undefined;
  /** How long a failed render's screenshot may take (debug_artifacts; default SCREENSHOT_BUDGET_MS). */
  screenshotBudgetMs?: number | undefined;
}

/**
 * Render one job in a fresh isolated context of the pool: navigate, wait, solve a CAPTCHA, run the
 * actions, take the rendered DOM and its text. Every outcome the tenant can cause or the target can
 * answer is a `failed` result with its code; a crash of the browser propagates
 * (BrowserCrashedError) so the caller can retry the attempt. A proxied render reports its proxy
 * traffic in both outcomes.
 *
 * Every connection of the render leaves through the pool's egress gate, judged by `policy`: the
 * route's token is opened here and closed when the render is over.
 */
export async function renderJob(
  pool: BrowserPool,
  job: RenderJob,
  policy: TargetPolicy,
  services: RenderServices = {},
): Promise<RenderOutput> {
  const route = pool.gate.open({ policy, upstream: job.route.proxy });
  let output: RenderOutput;
  let traffic: RenderTraffic;
  try {
    output = await renderIn(pool, job, policy, services, route);
  } finally {
    // Counted after the context is closed: nothing more can flow for this render.
    traffic = await route.settle();
  }
  if (job.route.proxy) output.result.traffic = traffic;
  return output;
}

async function renderIn(
  pool: BrowserPool,
  job: RenderJob,
  policy: TargetPolicy,
  services: RenderServices,
  route: GateRoute,
): Promise<RenderOutput> {
  const o = job.options;
  const t0 = Date.now();
  const deadline = t0 + o.timeout_ms;
  const requests: Record<string, number> = {};
  const blockedRequests: Record<string, number> = {};
  /**
   * Attempts to leave the page that were stopped, in two halves: what Node stops (a navigation
   * request, a popup target, a URL put back) and what the page's own script stops (installGuard),
   * the latter as last read from the page (readPageStops).
   */
  const guard: GuardCounters = { navigations: 0, popups: 0, downloads: 0 };
  let pageStops: GuardCounters = { navigations: 0, popups: 0, downloads: 0 };
  const stoppedSoFar = (): GuardCounters => ({
    navigations: guard.navigations + pageStops.navigations,
    popups: guard.popups + pageStops.popups,
    downloads: guard.downloads + pageStops.downloads,
  });
  const timings: Record<string, number> = {};
  let consoleErrors = 0;
  let siteLight = false;
  let challenge = false;
  const outcomes: ActionOutcome[] = [];
  let page: Page | undefined;
  let country: string | null = null;
  let captcha: { kind: CaptchaWidget['kind']; solves: number } | undefined;

  /** Blocked requests by kind, with the connections the egress gate refused counted as refused addresses. */
  const blockedSoFar = (): Record<string, number> => {
    const all = { ...blockedRequests };
    const refused = (all['refused_address'] ?? 0) + route.refused();
    if (refused > 0) all['refused_address'] = refused;
    return all;
  };
  const meta = (): RenderMeta => ({
    stage: 'browser',
    elapsed_ms: Date.now() - t0,
    javascript: o.javascript,
    resource_policy: { requested: o.resource_policy, applied: siteLight ? 'site-light' : 'full', blocked_requests: blockedSoFar() },
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
    ...(captcha ? { captcha: { ...captcha } } : {}),
  });

  const evidence = async (): Promise<FailureEvidence | undefined> => {
    if (!o.debug_artifacts) return undefined;
    let screenshot: Buffer | undefined;
    // Why there is no screenshot, when there is none: the report says so instead of leaving it out silently.
    let missing: 'no_page' | 'timed_out' | 'failed' | undefined;
    if (page && !page.isClosed()) {
      // The page is captured as it stands, at the viewport, PNG-encoded for speed rather than size.
      // The budget is generous: the failure is already decided, and on a loaded machine Chromium
      // took more than 5 s to produce a frame (a clean-clone run lost its screenshot so).
      screenshot = await withDeadline(
        page.screenshot({ type: 'png', optimizeForSpeed: true }).then((b) => Buffer.from(b)),
        services.screenshotBudgetMs ?? SCREENSHOT_BUDGET_MS,
      ).catch((err: unknown) => {
        missing = err instanceof DeadlinePassed ? 'timed_out' : 'failed';
        return undefined;
      });
    } else missing = 'no_page';
    return {
      screenshot,
      report: {
        ...(missing ? { screenshot_missing: missing } : {}),
        timings_ms: { ...timings, total: Date.now() - t0 },
        actions: outcomes.map(({ index, type, outcome, ms, reason }) => ({ index, type, outcome, ms, ...(reason ? { reason } : {}) })),
        requests_by_type: { ...requests },
        blocked_by_type: blockedSoFar(),
        stopped_attempts: stoppedSoFar(),
        console_errors: consoleErrors,
        resource_policy: siteLight ? 'site-light' : 'full',
      },
    };
  };

  const fail = async (f: RenderFailure): Promise<RenderOutput> => {
    const ev = await evidence();
    return {
      result: {
        outcome: 'failed',
        code: f.code,
        message: f.message,
        caused_by: f.causedBy,
        ...(f.statusCode ? { status_code: f.statusCode } : {}),
        meta: meta(),
      },
      ...(ev ? { evidence: ev } : {}),
    };
  };

  /**
   * First filter, in the page, with no DNS: scheme, credentials, literal addresses and localhost
   * names. Names are judged by the egress gate, which resolves them once and connects to what it
   * checked (requests interception does not see, WebSockets and workers among them, pass there too).
   */
  const allowed = (url: string): boolean => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return false;
    }
    if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') return true;
    return policy.checkUrl(u) === undefined;
  };
  /** The gate's refusal of the host of a URL in this render, if any. */
  const refusalOf = (url: string | undefined) => {
    if (!url) return undefined;
    try {
      const u = new URL(url);
      return route.refusalOf(u.hostname, Number(u.port || (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80)));
    } catch {
      return undefined;
    }
  };
  const originOf = (url: string): string | undefined => {
    try {
      return new URL(url).origin;
    } catch {
      return undefined;
    }
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
    // The tenant's headers and cookies go to the target only: its origin and the origins its main
    // document is redirected to, never to other origins' sub-requests (set per request below).
    const targetOrigins = new Set<string>([target.origin]);
    const tenantHeaders = Object.keys(o.headers).length > 0 ? o.headers : undefined;
    const cookies = Object.entries(o.cookies);
    // Cookies are scoped by host: the target's host (and a redirect's), not other sites the page loads from.
    const cookiesFor = (url: string) => cookies.map(([name, value]) => ({ name, value, domain: new URL(url).hostname, path: '/' }));
    if (cookies.length > 0) await context.setCookie(...cookiesFor(target.origin));
    // The render's token for the egress gate, direct and proxied routes alike.
    await p.authenticate({ username: route.username, password: route.password });
    const geo = geoProfileOf(job.route.country);
    if (geo) {
      await p.emulateTimezone(geo.timezone);
      // The country's default locale for Intl (dates, numbers) in the page.
      if (geo.locale) await (await p.createCDPSession()).send('Emulation.setLocaleOverride', { locale: geo.locale });
      if (geo.position) {
        await context.overridePermissions(target.origin, ['geolocation']);
        await p.setGeolocation(geo.position);
      }
      country = job.route.country;
    }
    if (o.browser_actions.length > 0) await installGuard(p);

    let loaded = false;
    let mainBlocked = false;
    /** The last URL the main frame asked for (the target, then each redirect): what a gate refusal is matched against. */
    let lastMainUrl: string | undefined;
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
        if (mainNavigation) lastMainUrl = req.url();
        if (!allowed(req.url())) {
          if (mainNavigation) mainBlocked = true;
          blockedRequests['refused_address'] = (blockedRequests['refused_address'] ?? 0) + 1;
          return await req.abort('accessdenied');
        }
        if (siteLight && !mainNavigation && siteLightBlocks(type, req.url())) {
          blockedRequests[type] = (blockedRequests[type] ?? 0) + 1;
          return await req.abort('blockedbyclient');
        }
        const origin = originOf(req.url());
        if (mainNavigation && origin && !targetOrigins.has(origin) && req.redirectChain().length > 0) {
          // An HTTP redirect of the main document: its origin is the target's too (a navigation a
          // script starts is not: it begins a chain of its own).
          targetOrigins.add(origin);
          if (cookies.length > 0) await context.setCookie(...cookiesFor(req.url()));
        }
        if (tenantHeaders && origin && targetOrigins.has(origin))
          return await req.continue({ headers: { ...req.headers(), ...tenantHeaders } });
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
    /** The last main-document answer: a solved CAPTCHA's callback may submit and load another page. */
    let lastMain: HTTPResponse | undefined;
    p.on('response', (res) => {
      const req = res.request();
      if (req.isNavigationRequest() && req.frame() === p.mainFrame()) lastMain = res;
    });
    /** The main document (the target or a redirect of it) refused by the page filter or the egress gate. */
    const mainRefused = () => {
      const refusal = refusalOf(lastMainUrl);
      if (mainBlocked || refusal === 'blocked') return new RenderFailure('TARGET_BLOCKED', 'the target address is not allowed', 'tenant');
      if (refusal === 'unresolvable') return new RenderFailure('TARGET_UNREACHABLE', 'the target name did not resolve', 'target');
      return undefined;
    };
    try {
      const response = await p.goto(job.url, { waitUntil: 'load', timeout: Math.max(1, deadline - Date.now()) });
      // A plain-http document the gate refused arrives as the gate's 403 answer, not as an error.
      const refused = mainRefused();
      if (refused) throw refused;
      if (response) {
        status = response.status();
        contentType = response.headers()['content-type'] ?? null;
      }
    } catch (err) {
      if (err instanceof RenderFailure) throw err;
      const refused = mainRefused();
      if (refused) throw refused;
      const e = err as { name?: string; message?: string };
      if (e.name === 'TimeoutError') throw new RenderFailure('TARGET_TIMEOUT', `the page did not load within ${o.timeout_ms} ms`, 'target');
      if (/net::ERR_/.test(String(e.message))) throw new RenderFailure('TARGET_UNREACHABLE', 'the target could not be reached', 'target');
      throw err;
    }
    loaded = true;
    timings['load'] = Date.now() - t0;
    // Pages keep working after `load` (timers, XHR that fill the content): settle until the network
    // has been quiet for a moment, bounded so a page that polls forever costs at most 5 s.
    await p
      .waitForNetworkIdle({ idleTime: SETTLE_IDLE_MS, timeout: Math.max(1, Math.min(5_000, deadline - Date.now() - 500)) })
      .catch(() => undefined);
    timings['settled'] = Date.now() - t0;
    if (status >= 500 && !challenge) throw new RenderFailure('TARGET_SERVER_ERROR', `the target answered ${status}`, 'target', status);

    // A CAPTCHA widget is always reported; it is solved when a solver is configured and the ledger
    // allows the solve within the request's ceiling. What the tenant waits for comes after it.
    const solveCaptchas = async (hooks: CaptchaHooks | undefined) => {
      for (;;) {
        // A page that navigates away meanwhile has no widget to report.
        const widget = await findCaptcha(p).catch(() => undefined);
        if (!widget) return;
        captcha = { kind: widget.kind, solves: captcha?.solves ?? 0 };
        const solver = hooks?.solver;
        // Without JavaScript the widget cannot take a token: reported only.
        if (!hooks || !solver || !o.javascript || captcha.solves >= MAX_CAPTCHA_SOLVES) return;
        if (!widget.sitekey) throw new RenderFailure('CAPTCHA_NOT_SOLVED', 'the CAPTCHA widget names no site key', 'target', status);
        const soFar = job.route.proxy ? route.soFar() : undefined;
        const answer = await hooks
          .authorize(widget.kind, captcha.solves, soFar?.measured ? soFar.request_bytes + soFar.response_bytes : undefined)
          .catch((err: unknown) => {
            services.log?.warn({ err, requestId: job.request_id }, 'a CAPTCHA solve could not be authorized');
            throw new RenderFailure('CAPTCHA_NOT_SOLVED', 'the CAPTCHA solve could not be authorized', 'platform', status);
          });
        if (answer.state === 'refused') {
          if (answer.reason === 'budget_exhausted') {
            const message = `solving the CAPTCHA (${answer.projected_tokens} tokens in all) would pass max_credits_per_request (${answer.max_credits})`;
            throw new RenderFailure('BUDGET_EXHAUSTED', message, 'tenant', status);
          }
          throw new RenderFailure('INSUFFICIENT_CREDITS', 'the balance does not cover solving the CAPTCHA', 'tenant', status);
        }
        if (answer.state === 'skip') throw new RenderFailure('RENDER_FAILED', `the request is already ${answer.status}`, 'platform');
        let token: string;
        try {
          token = await solver.solve(
            { kind: widget.kind, websiteURL: websiteUrlOf(p.url()), websiteKey: widget.sitekey },
            deadline - AFTER_SOLVE_RESERVE_MS,
          );
        } catch (err) {
          if (!(err instanceof CaptchaSolveError)) throw err;
          services.log?.warn({ requestId: job.request_id, kind: widget.kind, reason: err.detail }, 'CAPTCHA not solved');
          throw new RenderFailure('CAPTCHA_NOT_SOLVED', `the CAPTCHA was not solved: ${err.message}`, 'target', status);
        }
        timings[`captcha_${captcha.solves + 1}`] = Date.now() - t0;
        // The widget's callback may submit a form: the page may load once more, as for a person.
        loaded = false;
        const before = lastMain;
        await injectToken(p, widget, token).catch((err: unknown) => {
          if (!/context was destroyed|navigat/i.test(String((err as { message?: string }).message ?? err))) throw err;
        });
        captcha.solves++;
        await hooks
          .solved(widget.kind, captcha.solves)
          .catch((err: unknown) => services.log?.warn({ err, requestId: job.request_id }, 'could not report a solved CAPTCHA'));
        await p
          .waitForNetworkIdle({ idleTime: 500, timeout: Math.max(1, Math.min(10_000, deadline - Date.now() - 1_000)) })
          .catch(() => undefined);
        loaded = true;
        if (lastMain && lastMain !== before) {
          status = lastMain.status();
          contentType = lastMain.headers()['content-type'] ?? null;
        }
      }
    };
    await solveCaptchas(services.captcha);

    const boundMs = () => Math.max(1, Math.min(o.timeout_ms, WAIT_BOUND_MS, deadline - Date.now()));
    if (o.wait_for_selector) {
      const bound = boundMs();
      try {
        await p.waitForSelector(o.wait_for_selector, { timeout: bound });
      } catch (err) {
        if ((err as { name?: string }).name === 'TimeoutError') {
          throw new RenderFailure('WAIT_FOR_SELECTOR_TIMEOUT', `wait_for_selector did not appear within ${bound} ms`, 'tenant');
        }
        if (isSelectorSyntaxError(err))
          throw new RenderFailure('INVALID_SELECTOR', 'wait_for_selector is not a valid CSS selector', 'tenant');
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
    await refuseOversize(p, job.max_result_bytes);
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
          await refuseOversize(p, job.max_result_bytes);
          html = await p.content();
          return challengeVendorOf({ statusCode: status, headers: res?.headers() ?? {}, html }) === undefined;
        })
        .catch(() => false);
      loaded = true;
      if (!passed)
        throw new RenderFailure('PROTECTION_NOT_PASSED', `the page stayed behind an anti-bot challenge (${vendor})`, 'target', status);
    }

    if (o.browser_actions.length > 0) {
      try {
        await armGuard(p);
        const restoreUrl = async (url: string) => {
          guard.navigations++;
          await p.evaluate((u) => (window as unknown as { __wdrRestoreUrl: (x: string) => void }).__wdrRestoreUrl(u), url);
        };
        const stopped = async () => {
          pageStops = await readPageStops(p, pageStops);
          return stoppedSoFar();
        };
        await runActions(p, o.browser_actions, { stopped, waitBoundMs: boundMs(), deadline, restoreUrl }, outcomes);
      } catch (err) {
        if (err instanceof ActionFailedError) throw new RenderFailure('BROWSER_ACTION_FAILED', err.message, 'tenant');
        throw err;
      }
      timings['actions'] = Date.now() - t0;
    }

    if (o.browser_actions.length > 0) await refuseOversize(p, job.max_result_bytes);
    const body = Buffer.from(o.browser_actions.length > 0 ? await p.content() : html, 'utf8');
    if (body.length > job.max_result_bytes) {
      throw new RenderFailure('TARGET_TOO_LARGE', `the rendered page is larger than ${job.max_result_bytes} bytes`, 'target');
    }
    let text: string;
    let textMatches: number | undefined;
    if (o.result_text_selector) {
      let parts: string[];
      try {
        parts = await p.$$eval(o.result_text_selector, (els) =>
          els.map((el) => ((el as HTMLElement).innerText ?? el.textContent ?? '').trim()),
        );
      } catch (err) {
        if (isSelectorSyntaxError(err))
          throw new RenderFailure('INVALID_SELECTOR', 'result_text_selector is not a valid CSS selector', 'tenant');
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
        body,
        text,
        meta: { ...meta(), ...(textMatches !== undefined ? { text_matches: textMatches } : {}) },
      },
    };
  };

  return pool.withContext(
    async (context) => {
      // The overall deadline: whatever the page is doing, the job ends at timeout_ms. It bounds the
      // render's decision, not the evidence collected after it: a failure decided in time (a
      // challenge that did not pass by the deadline's last second) keeps its own code even when the
      // screenshot is slow on a loaded machine.
      const rendering = run(context).then(
        (output) => ({ output }),
        (err: unknown) => ({ err }),
      );
      const timedOut = new Promise<'deadline'>((resolve) => {
        const t = setTimeout(() => resolve('deadline'), Math.max(1, deadline - Date.now()) + 1_000);
        void rendering.finally(() => clearTimeout(t));
      });
      const first = await Promise.race([rendering, timedOut]);
      if (first === 'deadline')
        return fail(new RenderFailure('TARGET_TIMEOUT', `the render did not finish within ${o.timeout_ms} ms`, 'target'));
      if ('output' in first) return first.output;
      if (first.err instanceof RenderFailure) return fail(first.err);
      throw first.err;
    },
    {
      proxyServer: route.proxyServer,
      waitMs: Math.max(o.timeout_ms, 60_000),
    },
  );
}

function isSelectorSyntaxError(err: unknown): boolean {
  return /is not a valid selector|SyntaxError|Unexpected token|Failed to execute 'querySelector/i.test(
    String((err as { message?: string }).message ?? err),
  );
}

/** How long a failed render's screenshot may take (debug_artifacts). */
const SCREENSHOT_BUDGET_MS = 15_000;

class DeadlinePassed extends Error {}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlinePassed('timed out')), ms);
  });
  return Promise.race([p, passed]).finally(() => clearTimeout(timer));
}

/**
 * In the page: a link with `download` or a target other than the page itself, and window.open,
 * are stopped before the browser acts on them, and reported to the renderer. Once the actions
 * start (`armGuard`), a change of the page URL without a navigation request is stopped too: a
 * fragment link to another fragment and `history.pushState` / `replaceState` with another URL
 * (the page's own scripts may use them freely while it loads), and so is a navigation to another
 * document the page starts (a link, `location` set, a form): cancelled at its `navigate` event
 * (the Navigation API) and counted here, before any request. What that event cannot cancel still
 * meets the request interception, which stops it and counts it in Node.
 * What was stopped is counted in the page (`__wdrGuardStops`, read with readPageStops).
 */
async function installGuard(page: Page): Promise<void> {
  await page.evaluateOnNewDocument(() => {
    const w = window as unknown as { __wdrGuardArmed?: boolean };
    // The counts live in this closure; the page sees only a reader it can neither replace nor redefine.
    const stops = { navigations: 0, popups: 0, downloads: 0 };
    Object.defineProperty(window, '__wdrGuardStops', {
      value: () => [stops.navigations, stops.popups, stops.downloads],
      writable: false,
      configurable: false,
      enumerable: false,
    });
    const report = (kind: keyof typeof stops) => {
      stops[kind]++;
    };
    window.open = () => {
      report('popups');
      return null;
    };
    const changesUrl = (url: string | URL | null | undefined) => {
      if (url === undefined || url === null) return false;
      try {
        return new URL(String(url), location.href).href !== location.href;
      } catch {
        return false;
      }
    };
    const replace = history.replaceState.bind(history);
    (w as unknown as { __wdrRestoreUrl: (url: string) => void }).__wdrRestoreUrl = (url: string) => replace(history.state, '', url);
    for (const name of ['pushState', 'replaceState'] as const) {
      const original = history[name].bind(history);
      history[name] = (data: unknown, unused: string, url?: string | URL | null) => {
        if (w.__wdrGuardArmed && changesUrl(url)) {
          report('navigations');
          return;
        }
        original(data, unused, url);
      };
    }
    const nav = (window as unknown as { navigation?: EventTarget }).navigation;
    nav?.addEventListener('navigate', (event) => {
      const e = event as Event & { destination?: { sameDocument?: boolean }; navigationType?: string };
      if (!w.__wdrGuardArmed || e.destination?.sameDocument !== false || e.navigationType === 'traverse' || !e.cancelable) return;
      e.preventDefault();
      report('navigations');
    });
    document.addEventListener(
      'click',
      (event) => {
        const anchor = (event.target as Element | null)?.closest?.('a');
        if (!anchor) return;
        if (anchor.hasAttribute('download')) {
          event.preventDefault();
          report('downloads');
        } else if (anchor.target && !['_self', '_top', '_parent', ''].includes(anchor.target.toLowerCase())) {
          event.preventDefault();
          report('popups');
        } else if (w.__wdrGuardArmed && anchor.hasAttribute('href')) {
          // A same-document link (another fragment) changes the URL without a navigation request.
          const to = new URL(anchor.href, location.href);
          const here = new URL(location.href);
          if (to.hash !== here.hash && to.href.split('#')[0] === here.href.split('#')[0]) {
            event.preventDefault();
            report('navigations');
          }
        }
      },
      true,
    );
  });
}

/**
 * What the page's half of the guard stopped so far (installGuard), read in the page: exact as of
 * the call, however late Chromium would deliver an event about it. The last answer when the page
 * cannot answer (closed, crashed, or its document gone) or answers anything but three counts that
 * did not go down (the page runs the tenant's target's scripts).
 */
async function readPageStops(page: Page, last: GuardCounters): Promise<GuardCounters> {
  const answer: unknown = await page
    .evaluate(() => {
      const read = (window as unknown as { __wdrGuardStops?: unknown }).__wdrGuardStops;
      return typeof read === 'function' ? (read as () => unknown)() : null;
    })
    .catch(() => null);
  if (!Array.isArray(answer) || answer.length !== 3) return last;
  const [navigations, popups, downloads] = answer as unknown[];
  const count = (v: unknown, was: number) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= was ? v : undefined);
  const next = {
    navigations: count(navigations, last.navigations),
    popups: count(popups, last.popups),
    downloads: count(downloads, last.downloads),
  };
  if (next.navigations === undefined || next.popups === undefined || next.downloads === undefined) return last;
  return { navigations: next.navigations, popups: next.popups, downloads: next.downloads };
}

/** From here on the guard also stops URL changes without a navigation request (see installGuard). */
async function armGuard(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { __wdrGuardArmed?: boolean }).__wdrGuardArmed = true;
  });
}

/**
 * The rendered document measured inside the page (UTF-8 bytes of its markup): only a number crosses
 * to Node, so a page larger than the job's bound is refused before its content is transferred.
 */
async function refuseOversize(p: Page, maxBytes: number): Promise<void> {
  const bytes = await p.evaluate(() => {
    const root = document.documentElement;
    return root ? new TextEncoder().encode(root.outerHTML).length : 0;
  });
  if (bytes > maxBytes) throw new RenderFailure('TARGET_TOO_LARGE', `the rendered page is larger than ${maxBytes} bytes`, 'target');
}
