import { describe, expect, it } from '@jest/globals';
import { unmetWait } from './http-waits.js';

const page = Buffer.from(
  '<!doctype html><html><body><h1 class="t">Hello   there</h1><p>Price: 42</p><script>var hidden = "Only in a script";</script></body></html>',
);
const html = 'text/html; charset=utf-8';

describe('unmetWait (the waits in the HTTP stage)', () => {
  it('is met by an element of the page as served and by its readable text (whitespace collapsed)', () => {
    expect(unmetWait(page, html, { wait_for_selector: 'h1.t' })).toBeUndefined();
    expect(unmetWait(page, html, { wait_for_text: 'Hello there' })).toBeUndefined();
    expect(unmetWait(page, html, { wait_for_selector: 'p', wait_for_text: 'Price: 42' })).toBeUndefined();
    expect(unmetWait(page, html, { wait_for_text: null })).toBeUndefined();
    expect(unmetWait(page, html, {})).toBeUndefined();
  });

  it('names the wait not met, the selector first', () => {
    expect(unmetWait(page, html, { wait_for_selector: '#rendered' })?.code).toBe('WAIT_FOR_SELECTOR_TIMEOUT');
    expect(unmetWait(page, html, { wait_for_text: 'Only in a script' })?.code).toBe('WAIT_FOR_TEXT_TIMEOUT');
    expect(unmetWait(page, html, { wait_for_selector: '#nope', wait_for_text: 'nope' })?.code).toBe('WAIT_FOR_SELECTOR_TIMEOUT');
  });

  it('answers a selector cheerio cannot parse as INVALID_SELECTOR', () => {
    expect(unmetWait(page, html, { wait_for_selector: 'p[' })?.code).toBe('INVALID_SELECTOR');
  });

  it('reads text of a body that is not markup as it is', () => {
    expect(unmetWait(Buffer.from('{"ok": true}'), 'application/json', { wait_for_text: '"ok": true' })).toBeUndefined();
  });
});
