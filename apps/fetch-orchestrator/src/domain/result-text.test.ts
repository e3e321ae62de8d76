import { describe, expect, it } from '@jest/globals';
import { textOfPage } from './result-text.js';

describe('textOfPage', () => {
  it('keeps the readable text of the body, one block per line, without scripts, styles or markup', () => {
    const html = `<!doctype html><html><head><title>Title</title><style>p{color:red}</style></head>
      <body><nav>Home | <a href="/x">About</a></nav><h1>Hello,&nbsp;world</h1>
      <p>first   line<br>second line</p><script>alert("no")</script><noscript>enable js</noscript>
      <ul><li>one</li><li>two</li></ul><div><span>inline</span> <b>bold</b></div></body></html>`;
    expect(textOfPage(Buffer.from(html), 'text/html; charset=utf-8')).toBe(
      ['Home | About', 'Hello, world', 'first line', 'second line', 'one', 'two', 'inline bold'].join('\n'),
    );
  });

  it('decodes the declared charset and returns non-markup bodies as they are', () => {
    expect(
      textOfPage(Buffer.from([0x3c, 0x70, 0x3e, 0x63, 0x61, 0x66, 0xe9, 0x3c, 0x2f, 0x70, 0x3e]), 'text/html; charset=iso-8859-1'),
    ).toBe('café');
    expect(textOfPage(Buffer.from('{"a": 1}'), 'application/json')).toBe('{"a": 1}');
    expect(textOfPage(Buffer.from('<p>x</p>'), null)).toBe('x');
  });

  it('keeps only the text of the elements result_text_selector matches, one per line', () => {
    const html =
      '<html><body><h1>Shop</h1><p class="price">42.00</p><div><span class="price">17.50</span> EUR</div><p>footer</p></body></html>';
    expect(textOfPage(Buffer.from(html), 'text/html', '.price')).toBe('42.00\n17.50');
    expect(textOfPage(Buffer.from(html), 'text/html', '.missing')).toBe('');
    expect(textOfPage(Buffer.from(html), 'text/html', 'p[')).toBe('');
  });
});
