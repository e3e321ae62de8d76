import { loadHtml } from './html.js';

/** Elements whose content is not readable text. */
const NOT_TEXT = 'script, style, noscript, template, svg, canvas, iframe, object, head';
/** Elements that start a new line in rendered text. */
const BLOCKS =
  'address, article, aside, blockquote, dd, div, dl, dt, fieldset, figcaption, figure, footer, form, h1, h2, h3, h4, h5, h6, header, hr, li, main, nav, ol, p, pre, section, table, tr, ul, title, caption, summary, details';

function charsetOf(contentType: string | null): string {
  const m = /charset\s*=\s*"?([A-Za-z0-9._-]+)/i.exec(contentType ?? '');
  return m?.[1]?.toLowerCase() ?? 'utf-8';
}

function decode(body: Buffer, contentType: string | null): string {
  try {
    return new TextDecoder(charsetOf(contentType)).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body); // unknown charset label
  }
}

const isMarkup = (contentType: string | null) => contentType === null || /html|xml/i.test(contentType);

/**
 * The readable text of a fetched page: markup is parsed with cheerio, scripts, styles and other
 * non-text elements dropped, block elements put on their own lines, and whitespace collapsed the
 * way a browser renders it. Bodies that are not markup (text/plain, JSON) are returned decoded.
 * With `selector` (the submission's result_text_selector), the text is that of the matching
 * elements, one after another; a selector cheerio cannot parse matches nothing.
 */
export function textOfPage(body: Buffer, contentType: string | null, selector?: string): string {
  const source = decode(body, contentType);
  if (!isMarkup(contentType)) return source;
  const $ = loadHtml(source);
  $(NOT_TEXT).remove();
  $('br').replaceWith('\n');
  $(BLOCKS).each((_, el) => {
    $(el).before('\n').after('\n');
  });
  let text: string;
  if (selector !== undefined) {
    let matches: string[] = [];
    try {
      matches = $(selector)
        .toArray()
        .map((el) => $(el).text());
    } catch {
      matches = [];
    }
    text = matches.join('\n');
  } else {
    text = $('body').length > 0 ? $('body').text() : $.root().text();
  }
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\f\r\u00a0]+/g, ' ').trim())
    .filter((line) => line.length > 0)
    .join('\n');
}
