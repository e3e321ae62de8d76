// The htmlparser2 build, as the extractor: the generator reads the same tree the rules will run on.
import { load, type CheerioAPI } from 'cheerio/slim';
import type { FieldRule, RecipeDefinition, ScalarType } from '@wdr/contracts';
import { collapseWhitespace, parseNumber } from '../dsl/coerce.js';

/**
 * The offline generator: a deterministic function of (page, prompt). Candidates come in order of
 * trust: structured data the page already publishes (JSON-LD, microdata, OpenGraph), the page's
 * `<h1>`, label/value patterns (`dt`/`dd`, `th`/`td` rows), then the largest block of repeated
 * siblings as an object collection. Field names the prompt mentions are kept first and made
 * required; the caller validates the result on the page (and drops what did not extract).
 */
/** The bits of a cheerio element the generator reads (its node type is not exported by cheerio). */
interface Element {
  type: string;
  tagName: string;
  attribs: Record<string, string>;
  parent: unknown;
}
type AnyNode = unknown;

export interface HeuristicOptions {
  prompt: string;
  maxRules: number;
  maxSelectorsPerRule: number;
}

export function heuristicDefinition(html: string, opts: HeuristicOptions): RecipeDefinition {
  const $ = load(html);
  const out = new Candidates();
  fromJsonLd($, out);
  fromMicrodata($, out);
  fromOpenGraph($, out);
  const h1 = $('h1').first();
  if (h1.length && collapseWhitespace(h1.text()))
    out.add({ name: 'title', type: 'string', selectors: [selectorFor($, h1[0] as unknown as Element)] });
  fromLabelValues($, out);
  fromRepeatedBlocks($, out);
  const words = new Set(
    opts.prompt
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 2),
  );
  const mentioned = (f: FieldRule) => f.name.split('_').some((part) => words.has(part) || words.has(`${part}s`));
  let fields = [...out.fields.filter(mentioned).map((f) => ({ ...f, required: true })), ...out.fields.filter((f) => !mentioned(f))];
  // Rules count nested ones; keep within max_rules.
  let rules = 0;
  fields = fields.filter((f) => {
    const n = 1 + (f.fields?.length ?? 0);
    if (rules + n > opts.maxRules) return false;
    rules += n;
    return true;
  });
  return { dsl_version: 1, fields };
}

class Candidates {
  readonly fields: FieldRule[] = [];
  private readonly names = new Set<string>();
  /** A field under a free name; the same source twice is kept once. */
  add(f: FieldRule): void {
    const key = JSON.stringify({ ...f, name: '' });
    if (this.fields.some((g) => JSON.stringify({ ...g, name: '' }) === key)) return;
    let name = f.name || 'field';
    for (let i = 2; this.names.has(name); i += 1) name = `${f.name}_${i}`;
    this.names.add(name);
    this.fields.push({ ...f, name });
  }
}

export function snake(s: string): string {
  const out = s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);
  return /^[a-z]/.test(out) ? out : `f_${out}`;
}

/** The scalar type a raw value reads as. */
export function typeOf(raw: unknown): ScalarType {
  if (typeof raw === 'number') return Number.isInteger(raw) ? 'integer' : 'number';
  if (typeof raw === 'boolean') return 'boolean';
  const s = collapseWhitespace(String(raw));
  if (/^https?:\/\//i.test(s) && !/schema\.org\/(InStock|OutOfStock)/i.test(s)) return 'url';
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s)) return 'date';
  // A short string that is mostly a number (a price, a count): number.
  if (s.length <= 24 && /\d/.test(s) && /^[^A-Za-z]*[A-Za-z]{0,4}[^A-Za-z]*$/.test(s) && parseNumber(s) !== undefined) return 'number';
  return 'string';
}

const JSON_LD_SKIP = new Set(['@context', '@id', '@type', '@graph']);

