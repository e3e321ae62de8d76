import { load } from 'cheerio';

/**
 * What an HTTP answer says about the page behind it: a real page, a shell that only a browser can
 * render, or an anti-bot challenge / block page. `auto` escalates to the browser on the last two;
 * a challenge also marks the request `protected`.
 */
export type PageSignal =
  | { kind: 'page' }
  | { kind: 'js_shell' }
  | { kind: 'challenge'; vendor: string };

/**
 * Markers that only challenge and block pages carry, whatever the status code. Each names the
 * vendor whose interstitial it belongs to (kept for the event payload; never a URL).
 */
const STRONG_MARKERS: readonly [RegExp, string][] = [
  [/_cf_chl_opt|\/cdn-cgi\/challenge-platform\/|cf-chl-(?:bypass|widget|captcha)|cf_chl_prog/i, 'cloudflare'],
  [/captcha-delivery\.com|datadome/i, 'datadome'],
  [/px-captcha|_pxAppId|perimeterx/i, 'perimeterx'],
  [/_Incapsula_Resource|Incapsula incident ID/i, 'imperva'],
  [/ak_bmsc|_abck|akamai-bot-manager|Reference&#32;&#35;[0-9a-f.]+/i, 'akamai'],
  [/Pardon Our Interruption|distil_r_captcha/i, 'distil'],
  [/kasada|KPSDK/i, 'kasada'],
];

/** Phrases that mean a challenge only on a refusing status (403, 429, 503). */
const WEAK_MARKERS: readonly [RegExp, string][] = [
  [/<title>\s*Just a moment\.\.\.\s*<\/title>|Checking (?:if the site connection is secure|your browser before accessing)/i, 'cloudflare'],
  [/Attention Required! \| Cloudflare|cloudflare-nginx|cf-ray/i, 'cloudflare'],
  [/Access Denied[\s\S]{0,400}You don't have permission to access/i, 'akamai'],
  [/(?:are you a robot|verify (?:that )?you are (?:a )?human|unusual traffic from your (?:computer )?network|enable (?:JavaScript and )?cookies to continue)/i, 'generic'],
];

const REFUSING = new Set([403, 429, 503]);

/** Readable text shorter than this, with scripts on the page, is a shell waiting for JavaScript. */
const SHELL_TEXT_CHARS = 40;
/** Pages larger than this are classified on their first part (markers live at the top). */
const SCAN_BYTES = 256 * 1024;

export function classifyHttpPage(answer: {
  statusCode: number;
  contentType: string | null;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}): PageSignal {
  const mitigated = answer.headers['cf-mitigated'];
  if (typeof mitigated === 'string' && mitigated.toLowerCase() === 'challenge') return { kind: 'challenge', vendor: 'cloudflare' };
  if (answer.contentType !== null && !/html/i.test(answer.contentType)) return { kind: 'page' };
  const head = answer.body.subarray(0, SCAN_BYTES).toString('utf8');
  for (const [re, vendor] of STRONG_MARKERS) if (re.test(head)) return { kind: 'challenge', vendor };
  if (REFUSING.has(answer.statusCode)) {
    for (const [re, vendor] of WEAK_MARKERS) if (re.test(head)) return { kind: 'challenge', vendor };
  }
  if (answer.statusCode >= 200 && answer.statusCode < 300 && isJsShell(head)) return { kind: 'js_shell' };
  return { kind: 'page' };
}

/** A page whose HTML carries scripts but (almost) no readable text of its own. */
function isJsShell(html: string): boolean {
  const $ = load(html);
  if ($('script').length === 0) return false;
  $('script, style, noscript, template, head').remove();
  const text = $('body').text().replace(/\s+/g, ' ').trim();
  return text.length < SHELL_TEXT_CHARS;
}
