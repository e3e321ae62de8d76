import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startChatCompletionsServer, type ChatCompletionsServer } from '@wdr/testkit';
import { check } from './generate.js';
import { heuristicDefinition } from './heuristic.js';
import { LlmGenerator, reducePage } from './llm.js';

const limits = { maxSchemaBytes: 65_536, maxRules: 100, maxSelectorsPerRule: 5, maxNestingDepth: 2 };

const PRODUCT = `<!doctype html><html><head><title>Trail Shoe X</title>
<meta property="og:title" content="Trail Shoe X">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail Shoe X","brand":{"@type":"Brand","name":"Peak"},"offers":{"@type":"Offer","price":"129.90","priceCurrency":"EUR"}}</script>
<script>var tracking = 1;</script><style>h1{color:red}</style>
</head><body><h1 class="title">Trail Shoe X</h1><p class="price">€129,90</p>
<dl class="specs"><dt>Weight</dt><dd>310 g</dd><dt>Colour</dt><dd>Blue</dd></dl>
<table><tr><th>Drop</th><td>6 mm</td></tr></table>
<ul class="related">
  <li class="card"><a href="/p/1"><span class="name">Road Shoe</span></a><span class="cost">€99</span></li>
  <li class="card"><a href="/p/2"><span class="name">Hike Boot</span></a><span class="cost">€149</span></li>
  <li class="card"><a href="/p/3"><span class="name">Sandal</span></a><span class="cost">€39</span></li>
</ul></body></html>`;

describe('the heuristic generator', () => {
  it('reads structured data, the h1, label/value pairs and repeated blocks, and its rules work on the page', () => {
    const def = heuristicDefinition(PRODUCT, { prompt: 'the product name, price and brand', maxRules: 100, maxSelectorsPerRule: 5 });
    const checked = check(limits, def, PRODUCT, 'https://shop.example', true);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.data).toMatchObject({
      name: 'Trail Shoe X',
      brand_name: 'Peak',
      price: 129.9,
      price_currency: 'EUR',
      og_title: 'Trail Shoe X',
      title: 'Trail Shoe X',
      weight: 310,
      colour: 'Blue',
      drop: 6,
    });
    expect(checked.data['items']).toEqual([
      { cost: 99, name: 'Road Shoe', link: 'https://shop.example/p/1' },
      { cost: 149, name: 'Hike Boot', link: 'https://shop.example/p/2' },
      { cost: 39, name: 'Sandal', link: 'https://shop.example/p/3' },
    ]);
    // What the prompt names comes first and is required.
    expect(checked.definition.fields.filter((f) => f.required).map((f) => f.name)).toEqual(
      expect.arrayContaining(['name', 'brand_name', 'price']),
    );
  });

  it('is deterministic and stays within max_rules', () => {
    const a = heuristicDefinition(PRODUCT, { prompt: 'x', maxRules: 100, maxSelectorsPerRule: 5 });
    expect(heuristicDefinition(PRODUCT, { prompt: 'x', maxRules: 100, maxSelectorsPerRule: 5 })).toEqual(a);
    const small = heuristicDefinition(PRODUCT, { prompt: 'x', maxRules: 3, maxSelectorsPerRule: 5 });
    expect(small.fields).toHaveLength(3);
  });

  it('rejects rules that find nothing', () => {
    const checked = check(
      limits,
      { dsl_version: 1, fields: [{ name: 'sku', type: 'string', required: true, selectors: ['.sku'] }] },
      PRODUCT,
      undefined,
      false,
    );
    expect(checked).toEqual({
      ok: false,
      issues: [
        { field: 'sku', issue: 'required field not found on the page' },
        { field: 'definition', issue: 'no field found anything on the sample page' },
      ],
    });
  });
});

describe('the LLM generator', () => {
  let server: ChatCompletionsServer;
  beforeAll(async () => {
    server = await startChatCompletionsServer({
      respond: (_req, i) =>
        i === 0
          ? 'not json'
          : '```json\n{"dsl_version":1,"fields":[{"name":"title","type":"string","required":true,"selectors":["h1"]}]}\n```',
    });
  });
  afterAll(() => server.close());

  it('asks any chat-completions server for a JSON definition, with the reduced page and the previous issues', async () => {
    const llm = new LlmGenerator({ baseUrl: server.baseUrl, apiKey: server.apiKey, model: 'local-model', timeoutMs: 5_000 });
    await expect(llm.attempt({ prompt: 'the title', html: PRODUCT })).rejects.toThrow('did not answer a JSON object');
    const answer = await llm.attempt({
      prompt: 'the title',
      html: PRODUCT,
      previous: { definition: { fields: [] }, issues: [{ field: 'definition', issue: 'no field found anything' }] },
    });
    expect(answer.definition).toEqual({ dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1'] }] });
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
    const sent = server.requests[1]!;
    expect(sent).toMatchObject({ model: 'local-model', temperature: 0, response_format: { type: 'json_object' } });
    expect(sent.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(sent.messages[1]!.content).toContain('What to extract: the title');
    expect(sent.messages[3]!.content).toContain('definition: no field found anything');
  });

  it('is refused by the server with a wrong key', async () => {
    const llm = new LlmGenerator({ baseUrl: server.baseUrl, apiKey: 'sk-wrong', model: 'm', timeoutMs: 5_000 });
    await expect(llm.attempt({ prompt: 'p', html: PRODUCT })).rejects.toThrow(/401/);
  });

  it('sends the page without scripts and styles, JSON-LD kept', () => {
    const reduced = reducePage(PRODUCT);
    expect(reduced).not.toContain('tracking');
    expect(reduced).not.toContain('color:red');
    expect(reduced).toContain('"brand"');
  });
});
