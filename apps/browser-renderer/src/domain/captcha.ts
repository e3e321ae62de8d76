import type { Page } from 'puppeteer-core';
import type { CaptchaKind, RenderCaptchaAnswer } from '@wdr/contracts';
import type { CaptchaSolver } from './captcha-solver.js';

/** A CAPTCHA widget found in the page, marked so the token can be put back into the same one. */
export interface CaptchaWidget {
  kind: CaptchaKind;
  /** The widget's site key, or null when the page hides it (nothing a solver can work with). */
  sitekey: string | null;
  /** Value of the `data-wdr-captcha` attribute set on the widget (or its iframe). */
  marker: string;
}

/**
 * What the browser stage needs to solve CAPTCHAs for one render: the provider (absent when none is
 * configured: a CAPTCHA is then reported, not solved) and the orchestrator, which authorizes each
 * solve against the request's ceiling and tracks `solving_captcha`.
 */
export interface CaptchaHooks {
  solver: CaptchaSolver | undefined;
  authorize(kind: CaptchaKind, solvesSoFar: number, trafficBytes: number | undefined): Promise<RenderCaptchaAnswer>;
  solved(kind: CaptchaKind, solves: number): Promise<void>;
}

/**
 * Find the first unsolved reCAPTCHA v2, hCaptcha or Turnstile widget: the sitekey elements first
 * (`.g-recaptcha[data-sitekey]`, `.h-captcha[data-sitekey]`, `.cf-turnstile[data-sitekey]`), then
 * the widgets' iframes (the site key read from their address). Widgets already solved in this
 * render carry `data-wdr-solved` and are skipped.
 */
export async function findCaptcha(page: Page): Promise<CaptchaWidget | undefined> {
  const found = await page.evaluate(() => {
    const mark = (el: Element) => {
      const marker = String(document.querySelectorAll('[data-wdr-captcha]').length + 1);
      el.setAttribute('data-wdr-captcha', marker);
      return marker;
    };
    const elements: [string, string][] = [
      ['recaptcha_v2', '.g-recaptcha[data-sitekey]'],
      ['hcaptcha', '.h-captcha[data-sitekey]'],
      ['turnstile', '.cf-turnstile[data-sitekey]'],
    ];
    for (const [kind, selector] of elements) {
      for (const el of Array.from(document.querySelectorAll(selector))) {
        if (el.hasAttribute('data-wdr-solved')) continue;
        return { kind, sitekey: el.getAttribute('data-sitekey'), marker: el.getAttribute('data-wdr-captcha') ?? mark(el) };
      }
    }
    const frames: [string, RegExp, (src: URL) => string | null][] = [
      ['recaptcha_v2', /^https:\/\/www\.(?:google|recaptcha)\.(?:com|net)\/recaptcha\/api2\/anchor/, (src) => src.searchParams.get('k')],
      [
        'hcaptcha',
        /^https:\/\/(?:[a-z0-9-]+\.)?hcaptcha\.com\//,
        (src) => src.searchParams.get('sitekey') ?? new URLSearchParams(src.hash.slice(1)).get('sitekey'),
      ],
      [
        'turnstile',
        /^https:\/\/challenges\.cloudflare\.com\//,
        (src) => /\/(0x[0-9A-Za-z_-]{10,})(?:\/|$)/.exec(src.pathname)?.[1] ?? null,
      ],
    ];
    for (const el of Array.from(document.querySelectorAll('iframe[src]'))) {
      if (el.hasAttribute('data-wdr-solved') || el.closest('[data-wdr-solved]')) continue;
      const src = (el as HTMLIFrameElement).src;
      for (const [kind, pattern, keyOf] of frames) {
        if (!pattern.test(src)) continue;
        let sitekey: string | null = null;
        try {
          sitekey = keyOf(new URL(src));
        } catch {
          // an address the browser took but URL does not: no key
        }
        return { kind, sitekey, marker: el.getAttribute('data-wdr-captcha') ?? mark(el) };
      }
    }
    return undefined;
  });
  return found as CaptchaWidget | undefined;
}

/**
 * Put a solved token where the widget's own script would (the `g-recaptcha-response` /
 * `h-captcha-response` textarea, the `cf-turnstile-response` input; created inside the widget when
 * the page has none), mark the widget solved, and call its `data-callback` function if it names
 * one, as the widget would on success.
 */
export async function injectToken(page: Page, widget: CaptchaWidget, token: string): Promise<void> {
  await page.evaluate(
    (marker: string, kind: string, value: string) => {
      const el = document.querySelector(`[data-wdr-captcha="${marker}"]`);
      if (!el) return;
      const names =
        kind === 'recaptcha_v2'
          ? ['g-recaptcha-response']
          : kind === 'hcaptcha'
            ? ['h-captcha-response', 'g-recaptcha-response']
            : ['cf-turnstile-response'];
      const container =
        el.tagName === 'IFRAME' ? (el.closest('.g-recaptcha, .h-captcha, .cf-turnstile, form') ?? el.parentElement ?? document.body) : el;
      for (const name of names) {
        let fields = Array.from(container.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>(`[name="${name}"]`));
        if (fields.length === 0)
          fields = Array.from(document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>(`[name="${name}"], #${name}`));
        if (fields.length === 0) {
          const field =
            kind === 'turnstile' ? Object.assign(document.createElement('input'), { type: 'hidden' }) : document.createElement('textarea');
          field.name = name;
          if (field instanceof HTMLTextAreaElement) field.style.display = 'none';
          container.appendChild(field);
          fields = [field];
        }
        for (const f of fields) {
          f.value = value;
          f.dispatchEvent(new Event('input', { bubbles: true }));
          f.dispatchEvent(new Event('change', { bubbles: true }));
        }
      }
      el.setAttribute('data-wdr-solved', '1');
      const callbackName = (el.tagName === 'IFRAME' ? container : el).getAttribute('data-callback');
      if (!callbackName) return;
      let fn: unknown = window;
      for (const part of callbackName.split('.')) fn = fn === null || fn === undefined ? undefined : (fn as Record<string, unknown>)[part];
      if (typeof fn !== 'function') return;
      try {
        (fn as (t: string) => unknown)(value);
      } catch {
        // the page's own error: it shows in the page as it would for a person
      }
    },
    widget.marker,
    widget.kind,
    token,
  );
}

/** The page address a solver is told: origin and path; the query and fragment stay the tenant's. */
export function websiteUrlOf(pageUrl: string): string {
  const u = new URL(pageUrl);
  return `${u.origin}${u.pathname}`;
}
