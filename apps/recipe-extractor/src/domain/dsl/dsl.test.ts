import { describe, expect, it } from '@jest/globals';
import type { RecipeDefinition } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { DSL_BOMB_RECIPE, dslBombPage } from '@wdr/testkit';
import { coerceScalar, parseNumber } from './coerce.js';
import { extract, ExtractionBudgetExceeded } from './extract.js';
import { outputSchema, validateOutput } from './schema.js';
import { validateDefinition, type DslLimits } from './validate.js';

const LIMITS: DslLimits = { maxSchemaBytes: 65_536, maxRules: 100, maxSelectorsPerRule: 5, maxNestingDepth: 2 };

const PRODUCT = `<!doctype html><html><head>
<title>Trail Shoe</title>
<link rel="canonical" href="https://shop.example/p/trail-shoe">
<meta property="og:title" content="Trail Shoe X (OG)">
<meta property="og:image" content="/img/shoe.jpg">
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"BreadcrumbList"},{"@type":"Product","name":"Trail Shoe X","sku":"TS-1","brand":{"@type":"Brand","name":"Peak"},"offers":{"@type":"Offer","price":"129.90","priceCurrency":"EUR","availability":"https://schema.org/InStock"}}]}</script>
<script type="application/ld+json">{ broken</script>
</head><body>
<h1 class="title">  Trail   Shoe X </h1>
<p class="price">€1.299,50</p>
<span class="stock">In stock</span>
<span class="reviews-count">1,204 reviews</span>
<time class="released" datetime="2026-03-01">March 1</time>
<div class="desc"><b>Light</b> and grippy</div>
<a class="manual" href="../docs/manual.pdf">Manual</a>
<ul class="tags"><li>running</li><li>trail</li><li> </li></ul>
<div itemscope itemtype="https://schema.org/Product"><span itemprop="color">Blue</span><meta itemprop="gtin" content="4006381333931"></div>
<section class="review"><span class="author">Ann</span><span class="stars">5</span><p class="pro">grip</p><p class="pro">fit</p></section>
<section class="review"><span class="author">Bob</span><span class="stars">four</span></section>
</body></html>`;

const def = (fields: unknown[]): RecipeDefinition => validateDefinition({ dsl_version: 1, fields }, LIMITS);

function validationDetails(fn: () => unknown): { field: string; issue: string }[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PublicError);
    expect((err as PublicError).code).toBe('VALIDATION_FAILED');
    return (err as PublicError).details ?? [];
  }
  throw new Error('expected a VALIDATION_FAILED');
}

describe('coercion', () => {
  it.each([
    ['42.00', 42],
    ['$1,299.99', 1299.99],
    ['€1.299,50', 1299.5],
    ['1,299', 1299],
    ['12,99 €', 12.99],
    ['1 234 567', 1234567],
    ['-3.5', -3.5],
    ['4.5 out of 5', 4.5],
    ['no digits', undefined],
  ])('parses %j as %j', (raw, n) => expect(parseNumber(raw)).toBe(n));

  it('coerces each scalar type or gives up', () => {
    expect(coerceScalar('integer', '1,204 reviews', undefined)).toBe(1204);
    expect(coerceScalar('integer', '4.5', undefined)).toBeUndefined();
    expect(coerceScalar('boolean', ' In Stock ', undefined)).toBe(true);
    expect(coerceScalar('boolean', 'https://schema.org/OutOfStock', undefined)).toBe(false);
    expect(coerceScalar('boolean', 'maybe', undefined)).toBeUndefined();
    expect(coerceScalar('url', '/a/b?c=1', 'https://x.example/p/q')).toBe('https://x.example/a/b?c=1');
    expect(coerceScalar('url', 'javascript:alert(1)', 'https://x.example/')).toBeUndefined();
    expect(coerceScalar('date', '2026-03-01', undefined)).toBe('2026-03-01');
    expect(coerceScalar('date', 'Sun, 01 Mar 2026 10:00:00 GMT', undefined)).toBe('2026-03-01T10:00:00.000Z');
    expect(coerceScalar('date', 'soon', undefined)).toBeUndefined();
    expect(coerceScalar('string', '  a \n b ', undefined)).toBe('a b');
    expect(coerceScalar('number', 129.9, undefined)).toBe(129.9);
  });
});