function fromJsonLd($: CheerioAPI, out: Candidates): void {
  const objects: Record<string, unknown>[] = [];
  $('script[type="application/ld+json"]').each((_, el) => {
    try {
      const v: unknown = JSON.parse($(el).text());
      const add = (x: unknown) => {
        if (Array.isArray(x)) x.forEach(add);
        else if (x && typeof x === 'object') {
          objects.push(x as Record<string, unknown>);
          const g = (x as Record<string, unknown>)['@graph'];
          if (Array.isArray(g)) g.forEach(add);
        }
      };
      add(v);
    } catch {
      // broken JSON-LD offers nothing
    }
  });
  for (const obj of objects) {
    const type = Array.isArray(obj['@type']) ? obj['@type'][0] : obj['@type'];
    const itemType = typeof type === 'string' ? type : undefined;
    if (itemType === 'BreadcrumbList' || itemType === 'WebSite' || itemType === 'Organization') continue;
    const walk = (value: unknown, path: string[]) => {
      if (path.length > 2) return;
      if (Array.isArray(value)) {
        // Arrays of scalars (images): one multiple field; arrays of objects: their first item's leaves.
        const first = value[0];
        if (first !== null && typeof first === 'object') return walk(first, path);
        if (first !== undefined) {
          out.add({
            name: snake(path.join('_')),
            type: typeOf(first),
            multiple: true,
            source: { type: 'json_ld', path: path.join('.'), ...(itemType ? { item_type: itemType } : {}) },
          });
        }
        return;
      }
      if (value !== null && typeof value === 'object') {
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (!JSON_LD_SKIP.has(k)) walk(v, [...path, k]);
        return;
      }
      if (value === null || value === undefined || String(value).trim() === '') return;
      // offers.price -> price; brand.name -> brand_name
      const name = path.length === 2 && ['offers', 'aggregateRating'].includes(path[0]!) ? path[1]! : path.join('_');
      out.add({
        name: snake(name),
        type: typeOf(value),
        source: { type: 'json_ld', path: path.join('.'), ...(itemType ? { item_type: itemType } : {}) },
      });
    };
    walk(obj, []);
  }
}

function fromMicrodata($: CheerioAPI, out: Candidates): void {
  const seen = new Set<string>();
  $('[itemprop]').each((_, el) => {
    const node = $(el);
    if (node.is('[itemscope]')) return;
    for (const prop of (node.attr('itemprop') ?? '').split(/\s+/).filter(Boolean)) {
      if (seen.has(prop)) continue;
      seen.add(prop);
      const raw = node.attr('content') ?? node.attr('href') ?? node.attr('src') ?? collapseWhitespace(node.text());
      if (!raw) continue;
      out.add({ name: snake(prop), type: typeOf(raw), source: { type: 'microdata', itemprop: prop } });
    }
  });
}

function fromOpenGraph($: CheerioAPI, out: Candidates): void {
  $('meta[property^="og:"]').each((_, el) => {
    const prop = $(el).attr('property')!;
    const content = $(el).attr('content');
    if (!content) return;
    out.add({ name: snake(prop.replace(':', '_')), type: typeOf(content), source: { type: 'opengraph', property: prop } });
  });
}

