/**
 * Anti-bot challenge and block pages, recognised by the markers the usual vendors' interstitials
 * carry. One list for the fleet: the HTTP stage (auto escalation, `protected`) and the browser
 * stage (the adaptive resource policy, `protected`) both judge pages with it.
 */
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

/**
 * Every strong marker in one pattern: an ordinary page (nearly every page) is scanned once instead
 * of once per vendor (about 40 % less time on a 35 KB page); a page it matches is then judged by
 * STRONG_MARKERS in their order, as before.
 */
const ANY_STRONG_MARKER = new RegExp(STRONG_MARKERS.map(([re]) => `(?:${re.source})`).join('|'), 'i');

/** Phrases that mean a challenge only on a refusing status (403, 429, 503). */
const WEAK_MARKERS: readonly [RegExp, string][] = [
  [/<title>\s*Just a moment\.\.\.\s*<\/title>|Checking (?:if the site connection is secure|your browser before accessing)/i, 'cloudflare'],
  [/Attention Required! \| Cloudflare|cloudflare-nginx|cf-ray/i, 'cloudflare'],
  [/Access Denied[\s\S]{0,400}You don't have permission to access/i, 'akamai'],
  [
    /(?:are you a robot|verify (?:that )?you are (?:a )?human|unusual traffic from your (?:computer )?network|enable (?:JavaScript and )?cookies to continue)/i,
    'generic',
  ],
];

const REFUSING = new Set([403, 429, 503]);

/** Pages larger than this are judged on their first part (markers live at the top). */
const SCAN_CHARS = 256 * 1024;

/** The vendor whose challenge or block page this is, or undefined for an ordinary page. */
export function challengeVendorOf(page: {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  html: string;
}): string | undefined {
  const mitigated = page.headers['cf-mitigated'];
  if (typeof mitigated === 'string' && mitigated.toLowerCase() === 'challenge') return 'cloudflare';
  const head = page.html.length > SCAN_CHARS ? page.html.slice(0, SCAN_CHARS) : page.html;
  if (ANY_STRONG_MARKER.test(head)) for (const [re, vendor] of STRONG_MARKERS) if (re.test(head)) return vendor;
  if (REFUSING.has(page.statusCode)) {
    for (const [re, vendor] of WEAK_MARKERS) if (re.test(head)) return vendor;
  }
  return undefined;
}