describe('extraction', () => {
  it('reads every source kind, coerces, and resolves URLs against the canonical link', () => {
    const d = def([
      { name: 'title', type: 'string', required: true, selectors: ['h1.missing', 'h1.title'] },
      { name: 'price', type: 'number', required: true, selectors: ['.price'] },
      { name: 'in_stock', type: 'boolean', selectors: ['.stock'] },
      { name: 'review_count', type: 'integer', selectors: ['.reviews-count'] },
      { name: 'released', type: 'date', selectors: ['time.released'], source: { type: 'attribute', name: 'datetime' } },
      { name: 'description_html', type: 'string', selectors: ['.desc'], source: { type: 'html' } },
      { name: 'manual', type: 'url', selectors: ['a.manual'], source: { type: 'attribute', name: 'href' } },
      { name: 'tags', type: 'string', multiple: true, selectors: ['.tags li'] },
      { name: 'brand', type: 'string', source: { type: 'json_ld', path: 'brand.name', item_type: 'Product' } },
      { name: 'ld_price', type: 'number', source: { type: 'json_ld', path: 'offers.price' } },
      { name: 'available', type: 'boolean', source: { type: 'json_ld', path: 'offers.availability' } },
      { name: 'og_title', type: 'string', source: { type: 'opengraph', property: 'og:title' } },
      { name: 'og_image', type: 'url', source: { type: 'opengraph', property: 'og:image' } },
      { name: 'color', type: 'string', source: { type: 'microdata', itemprop: 'color' } },
      { name: 'gtin', type: 'string', source: { type: 'microdata', itemprop: 'gtin' } },
    ]);
    const r = extract(d, PRODUCT, { pageUrl: 'http://127.0.0.1:1/p' });
    expect(r.missing).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.data).toEqual({
      title: 'Trail Shoe X',
      price: 1299.5,
      in_stock: true,
      review_count: 1204,
      released: '2026-03-01',
      description_html: '<b>Light</b> and grippy',
      manual: 'https://shop.example/docs/manual.pdf',
      tags: ['running', 'trail'],
      brand: 'Peak',
      ld_price: 129.9,
      available: true,
      og_title: 'Trail Shoe X (OG)',
      og_image: 'https://shop.example/img/shoe.jpg',
      color: 'Blue',
      gtin: '4006381333931',
    });
    expect(validateOutput(d, r.data)).toEqual([]);
  });

  it('reads object collections inside their scope, nested, with per-item issues', () => {
    const d = def([
      {
        name: 'reviews',
        type: 'object',
        multiple: true,
        scope: 'section.review',
        fields: [
          { name: 'author', type: 'string', required: true, selectors: ['.author'] },
          { name: 'stars', type: 'integer', selectors: ['.stars'] },
          { name: 'pros', type: 'string', multiple: true, selectors: ['.pro'] },
        ],
      },
      {
        name: 'first_review',
        type: 'object',
        scope: 'section.review',
        fields: [{ name: 'author', type: 'string', selectors: ['.author'] }],
      },
    ]);
    const r = extract(d, PRODUCT);
    expect(r.data).toEqual({
      reviews: [
        { author: 'Ann', stars: 5, pros: ['grip', 'fit'] },
        { author: 'Bob', stars: null, pros: [] },
      ],
      first_review: { author: 'Ann' },
    });
    expect(r.missing).toEqual([]);
    expect(r.warnings).toEqual([
      { field: 'reviews.1.stars', issue: 'found, but not a valid integer' },
      { field: 'reviews.1.pros', issue: 'not found on the page' },
    ]);
    expect(validateOutput(d, r.data)).toEqual([]);
  });

  it('reports a required field that is absent or not of its type as missing, optional ones as null with a warning', () => {
    const d = def([
      { name: 'sku', type: 'string', required: true, selectors: ['.sku'] },
      { name: 'stars', type: 'number', required: true, selectors: ['h1.title'] },
      { name: 'subtitle', type: 'string', selectors: ['h2'] },
      {
        name: 'items',
        type: 'object',
        required: true,
        multiple: true,
        scope: '.nope',
        fields: [{ name: 'x', type: 'string', selectors: ['b'] }],
      },
    ]);
    const r = extract(d, PRODUCT);
    expect(r.missing).toEqual([
      { field: 'sku', issue: 'required field not found on the page' },
      { field: 'stars', issue: 'required field found, but not a valid number' },
      { field: 'items', issue: 'required field no element matches the scope selector' },
    ]);
    expect(r.data).toEqual({ sku: null, stars: null, subtitle: null, items: [] });
    expect(validateOutput(d, r.data).map((i) => i.field)).toEqual(['sku', 'stars', 'items']);
  });

  it('derives the JSON Schema of the output', () => {
    const d = def([
      { name: 'title', type: 'string', required: true, selectors: ['h1'] },
      { name: 'tags', type: 'url', multiple: true, selectors: ['a'], source: { type: 'attribute', name: 'href' } },
    ]);
    expect(outputSchema(d)).toMatchObject({
      type: 'object',
      required: ['title', 'tags'],
      properties: { title: { type: 'string' }, tags: { type: 'array', items: { type: 'string', format: 'uri' } } },
    });
  });
});

