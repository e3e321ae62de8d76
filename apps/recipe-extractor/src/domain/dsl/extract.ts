// The htmlparser2 build: a recipe reads what the page's markup says, and it is several times faster than parse5.
import { load, type CheerioAPI } from 'cheerio/slim';
import type { ExtractionSource, FieldRule, RecipeDefinition } from '@wdr/contracts';
import type { FieldIssue } from '@wdr/kit/errors';
import { coerceScalar, collapseWhitespace, type Scalar } from './coerce.js';

/**
 * DSL v1 over one page, with cheerio: a pure function of (definition, HTML, page URL). Required
 * fields that are not found (or cannot be coerced to their type) are `missing`; optional ones come
 * out as null (or []) with a warning.
 */
export interface ExtractionOutcome {
  data: Record<string, unknown>;
  missing: FieldIssue[];
  warnings: FieldIssue[];
}

type Nodes = ReturnType<ReturnType<CheerioAPI['root']>['find']>;
/** Where selectors are looked up: the document, or one item of an object collection. */
interface Scope {
  find: (selector: string) => Nodes;
}

interface Page {
  $: CheerioAPI;
  baseUrl: string | undefined;
  jsonLd: Record<string, unknown>[] | undefined;
  spend: Spend;
}

/** What one run may produce and spend: exceeding either ends it with ExtractionBudgetExceeded. */
export interface ExtractionBudget {
  /** Characters of extracted values plus a fixed cost per object and field (nested `multiple` scopes multiply). */
  maxOutputChars: number;
  /** Wall time of the whole run, parsing included, checked between steps. */
  maxMs: number;
}

/** Bounds for a run that names none (a recipe preview, generation, repair): the service's defaults. */
export const DEFAULT_EXTRACTION_BUDGET: ExtractionBudget = { maxOutputChars: 2 * 1024 * 1024, maxMs: 5_000 };

/** A run that would produce more than its budget or take longer: a terminal failure of the run, never retried. */
export class ExtractionBudgetExceeded extends Error {
  constructor(
    readonly kind: 'output' | 'time',
    readonly limit: number,
  ) {
    super(kind === 'output' ? `the extracted data would exceed ${limit} characters` : `the extraction took longer than ${limit} ms`);
    this.name = 'ExtractionBudgetExceeded';
  }
}

/** Per field or object produced: a bomb of empty objects costs as much as one of values. */
const ENTRY_COST = 8;

class Spend {
  private chars = 0;
  private readonly deadline: number;
  private steps = 0;

  constructor(private readonly budget: ExtractionBudget) {
    this.deadline = Date.now() + budget.maxMs;
  }

  add(chars: number): void {
    this.chars += chars + ENTRY_COST;
    if (this.chars > this.budget.maxOutputChars) throw new ExtractionBudgetExceeded('output', this.budget.maxOutputChars);
    if ((++this.steps & 63) === 0) this.checkTime();
  }

  checkTime(): void {
    if (Date.now() > this.deadline) throw new ExtractionBudgetExceeded('time', this.budget.maxMs);
  }
}

export function extract(
  def: RecipeDefinition,
  html: string,
  opts: { pageUrl?: string; budget?: ExtractionBudget } = {},
): ExtractionOutcome {
  const spend = new Spend(opts.budget ?? DEFAULT_EXTRACTION_BUDGET);
  const $ = load(html);
  spend.checkTime();
  const page: Page = { $, baseUrl: baseUrlOf($, opts.pageUrl), jsonLd: undefined, spend };
  const out: ExtractionOutcome = { data: {}, missing: [], warnings: [] };
  out.data = readFields(page, def.fields, $.root(), '', out);
  return out;
}

/**
 * Relative URLs resolve against the page's `<base href>`, else its canonical link, else the URL
 * the caller knows (the orchestrator keeps only the origin outside its sealed store).
 */
function baseUrlOf($: CheerioAPI, pageUrl: string | undefined): string | undefined {
  for (const candidate of [$('base[href]').attr('href'), $('link[rel="canonical"][href]').attr('href')]) {
    if (!candidate) continue;
    try {
      return new URL(candidate, pageUrl).toString();
    } catch {
      // not absolute and nothing to resolve it against
    }
  }
  return pageUrl;
}

function readFields(page: Page, fields: FieldRule[], scope: Scope, prefix: string, out: ExtractionOutcome): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const f of fields) {
    page.spend.add(f.name.length);
    const path = `${prefix}${f.name}`;
    data[f.name] = f.type === 'object' ? readObjects(page, f, scope, path, out) : readScalar(page, f, scope, path, out);
  }
  return data;
}

function readObjects(page: Page, f: FieldRule, scope: Scope, path: string, out: ExtractionOutcome): unknown {
  const items = scope.find(f.scope!).toArray();
  const chosen = f.multiple ? items : items.slice(0, 1);
  const values = chosen.map((el, i) => {
    page.spend.add(0);
    return readFields(page, f.fields!, page.$(el), f.multiple ? `${path}.${i}.` : `${path}.`, out);
  });
  if (values.length === 0) notFound(f, path, out, 'no element matches the scope selector');
  return f.multiple ? values : (values[0] ?? null);
}

