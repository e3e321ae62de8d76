#!/usr/bin/env node
// Extraction runs/s of the DSL v1 engine (recipe-extractor's extract(): parse, select, coerce,
// object collections) on a ~200 KB product page with a 20-field recipe, beside cheerio alone
// doing the same selections (load + the same first/all matches, raw text/attributes/JSON-LD,
// no coercion) in the same process, alternating, median of 3 rounds. Target: >= 0.5x.
//
//   npx turbo run build --filter=@wdr/recipe-extractor && node bench/extraction.mjs [--seconds 3] [--rounds 3]
import { load } from 'cheerio/slim';
import { cpus, loadavg } from 'node:os';
import { extract } from '../apps/recipe-extractor/dist/domain/dsl/extract.js';
import { benchReport } from './lib/report.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg('seconds', 3);
const ROUNDS = arg('rounds', 3);

// A product page: head with JSON-LD and OpenGraph, the product block, a spec table, reviews, and
// a large related-products grid plus boilerplate to bring it to ~200 KB.
function page() {
  const related = Array.from(
    { length: 560 },
    (_, i) =>
      `<li class="card" data-sku="R-${i}"><a href="/p/${i}"><img src="/img/r${i}.jpg" alt="Related ${i}"><span class="name">Related product ${i} with a longer name</span></a><span class="cost">€${(19 + i * 0.5).toFixed(2)}</span><p class="blurb">Lightweight, durable and made for every trail. Item ${i} of the related grid.</p></li>`,
  ).join('\n');
  const reviews = Array.from(
    { length: 90 },
    (_, i) =>
      `<section class="review"><span class="author">Reviewer ${i}</span><span class="stars">${(i % 5) + 1}</span><time datetime="2026-0${(i % 9) + 1}-1${i % 10}">a while ago</time><p class="body">${'Great shoe, fits well and grips on wet rock. '.repeat(3)}</p></section>`,
  ).join('\n');
  const nav = Array.from({ length: 120 }, (_, i) => `<li><a href="/c/${i}">Category ${i}</a></li>`).join('');
  return `<!doctype html><html><head><title>Trail Shoe X</title>
<meta property="og:title" content="Trail Shoe X"><meta property="og:image" content="https://shop.example/img/1.jpg"><meta property="og:type" content="product">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail Shoe X","sku":"TSX-1","gtin13":"4006381333931","brand":{"@type":"Brand","name":"Peak"},"offers":{"@type":"Offer","price":"129.90","priceCurrency":"EUR","availability":"https://schema.org/InStock"},"aggregateRating":{"@type":"AggregateRating","ratingValue":"4.6","reviewCount":"90"}}</script>
</head><body><header><nav><ul>${nav}</ul></nav></header>
<main><div id="product" itemscope itemtype="https://schema.org/Product">
<h1 class="title" itemprop="name">Trail Shoe X</h1><p class="price">€129,90</p><span class="stock">In stock</span>
<img class="main" src="/img/1.png" alt=""><div class="description">${'A fast, light trail shoe. '.repeat(20)}</div>
<span itemprop="color">Blue</span><span itemprop="material">Mesh</span>
<table class="specs"><tr><th>Weight</th><td class="weight">310 g</td></tr><tr><th>Drop</th><td class="drop">6 mm</td></tr><tr><th>Released</th><td class="released">2026-03-01</td></tr></table>
<ul class="sizes">${Array.from({ length: 12 }, (_, i) => `<li class="size">${38 + i}</li>`).join('')}</ul>
</div>${reviews}<ul class="related">${related}</ul></main>
<footer>${'<p>Terms, privacy, shipping and returns. Company information and legal notices.</p>'.repeat(60)}</footer></body></html>`;
}

