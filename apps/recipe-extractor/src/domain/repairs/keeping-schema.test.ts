import { describe, expect, it } from '@jest/globals';
import type { RecipeDefinition } from '@wdr/contracts';
import { extract } from '../dsl/extract.js';
import { attemptPlan } from '../generation/attempts.js';
import { check } from '../generation/generate.js';
import { heuristicDefinition } from '../generation/heuristic.js';
import { keepingSchema } from './run-repair.js';

const limits = { maxSchemaBytes: 65_536, maxRules: 100, maxSelectorsPerRule: 5, maxNestingDepth: 2 };

const OLD: RecipeDefinition = {
  dsl_version: 1,
  fields: [
    { name: 'title', type: 'string', required: true, selectors: ['h1.title'] },
    { name: 'price', type: 'number', required: true, selectors: ['.price'] },
    { name: 'brand', type: 'string', selectors: ['.brand'] },
  ],
};

/** The page after a redesign: new classes, the same JSON-LD. */
const CHANGED = `<html><head><script type="application/ld+json">{"@type":"Product","name":"Trail Shoe X","brand":{"@type":"Brand","name":"Peak"},"offers":{"@type":"Offer","price":"129.90"}}</script></head>
<body><h1 class="headline">Trail Shoe X</h1><span class="amount">€129,90</span><span class="brand">Peak</span></body></html>`;

describe('repair keeps the schema', () => {
  it('replaces the rules of broken fields from a heuristic candidate and the result extracts the changed page', () => {
    const before = extract(OLD, CHANGED);
    expect(before.missing.map((m) => m.field)).toEqual(['title', 'price']);
    const candidate = heuristicDefinition(CHANGED, { prompt: 'title, price, brand', maxRules: 100, maxSelectorsPerRule: 5 });
    const merged = keepingSchema(OLD, candidate, new Set(['title', 'price'])) as RecipeDefinition;
    // Same fields, same schema; the working `brand` rule untouched.
    expect(merged.fields.map((f) => [f.name, f.type, f.required ?? false])).toEqual([
      ['title', 'string', true],
      ['price', 'number', true],
      ['brand', 'string', false],
    ]);
    expect(merged.fields[2]).toEqual(OLD.fields[2]);
    const checked = check(limits, merged, CHANGED, undefined, false);
    expect(checked.ok).toBe(true);
    if (checked.ok) expect(checked.data).toEqual({ title: 'Trail Shoe X', price: 129.9, brand: 'Peak' });
  });

  it('forces the old name, type and required onto an LLM rule, and keeps the old rule for a field the candidate lacks', () => {
    const merged = keepingSchema(
      OLD,
      {
        dsl_version: 1,
        fields: [
          { name: 'title', type: 'integer', required: false, selectors: ['h1.headline'] },
          { name: 'junk', type: 'string', selectors: ['p'] },
        ],
      },
      new Set(['title', 'price']),
    ) as RecipeDefinition;
    expect(merged.fields).toEqual([
      { name: 'title', type: 'string', required: true, selectors: ['h1.headline'] },
      OLD.fields[1],
      OLD.fields[2],
    ]);
    // price still fails: the candidate is rejected.
    const checked = check(limits, merged, CHANGED, undefined, false);
    expect(checked.ok).toBe(false);
    expect(checked.issues).toEqual([{ field: 'price', issue: 'required field not found on the page' }]);
  });

  it('takes nothing from an answer that is not a definition', () => {
    expect(keepingSchema(OLD, 'not json', new Set(['title']))).toEqual({ dsl_version: 1, fields: OLD.fields });
    expect(keepingSchema(OLD, { fields: [null, 7, { type: 'string' }] }, new Set(['title']))).toEqual({
      dsl_version: 1,
      fields: OLD.fields,
    });
  });
});

describe('the attempt plan', () => {
  it('is the heuristic once without an LLM, the model then the heuristic in auto', () => {
    expect(attemptPlan('auto', false, 3)).toEqual(['heuristic']);
    expect(attemptPlan('auto', true, 3)).toEqual(['llm', 'llm', 'heuristic']);
    expect(attemptPlan('auto', true, 1)).toEqual(['llm']);
    expect(attemptPlan('llm', true, 2)).toEqual(['llm', 'llm']);
    expect(attemptPlan('heuristic', true, 3)).toEqual(['heuristic']);
  });
});
