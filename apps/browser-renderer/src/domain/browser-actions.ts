import type { KeyInput, Page } from 'puppeteer-core';
import { BROWSER_ACTION_LIMITS, type BrowserAction } from '@wdr/contracts';

/** What the page guard observed: attempts to leave the page that were stopped. */
export interface GuardCounters {
  navigations: number;
  popups: number;
  downloads: number;
}

export interface ActionOutcome {
  index: number;
  type: BrowserAction['type'];
  outcome: 'ok' | 'failed' | 'blocked';
  ms: number;
  /** Why it failed, in the platform's words (never page content or the tenant's values). */
  reason?: string;
}

export class ActionFailedError extends Error {
  constructor(
    readonly index: number,
    readonly type: string,
    reason: string,
  ) {
    super(`browser action ${index} (${type}) failed: ${reason}`);
    this.name = 'ActionFailedError';
  }
}

/** How long after a click the page may still start a navigation, a popup or a download. */
const SETTLE_MS = 250;

/**
 * Run the actions in order. A failing action fails the whole list (ActionFailedError) unless it is
 * `optional`. A click after which the guard stopped a navigation, a popup or a download is reported
 * as blocked: the page stays where it was and the next action runs.
 */
export async function runActions(
  page: Page,
  actions: readonly BrowserAction[],
  opts: {
    /**
     * What the page guard stopped so far. Read after each action (and before the first, or after
     * a failed one): the page's own stops are read in the page (exact at the call), Node's as its
     * events arrived.
     */
    stopped: () => Promise<GuardCounters>;
    waitBoundMs: number;
    deadline: number;
    /**
     * The page URL changed without a navigation request the guard stopped (a script setting
     * `location.hash`): put it back to `url` and count it. The action is reported as blocked.
     */
    restoreUrl?: (url: string) => Promise<void>;
  },
  /** Filled as the actions run, so a failure still leaves the outcomes of those before it. */
  outcomes: ActionOutcome[] = [],
): Promise<ActionOutcome[]> {
  /** The count the next action starts from: the last action's reading, else read now. */
  let before: number | undefined;
  for (const [index, action] of actions.entries()) {
    const t0 = Date.now();
    before ??= total(await opts.stopped());
    const urlBefore = page.url();
    const left = Math.max(1, opts.deadline - Date.now());
    try {
      await runOne(page, action, Math.min(left, opts.waitBoundMs));
      if (action.type === 'click' || action.type === 'press') await sleep(Math.min(SETTLE_MS, left));
      if (opts.restoreUrl && page.url() !== urlBefore) await opts.restoreUrl(urlBefore);
      const after = total(await opts.stopped());
      outcomes.push({ index, type: action.type, outcome: after > before ? 'blocked' : 'ok', ms: Date.now() - t0 });
      before = after;
    } catch (err) {
      before = undefined;
      const reason = reasonOf(err);
      outcomes.push({ index, type: action.type, outcome: 'failed', ms: Date.now() - t0, reason });
      if (!action.optional) throw new ActionFailedError(index, action.type, reason);
    }
  }
  return outcomes;
}

const total = (c: GuardCounters) => c.navigations + c.popups + c.downloads;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runOne(page: Page, action: BrowserAction, boundMs: number): Promise<void> {
  const find = async (selector: string) => {
    const el = await page.waitForSelector(selector, { timeout: Math.min(boundMs, 5_000) });
    if (!el) throw new Error('element not found');
    return el;
  };
  switch (action.type) {
    case 'click': {
      const el = await find(action.selector);
      await el.click();
      return;
    }
    case 'fill': {
      const el = await find(action.selector);
      await el.evaluate((node, value) => {
        const target = node as HTMLInputElement;
        if ((node as HTMLElement).isContentEditable) (node as HTMLElement).textContent = value;
        else target.value = value;
        node.dispatchEvent(new Event('input', { bubbles: true }));
        node.dispatchEvent(new Event('change', { bubbles: true }));
      }, action.value);
      return;
    }
    case 'type': {
      const el = await find(action.selector);
      await el.focus();
      await page.keyboard.type(action.text, { delay: action.delay_ms ?? 0 });
      return;
    }
    case 'press':
      if (action.selector) await (await find(action.selector)).focus();
      await page.keyboard.press(action.key as KeyInput);
      return;
    case 'hover': {
      const el = await find(action.selector);
      await el.hover();
      return;
    }
    case 'select': {
      const el = await find(action.selector);
      await el.select(...action.values);
      return;
    }
    case 'scroll':
      if (action.selector) {
        const el = await find(action.selector);
        await el.scrollIntoView();
      } else if (action.y !== undefined) {
        await page.evaluate((y) => window.scrollBy(0, y), action.y);
      } else {
        await page.evaluate((to) => window.scrollTo(0, to === 'top' ? 0 : document.documentElement.scrollHeight), action.to ?? 'bottom');
      }
      // Let scroll listeners run.
      await sleep(100);
      return;
    case 'wait':
      await sleep(Math.min(action.ms, BROWSER_ACTION_LIMITS.waitMs, boundMs));
      return;
    case 'wait_for_selector':
      await page.waitForSelector(action.selector, {
        timeout: Math.min(action.timeout_ms ?? boundMs, boundMs),
        visible: action.visible ?? false,
      });
      return;
    case 'wait_for_text':
      await waitForText(page, action.text, Math.min(action.timeout_ms ?? boundMs, boundMs));
      return;
  }
}

/** Wait until the page's visible text contains `text` (polled, so it works with JavaScript disabled too). */
export async function waitForText(page: Page, text: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await page.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    if (body.includes(text)) return;
    if (Date.now() >= deadline) throw new WaitTimeoutError(`text did not appear within ${timeoutMs} ms`);
    await sleep(100);
  }
}

export class WaitTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeoutError';
  }
}

function reasonOf(err: unknown): string {
  const e = err as { name?: string; message?: string };
  if (e?.name === 'TimeoutError') return 'the element did not appear in time';
  const m = String(e?.message ?? err);
  if (/is not a valid selector|Unexpected token|querySelector/i.test(m)) return 'the selector is not valid';
  if (/not clickable|not an HTMLElement|Node is either not visible|detached/i.test(m)) return 'the element could not be used';
  if (/not a select element|Element is not a <select>/i.test(m)) return 'the element is not a select';
  if (/Unknown key/i.test(m)) return 'unknown key';
  return 'the action could not be performed';
}