/** `dt`/`dd` pairs and `th`/`td` rows: one field per label, found again by its label's text. */
function fromLabelValues($: CheerioAPI, out: Candidates): void {
  const quote = (s: string) => s.replace(/["\\]/g, '\\$&');
  $('dt').each((_, el) => {
    const label = collapseWhitespace($(el).text());
    const value = collapseWhitespace($(el).next('dd').text());
    if (!label || !value || label.length > 40) return;
    out.add({ name: snake(label), type: typeOf(value), selectors: [`dt:contains("${quote(label)}") + dd`] });
  });
  $('tr').each((_, el) => {
    const th = $(el).children('th').first();
    const td = $(el).children('td').first();
    const label = collapseWhitespace(th.text());
    const value = collapseWhitespace(td.text());
    if (!label || !value || label.length > 40) return;
    out.add({ name: snake(label), type: typeOf(value), selectors: [`tr:has(> th:contains("${quote(label)}")) > td`] });
  });
}

/** The biggest group (>= 3) of same-tag, same-class siblings becomes `items`: one object per block. */
function fromRepeatedBlocks($: CheerioAPI, out: Candidates): void {
  let best: { parent: Element; signature: string; count: number; text: number } | undefined;
  $('body *').each((_, parent) => {
    const groups = new Map<string, Element[]>();
    for (const child of $(parent).children().toArray() as unknown as Element[]) {
      const cls = classesOf(child);
      if (cls.length === 0) continue;
      const sig = `${child.tagName}.${cls.join('.')}`;
      groups.set(sig, [...(groups.get(sig) ?? []), child]);
    }
    for (const [signature, items] of groups) {
      if (items.length < 3) continue;
      const text = items.reduce((n, el) => n + collapseWhitespace($(el as never).text()).length, 0);
      if (!best || text > best.text) best = { parent: parent as unknown as Element, signature, count: items.length, text };
    }
  });
  if (!best) return;
  const scope = `${selectorFor($, best.parent)} > ${best.signature
    .split('.')
    .map((p, i) => (i === 0 ? p : cssIdent(p)))
    .join('.')}`;
  const items = $(scope).toArray();
  // Sub-fields: class-bearing descendants with text that most items have.
  const counts = new Map<string, { n: number; sample: string }>();
  for (const item of items) {
    const seen = new Set<string>();
    $(item)
      .find('*')
      .each((_, d) => {
        const cls = classesOf(d);
        if (cls.length === 0) return;
        const sel = `${(d as unknown as Element).tagName}.${cls.map(cssIdent).join('.')}`;
        const text = collapseWhitespace($(d).text());
        if (!text || seen.has(sel) || $(d).children().length > 2) return;
        seen.add(sel);
        const c = counts.get(sel) ?? { n: 0, sample: text };
        c.n += 1;
        counts.set(sel, c);
      });
  }
  const fields: FieldRule[] = [];
  const names = new Set<string>();
  for (const [sel, c] of counts) {
    if (c.n < Math.ceil(items.length / 2) || fields.length >= 8) continue;
    let name = snake(sel.split('.').slice(1).join('_'));
    for (let i = 2; names.has(name); i += 1) name = `${name}_${i}`;
    names.add(name);
    fields.push({ name, type: typeOf(c.sample), selectors: [sel] });
  }
  const link = $(items[0]!).find('a[href]').first();
  if (link.length && fields.length < 8)
    fields.push({ name: 'link', type: 'url', selectors: ['a[href]'], source: { type: 'attribute', name: 'href' } });
  if (fields.length === 0) fields.push({ name: 'text', type: 'string', selectors: ['*'] });
  out.add({ name: 'items', type: 'object', multiple: true, scope, fields });
}

function classesOf(el: AnyNode): string[] {
  const c = (el as Element).attribs?.['class'];
  return c
    ? c
        .split(/\s+/)
        .filter((x) => /^[A-Za-z_][\w-]*$/.test(x))
        .sort()
    : [];
}

function cssIdent(s: string): string {
  return s.replace(/[^\w-]/g, (ch) => `\\${ch}`);
}

/** A CSS selector that finds `el` first: its id, a unique tag.class, else a child path from one. */
export function selectorFor($: CheerioAPI, el: Element): string {
  const parts: string[] = [];
  let cur: Element | null = el;
  while (cur && cur.type === 'tag') {
    const id = cur.attribs['id'];
    if (id && /^[A-Za-z][\w-]*$/.test(id)) {
      parts.unshift(`#${id}`);
      break;
    }
    const cls = classesOf(cur).map(cssIdent);
    const own = cls.length ? `${cur.tagName}.${cls.join('.')}` : cur.tagName;
    const candidate = [own, ...parts].join(' > ');
    parts.unshift(own);
    if (($(candidate).first()[0] as unknown) === el && (cls.length > 0 || cur.tagName === 'h1')) return candidate;
    if (cur.tagName === 'body') break;
    cur = cur.parent as Element | null;
  }
  return parts.join(' > ');
}
