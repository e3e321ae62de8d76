import { describe, expect, it } from '@jest/globals';
import { challengeVendorOf } from './protection.js';

/** An ordinary page of about 35 KB with `marker` somewhere in its middle. */
const pageWith = (marker: string) => {
  const filler = '<p>Plain article text about shoes, prices and delivery times.</p>'.repeat(270);
  return `<html><head><title>Shop</title></head><body>${filler}${marker}${filler}</body></html>`;
};
const judge = (html: string, statusCode = 200) => challengeVendorOf({ statusCode, headers: {}, html });

/** One sample of every alternative of every strong marker, with its vendor. */
const STRONG_SAMPLES: [string, string][] = [
  ['window._cf_chl_opt = {}', 'cloudflare'],
  ['<script src="/cdn-cgi/challenge-platform/h/b/orchestrate"></script>', 'cloudflare'],
  ['<div class="cf-chl-bypass"></div>', 'cloudflare'],
  ['<div id="cf-chl-widget-abc"></div>', 'cloudflare'],
  ['<div class="cf-chl-captcha"></div>', 'cloudflare'],
  ['cf_chl_prog=x', 'cloudflare'],
  ['<script src="https://ct.captcha-delivery.com/c.js"></script>', 'datadome'],
  ['<meta name="datadome">', 'datadome'],
  ['<div id="px-captcha"></div>', 'perimeterx'],
  ['window._pxAppId = "PX123"', 'perimeterx'],
  ['<!-- PerimeterX -->', 'perimeterx'],
  ['<iframe src="/_Incapsula_Resource?x=1"></iframe>', 'imperva'],
  ['Incapsula incident ID: 123-456', 'imperva'],
  ['document.cookie="ak_bmsc=1"', 'akamai'],
  ['_abck=abc', 'akamai'],
  ['<script src="/akamai-bot-manager.js"></script>', 'akamai'],
  ['Reference&#32;&#35;18.1234abcd', 'akamai'],
  ['<h1>Pardon Our Interruption</h1>', 'distil'],
  ['distil_r_captcha', 'distil'],
  ['<script src="/kasada/p.js"></script>', 'kasada'],
  ['KPSDK.configure()', 'kasada'],
];

describe('challengeVendorOf', () => {
  it('sees an ordinary page as one, on any status', () => {
    expect(judge(pageWith(''), 200)).toBeUndefined();
    expect(judge(pageWith(''), 403)).toBeUndefined();
  });

  it.each(STRONG_SAMPLES)('finds %s in the middle of a page, in any case, on any status: %s', (marker, vendor) => {
    expect(judge(pageWith(marker), 200)).toBe(vendor);
    expect(judge(pageWith(marker.toUpperCase()), 200)).toBe(vendor);
    expect(judge(pageWith(marker.toLowerCase()), 404)).toBe(vendor);
  });

  it('names the first vendor of the list whose marker the page carries, wherever on the page it is', () => {
    expect(judge(pageWith(`KPSDK.configure() ${'x'.repeat(1000)} window._cf_chl_opt = {}`))).toBe('cloudflare');
    expect(judge(pageWith(`distil_r_captcha <div id="px-captcha"></div>`))).toBe('perimeterx');
  });

  it('judges a long page on its first 256 KB', () => {
    const late = `<html><body>${'<p>text</p>'.repeat(30_000)}<div id="px-captcha"></div></body></html>`;
    expect(judge(late)).toBeUndefined();
    expect(judge(`<div id="px-captcha"></div>${late}`)).toBe('perimeterx');
  });
});