function readScalar(page: Page, f: FieldRule, scope: Scope, path: string, out: ExtractionOutcome): unknown {
  const raws = rawValues(page, f.source ?? { type: 'text' }, f.selectors ?? [], scope, Boolean(f.multiple));
  const type = f.type as Exclude<FieldRule['type'], 'object'>;
  const values: Scalar[] = [];
  let uncoercible = 0;
  for (const raw of raws) {
    page.spend.add(typeof raw === 'string' ? raw.length : 16);
    const v = coerceScalar(type, raw, page.baseUrl);
    if (v === undefined) uncoercible += 1;
    else values.push(v);
  }
  if (values.length === 0) {
    notFound(f, path, out, raws.length === 0 ? 'not found on the page' : `found, but not a valid ${type}`);
    return f.multiple ? [] : null;
  }
  if (uncoercible > 0) out.warnings.push({ field: path, issue: `${uncoercible} value(s) were not a valid ${type} and were left out` });
  return f.multiple ? values : values[0];
}

function notFound(f: FieldRule, path: string, out: ExtractionOutcome, why: string): void {
  if (f.required) out.missing.push({ field: path, issue: `required field ${why}` });
  else out.warnings.push({ field: path, issue: why });
}

/** The raw values a source yields in `scope`: all of them when `all`, else at most the first. */
function rawValues(page: Page, source: ExtractionSource, selectors: string[], scope: Scope, all: boolean): unknown[] {
  const $ = page.$;
  const take = <T>(xs: T[]) => (all ? xs : xs.slice(0, 1));
  switch (source.type) {
    case 'text':
    case 'html':
    case 'attribute': {
      for (const sel of selectors) {
        const matched = scope.find(sel).toArray();
        const values = matched
          .map((el) => {
            page.spend.checkTime();
            const node = $(el);
            if (source.type === 'text') return collapseWhitespace(node.text());
            if (source.type === 'html') return node.html()?.trim() ?? '';
            return node.attr(source.name);
          })
          .filter((v): v is string => typeof v === 'string' && v !== '');
        if (values.length > 0) return take(values);
      }
      return [];
    }
    case 'opengraph': {
      const prop = source.property;
      const metas = $(`meta[property="${cssString(prop)}"], meta[name="${cssString(prop)}"]`).toArray();
      return take(metas.map((el) => $(el).attr('content')).filter((v): v is string => typeof v === 'string' && v !== ''));
    }
    case 'microdata': {
      const els = scope.find(`[itemprop~="${cssString(source.itemprop)}"]`).toArray();
      return take(els.map((el) => microdataValue($(el))).filter((v) => v !== ''));
    }
    case 'json_ld': {
      page.jsonLd ??= jsonLdObjects($);
      for (const obj of page.jsonLd) {
        if (source.item_type && !typeMatches(obj['@type'], source.item_type)) continue;
        const found = atPath(obj, source.path.split('.'));
        if (found.length > 0) return take(found);
      }
      return [];
    }
  }
}

function cssString(s: string): string {
  return s.replace(/["\\]/g, '\\$&');
}

function microdataValue(node: ReturnType<CheerioAPI>): string {
  const content = node.attr('content');
  if (content !== undefined) return content;
  const tag = String(node.prop('tagName') ?? '').toLowerCase();
  if (tag === 'a' || tag === 'link') return node.attr('href') ?? '';
  if (tag === 'img' || tag === 'source' || tag === 'video' || tag === 'audio') return node.attr('src') ?? '';
  if (tag === 'meta') return node.attr('content') ?? '';
  if (tag === 'time') return node.attr('datetime') ?? collapseWhitespace(node.text());
  if (tag === 'data' || tag === 'meter') return node.attr('value') ?? collapseWhitespace(node.text());
  return collapseWhitespace(node.text());
}

/** Every JSON-LD object of the page: top-level items, arrays and `@graph` members; broken scripts are skipped. */
function jsonLdObjects($: CheerioAPI): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  const add = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(add);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      objects.push(o);
      if (Array.isArray(o['@graph'])) (o['@graph'] as unknown[]).forEach(add);
    }
  };
  $('script[type="application/ld+json"]').each((_, el) => {
    try {
      add(JSON.parse($(el).text()));
    } catch {
      // a page's broken JSON-LD is not the recipe's fault
    }
  });
  return objects;
}

function typeMatches(t: unknown, wanted: string): boolean {
  return Array.isArray(t) ? t.includes(wanted) : t === wanted;
}

/** Values at a dotted path; arrays on the way are walked into (every element). */
function atPath(value: unknown, keys: string[]): unknown[] {
  if (Array.isArray(value)) return value.flatMap((v) => atPath(v, keys));
  if (keys.length === 0) {
    if (value === null || value === undefined) return [];
    return [value];
  }
  if (!value || typeof value !== 'object') return [];
  return atPath((value as Record<string, unknown>)[keys[0]!], keys.slice(1));
}
