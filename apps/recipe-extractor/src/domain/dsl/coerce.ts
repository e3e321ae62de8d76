import type { ScalarType } from '@wdr/contracts';

/**
 * Scalar coercion of DSL v1: the raw text a source found becomes a value of the field's type, or
 * `undefined` when it cannot be one (the caller reports that as a field issue).
 */
export type Scalar = string | number | boolean;

const TRUE_WORDS = new Set([
  'true',
  'yes',
  'y',
  '1',
  'on',
  'in stock',
  'instock',
  'available',
  'https://schema.org/instock',
  'http://schema.org/instock',
]);
const FALSE_WORDS = new Set([
  'false',
  'no',
  'n',
  '0',
  'off',
  'out of stock',
  'outofstock',
  'sold out',
  'unavailable',
  'https://schema.org/outofstock',
  'http://schema.org/outofstock',
]);

export function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/**
 * A number as pages write it: currency signs and words around it, thousands separators of either
 * convention (`1,299.50`, `1.299,50`, `1 299`). With both kinds present the last one is the decimal
 * separator; with one kind appearing once it is decimal unless exactly three digits follow
 * (`1,299` is thousands, `12,99` and `4.5` are decimals); appearing more than once, thousands.
 */
export function parseNumber(raw: string): number | undefined {
  const m = /[-+]?\d[\d.,'\u00a0\u202f ]*/.exec(raw);
  if (!m) return undefined;
  let s = m[0].replace(/[\s'\u00a0\u202f]/g, '');
  s = s.replace(/[.,]+$/, '');
  const negative = s.startsWith('-');
  s = s.replace(/^[-+]/, '');
  const lastDot = s.lastIndexOf('.');
  const lastComma = s.lastIndexOf(',');
  const sep = Math.max(lastDot, lastComma);
  let intPart = s;
  let frac = '';
  if (sep >= 0) {
    const after = s.slice(sep + 1);
    const sepChar = s[sep]!;
    const bothKinds = lastDot >= 0 && lastComma >= 0;
    const count = s.split(sepChar).length - 1;
    // `1,299` and `1.299` (one separator kind, three digits after) are thousands; `4.5`, `12,99` decimals.
    const isDecimal = bothKinds || count === 1 ? !(after.length === 3 && !bothKinds) : false;
    if (isDecimal) {
      intPart = s.slice(0, sep);
      frac = after;
    }
  }
  intPart = intPart.replace(/[.,]/g, '');
  if (!/^\d+$/.test(intPart) || !/^\d*$/.test(frac)) return undefined;
  const n = Number(`${negative ? '-' : ''}${intPart}${frac ? `.${frac}` : ''}`);
  return Number.isFinite(n) ? n : undefined;
}

export function coerceScalar(type: ScalarType, raw: unknown, baseUrl: string | undefined): Scalar | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === 'object') return undefined;
  switch (type) {
    case 'string': {
      const s = collapseWhitespace(String(raw));
      return s === '' ? undefined : s;
    }
    case 'number':
      return typeof raw === 'number' ? raw : parseNumber(String(raw));
    case 'integer': {
      const n = typeof raw === 'number' ? raw : parseNumber(String(raw));
      return n !== undefined && Number.isInteger(n) ? n : undefined;
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const w = collapseWhitespace(String(raw)).toLowerCase();
      if (TRUE_WORDS.has(w)) return true;
      if (FALSE_WORDS.has(w)) return false;
      return undefined;
    }
    case 'url': {
      const s = String(raw).trim();
      if (s === '') return undefined;
      try {
        const u = baseUrl ? new URL(s, baseUrl) : new URL(s);
        return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : undefined;
      } catch {
        return undefined;
      }
    }
    case 'date': {
      const s = collapseWhitespace(String(raw));
      if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ? undefined : s;
      const t = Date.parse(s);
      return Number.isNaN(t) ? undefined : new Date(t).toISOString();
    }
  }
}
