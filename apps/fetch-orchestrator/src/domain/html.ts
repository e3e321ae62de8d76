import { createRequire } from 'node:module';

type Cheerio = typeof import('cheerio');

const require = createRequire(import.meta.url);
let cheerio: Cheerio | undefined;

/**
 * cheerio's `load`, with the parser loaded on the first page parsed rather than at start-up: it is
 * about 9 MB of heap and 30 MB of resident memory that an orchestrator which has fetched nothing yet
 * does not need.
 */
export function loadHtml(...args: Parameters<Cheerio['load']>): ReturnType<Cheerio['load']> {
  cheerio ??= require('cheerio') as Cheerio;
  return cheerio.load(...args);
}