const RECIPE = {
  dsl_version: 1,
  fields: [
    { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
    { name: 'price', type: 'number', required: true, selectors: ['.price'] },
    { name: 'in_stock', type: 'boolean', selectors: ['.stock'] },
    { name: 'image', type: 'url', selectors: ['img.main'], source: { type: 'attribute', name: 'src' } },
    { name: 'description', type: 'string', selectors: ['.description'] },
    { name: 'weight', type: 'number', selectors: ['td.weight'] },
    { name: 'drop', type: 'integer', selectors: ['td.drop'] },
    { name: 'released', type: 'date', selectors: ['td.released'] },
    { name: 'sizes', type: 'integer', multiple: true, selectors: ['li.size'] },
    { name: 'brand', type: 'string', source: { type: 'json_ld', path: 'brand.name', item_type: 'Product' } },
    { name: 'sku', type: 'string', source: { type: 'json_ld', path: 'sku' } },
    { name: 'currency', type: 'string', source: { type: 'json_ld', path: 'offers.priceCurrency' } },
    { name: 'rating', type: 'number', source: { type: 'json_ld', path: 'aggregateRating.ratingValue' } },
    { name: 'og_title', type: 'string', source: { type: 'opengraph', property: 'og:title' } },
    { name: 'og_image', type: 'url', source: { type: 'opengraph', property: 'og:image' } },
    { name: 'color', type: 'string', source: { type: 'microdata', itemprop: 'color' } },
    { name: 'material', type: 'string', source: { type: 'microdata', itemprop: 'material' } },
    { name: 'related_links', type: 'url', multiple: true, selectors: ['li.card > a'], source: { type: 'attribute', name: 'href' } },
    { name: 'related_names', type: 'string', multiple: true, selectors: ['li.card .name'] },
    {
      name: 'reviews',
      type: 'object',
      multiple: true,
      scope: 'section.review',
      fields: [
        { name: 'author', type: 'string', selectors: ['.author'] },
        { name: 'stars', type: 'integer', selectors: ['.stars'] },
      ],
    },
  ],
};

/** cheerio alone: the same selections, raw strings, no coercion, no schema, no warnings. */
function cheerioAlone(html) {
  const $ = load(html);
  const t = (sel) => $(sel).first().text().trim();
  const ld = JSON.parse($('script[type="application/ld+json"]').first().text());
  return {
    title: t('h1.title'),
    price: t('.price'),
    in_stock: t('.stock'),
    image: $('img.main').first().attr('src'),
    description: t('.description'),
    weight: t('td.weight'),
    drop: t('td.drop'),
    released: t('td.released'),
    sizes: $('li.size')
      .map((_, e) => $(e).text().trim())
      .get(),
    brand: ld.brand?.name,
    sku: ld.sku,
    currency: ld.offers?.priceCurrency,
    rating: ld.aggregateRating?.ratingValue,
    og_title: $('meta[property="og:title"]').attr('content'),
    og_image: $('meta[property="og:image"]').attr('content'),
    color: t('[itemprop~="color"]'),
    material: t('[itemprop~="material"]'),
    related_links: $('li.card > a')
      .map((_, e) => $(e).attr('href'))
      .get(),
    related_names: $('li.card .name')
      .map((_, e) => $(e).text().trim())
      .get(),
    reviews: $('section.review')
      .map((_, e) => ({ author: $(e).find('.author').first().text().trim(), stars: $(e).find('.stars').first().text().trim() }))
      .get(),
  };
}

const html = page();
const dsl = () => extract(RECIPE, html, { pageUrl: 'https://shop.example/p/tsx' });

// Sanity: both find the same things, the engine's output is complete.
const a = dsl();
const b = cheerioAlone(html);
if (a.missing.length || a.warnings.length) throw new Error(`DSL run not clean: ${JSON.stringify([a.missing, a.warnings])}`);
if (a.data.related_names.length !== b.related_names.length || a.data.reviews.length !== b.reviews.length || a.data.sizes.length !== 12)
  throw new Error('selections differ');

function runsPerSecond(fn) {
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  while (performance.now() < end) {
    fn();
    n += 1;
  }
  return n / SECONDS;
}
for (let i = 0; i < 20; i += 1) {
  dsl();
  cheerioAlone(html);
} // warm-up

const rows = [];
for (let r = 0; r < ROUNDS; r += 1) {
  const engine = runsPerSecond(dsl);
  const cheerio = runsPerSecond(() => cheerioAlone(html));
  rows.push({ engine, cheerio });
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const engine = median(rows.map((r) => r.engine));
const cheerio = median(rows.map((r) => r.cheerio));
console.log(
  `page ${(Buffer.byteLength(html) / 1024).toFixed(0)} KB, recipe ${RECIPE.fields.length} fields, ${SECONDS} s per measurement, ${ROUNDS} alternating rounds, ${cpus().length} CPUs, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log('| | runs/s (median) | ms/run | rounds |');
console.log('|---|---|---|---|');
console.log(
  `| DSL engine (extract) | ${engine.toFixed(1)} | ${(1000 / engine).toFixed(2)} | ${rows.map((r) => r.engine.toFixed(1)).join(', ')} |`,
);
console.log(
  `| cheerio alone | ${cheerio.toFixed(1)} | ${(1000 / cheerio).toFixed(2)} | ${rows.map((r) => r.cheerio.toFixed(1)).join(', ')} |`,
);
console.log(`ratio engine/cheerio: ${(engine / cheerio).toFixed(2)}x (target >= 0.5x)`);
const report = benchReport('extraction');
// Checked before timing (a throw ends the bench): the engine's run clean, both found the same things.
report.check('engine and cheerio found the same selections, the engine run clean', true);
report.figure('extraction: DSL engine runs/s', engine, {
  reference: cheerio,
  referenceName: 'cheerio alone',
  target: { op: '>=', value: 0.5, of: 'ratio' },
});
report.finish();
