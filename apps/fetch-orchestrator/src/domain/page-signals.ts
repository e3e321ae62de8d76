import { loadHtml } from './html.js';
import { challengeVendorOf } from '@wdr/kit/protection';

/**
 * What an HTTP answer says about the page behind it: a real page, a shell that only a browser can
 * render, or an anti-bot challenge / block page. `auto` escalates to the browser on the last two;
 * a challenge also marks the request `protected`.
 */
export type PageSignal = { kind: 'page' } | { kind: 'js_shell' } | { kind: 'challenge'; vendor: string };

/** Readable text shorter than this, with scripts on the page, is a shell waiting for JavaScript. */
const SHELL_TEXT_CHARS = 40;
/** Pages larger than this are classified on their first part. */
const SCAN_BYTES = 256 * 1024;

export function classifyHttpPage(
  answer: {
    statusCode: number;
    contentType: string | null;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  },
  /**
   * Look for a JavaScript-only shell too. Only `auto` acts on it (it escalates), and it takes an
   * HTML parse, so the HTTP modes skip it: their pages are only scanned for challenge markers.
   */
  opts: { shells: boolean } = { shells: true },
): PageSignal {
  const isHtml = answer.contentType === null || /html/i.test(answer.contentType);
  const head = isHtml ? answer.body.subarray(0, SCAN_BYTES).toString('utf8') : '';
  const vendor = challengeVendorOf({ statusCode: answer.statusCode, headers: answer.headers, html: head });
  if (vendor) return { kind: 'challenge', vendor };
  if (!isHtml || !opts.shells) return { kind: 'page' };
  if (answer.statusCode >= 200 && answer.statusCode < 300 && isJsShell(head)) return { kind: 'js_shell' };
  return { kind: 'page' };
}

/** A page whose HTML carries scripts but (almost) no readable text of its own. */
function isJsShell(html: string): boolean {
  const $ = loadHtml(html);
  if ($('script').length === 0) return false;
  $('script, style, noscript, template, head').remove();
  const text = $('body').text().replace(/\s+/g, ' ').trim();
  return text.length < SHELL_TEXT_CHARS;
}
