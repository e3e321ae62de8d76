import { loadHtml } from './html.js';
import { textOfPage } from './result-text.js';

/** The waits of a submission (`wait_for_selector`, `wait_for_text`) as stored with the request. */
export interface WaitOptions {
  wait_for_selector?: string | undefined;
  wait_for_text?: string | null | undefined;
}

export interface UnmetWait {
  code: 'WAIT_FOR_SELECTOR_TIMEOUT' | 'WAIT_FOR_TEXT_TIMEOUT' | 'INVALID_SELECTOR';
  message: string;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * The waits in the HTTP stage: no script runs there, so the page as served is all there will ever
 * be. `wait_for_selector` must match an element of it (cheerio's CSS, as `result_text_selector`),
 * `wait_for_text` must be in its readable text (whitespace collapsed on both sides). The first wait
 * not met, or undefined when every wait is met. `auto` escalates to the browser on it; `http`,
 * `direct` and `residential` fail with the browser's codes (refunded).
 */
export function unmetWait(body: Buffer, contentType: string | null, o: WaitOptions): UnmetWait | undefined {
  if (o.wait_for_selector) {
    let found: boolean;
    try {
      const $ = loadHtml(new TextDecoder('utf-8').decode(body));
      found = $(o.wait_for_selector).length > 0;
    } catch {
      return { code: 'INVALID_SELECTOR', message: 'wait_for_selector is not a valid CSS selector' };
    }
    if (!found) {
      return {
        code: 'WAIT_FOR_SELECTOR_TIMEOUT',
        message: 'wait_for_selector is not in the page as served (the HTTP stage runs no scripts; use mode auto or browser)',
      };
    }
  }
  if (o.wait_for_text) {
    const wanted = collapse(o.wait_for_text);
    if (wanted.length > 0 && !collapse(textOfPage(body, contentType)).includes(wanted)) {
      return {
        code: 'WAIT_FOR_TEXT_TIMEOUT',
        message: 'wait_for_text is not in the page text as served (the HTTP stage runs no scripts; use mode auto or browser)',
      };
    }
  }
  return undefined;
}
