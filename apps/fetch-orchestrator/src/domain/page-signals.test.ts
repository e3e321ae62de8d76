import { describe, expect, it } from '@jest/globals';
import { classifyHttpPage } from './page-signals.js';

const html = (body: string, statusCode = 200, headers: Record<string, string> = {}) =>
  classifyHttpPage({ statusCode, contentType: 'text/html; charset=utf-8', headers, body: Buffer.from(body) });

describe('classifyHttpPage', () => {
  it('sees an ordinary page as a page', () => {
    expect(
      html('<html><body><h1>Prices</h1><p>Our products and what they cost, in detail.</p><script>track()</script></body></html>'),
    ).toEqual({ kind: 'page' });
  });

  it('sees a page without scripts as a page, however short', () => {
    expect(html('<html><body>ok</body></html>')).toEqual({ kind: 'page' });
  });

  it('recognises a JavaScript-only shell', () => {
    const shell =
      '<html><head><title>App</title></head><body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div><script src="/app.js"></script></body></html>';
    expect(html(shell)).toEqual({ kind: 'js_shell' });
  });

  it('recognises challenge pages by their vendor markers, on any status', () => {
    expect(
      html('<html><head><title>Just a moment...</title></head><body><script>window._cf_chl_opt={}</script></body></html>', 403),
    ).toEqual({ kind: 'challenge', vendor: 'cloudflare' });
    expect(html('<html><body><script src="https://ct.captcha-delivery.com/c.js"></script></body></html>', 200)).toEqual({
      kind: 'challenge',
      vendor: 'datadome',
    });
    expect(html('<div id="px-captcha"></div>', 403)).toEqual({ kind: 'challenge', vendor: 'perimeterx' });
    expect(html('<iframe src="/_Incapsula_Resource?x=1"></iframe>', 200)).toEqual({ kind: 'challenge', vendor: 'imperva' });
  });

  it('takes the cf-mitigated header as a challenge', () => {
    expect(html('<html></html>', 403, { 'cf-mitigated': 'challenge' })).toEqual({ kind: 'challenge', vendor: 'cloudflare' });
  });

  it('reads weak phrases only on refusing statuses', () => {
    const page =
      '<html><head><title>Just a moment...</title></head><body>Please wait, this is a normal article about waiting.</body></html>';
    expect(html(page, 503)).toEqual({ kind: 'challenge', vendor: 'cloudflare' });
    expect(html(page, 200)).toEqual({ kind: 'page' });
    expect(html('<html><body>Not found, sorry. This page does not exist on this server.</body></html>', 403)).toEqual({ kind: 'page' });
  });

  it('leaves bodies that are not HTML alone', () => {
    expect(
      classifyHttpPage({ statusCode: 200, contentType: 'application/json', headers: {}, body: Buffer.from('{"_cf_chl_opt":1}') }),
    ).toEqual({ kind: 'page' });
  });

  it('leaves shells alone when asked for challenges only (the HTTP modes), but still sees a challenge', () => {
    const shell = {
      statusCode: 200,
      contentType: 'text/html',
      headers: {},
      body: Buffer.from('<html><body><div id="root"></div><script src="/app.js"></script></body></html>'),
    };
    expect(classifyHttpPage(shell)).toEqual({ kind: 'js_shell' });
    expect(classifyHttpPage(shell, { shells: false })).toEqual({ kind: 'page' });
    const challenge = { ...shell, statusCode: 403, body: Buffer.from('<html><script>window._cf_chl_opt={}</script></html>') };
    expect(classifyHttpPage(challenge, { shells: false })).toEqual({ kind: 'challenge', vendor: 'cloudflare' });
  });
});