describe('definition rules and limits', () => {
  it('refuses a wrong shape with the path of each problem', () => {
    const details = validationDetails(() =>
      validateDefinition({ dsl_version: 2, fields: [{ name: '1bad', type: 'money', selectors: ['h1'], extra: true }] }, LIMITS),
    );
    expect(details.map((d) => d.field)).toEqual(
      expect.arrayContaining(['definition.dsl_version', 'definition.fields.0.name', 'definition.fields.0.type']),
    );
  });

  it('refuses what a source or an object needs and does not have', () => {
    const details = validationDetails(() =>
      def([
        { name: 'a', type: 'string' },
        { name: 'a', type: 'string', selectors: ['h1'] },
        { name: 'b', type: 'string', selectors: ['h1'], source: { type: 'opengraph', property: 'og:title' } },
        { name: 'c', type: 'object', fields: [] },
        { name: 'd', type: 'string', selectors: ['h1['] },
        { name: 'e', type: 'string', selectors: ['h1'], scope: 'div' },
      ]),
    );
    expect(details).toEqual([
      { field: 'definition.fields.0.selectors', issue: 'a text source needs at least one selector' },
      { field: 'definition.fields.1.name', issue: 'duplicates another field named a' },
      { field: 'definition.fields.2.selectors', issue: 'a opengraph source takes no selectors' },
      { field: 'definition.fields.3.scope', issue: 'is required for an object field (the CSS selector of each item)' },
      { field: 'definition.fields.3.fields', issue: 'an object field needs at least one field' },
      { field: 'definition.fields.4.selectors.0', issue: 'is not a valid CSS selector' },
      { field: 'definition.fields.5.scope', issue: 'only object fields have a scope' },
    ]);
  });

  it('enforces max_rules, max_selectors_per_rule, max_object_nesting_depth and max_schema_bytes', () => {
    const small: DslLimits = { maxSchemaBytes: 2_000, maxRules: 3, maxSelectorsPerRule: 2, maxNestingDepth: 1 };
    const field = (name: string) => ({ name, type: 'string', selectors: ['h1'] });
    expect(validationDetails(() => validateDefinition({ dsl_version: 1, fields: ['a', 'b', 'c', 'd'].map(field) }, small))).toEqual([
      { field: 'definition.fields', issue: 'has 4 rules; max_rules is 3' },
    ]);
    expect(
      validationDetails(() => validateDefinition({ dsl_version: 1, fields: [{ ...field('a'), selectors: ['h1', 'h2', 'h3'] }] }, small)),
    ).toEqual([{ field: 'definition.fields.0.selectors', issue: 'has 3 selectors; max_selectors_per_rule is 2' }]);
    const nested = { name: 'o', type: 'object', scope: 'div', fields: [{ name: 'p', type: 'object', scope: 'p', fields: [field('x')] }] };
    expect(validationDetails(() => validateDefinition({ dsl_version: 1, fields: [nested] }, small))).toEqual([
      { field: 'definition.fields.0.fields.0', issue: 'nests objects 2 deep; max_object_nesting_depth is 1' },
    ]);
    const big = {
      dsl_version: 1,
      fields: [
        { ...field('a'), description: 'x'.repeat(1_000) },
        { ...field('b'), description: 'x'.repeat(1_000) },
      ],
    };
    expect(validationDetails(() => validateDefinition(big, small))).toEqual([
      { field: 'definition', issue: expect.stringMatching(/^is \d+ bytes as JSON; max_schema_bytes is 2000$/) },
    ]);
  });
});

describe('extraction budget', () => {
  // Nested `multiple` object scopes over nested markup: every level re-reads every descendant.
  const bomb = dslBombPage(400);
  const def = DSL_BOMB_RECIPE as unknown as RecipeDefinition;

  it('ends a run that would produce more than its output budget with ExtractionBudgetExceeded', () => {
    const started = Date.now();
    expect(() => extract(def, bomb, { budget: { maxOutputChars: 100_000, maxMs: 60_000 } })).toThrow(ExtractionBudgetExceeded);
    expect(Date.now() - started).toBeLessThan(5_000);
    try {
      extract(def, bomb, { budget: { maxOutputChars: 100_000, maxMs: 60_000 } });
    } catch (err) {
      expect((err as ExtractionBudgetExceeded).kind).toBe('output');
    }
  });

  it('ends a run that takes longer than its time budget', () => {
    try {
      extract(def, bomb, { budget: { maxOutputChars: 1_000_000_000, maxMs: 100 } });
      throw new Error('not ended');
    } catch (err) {
      expect(err).toBeInstanceOf(ExtractionBudgetExceeded);
      expect((err as ExtractionBudgetExceeded).kind).toBe('time');
    }
  });

  it('leaves an ordinary page well inside the default budget', () => {
    const small = `<html><body>${'<div class="n"><span>x</span></div>'.repeat(5)}</body></html>`;
    expect(extract(def, small).data['a']).toHaveLength(5);
  });
});
