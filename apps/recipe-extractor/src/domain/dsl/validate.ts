import { load } from 'cheerio/slim';
import { ELEMENT_SOURCES, RecipeDefinition, type FieldRule } from '@wdr/contracts';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';

/** The limits of GET /client/recipes/capabilities a definition is held to (from configuration). */
export interface DslLimits {
  maxSchemaBytes: number;
  maxRules: number;
  maxSelectorsPerRule: number;
  maxNestingDepth: number;
}

const probe = load('');

/** A selector cheerio cannot compile is refused here, not when a page is extracted. */
function selectorIssue(selector: string): string | undefined {
  try {
    probe.root().find(selector);
    return undefined;
  } catch {
    return 'is not a valid CSS selector';
  }
}

/**
 * Check a DSL v1 definition: its shape (the contract's zod schema), then the rules the shape cannot
 * say (what each source needs, unique names, object collections) and the configured limits. Every
 * problem is reported at once as a VALIDATION_FAILED detail under `path` (`definition.fields.2.selectors`).
 */
export function validateDefinition(input: unknown, limits: DslLimits, path = 'definition'): RecipeDefinition {
  const bytes = Buffer.byteLength(JSON.stringify(input ?? null));
  if (bytes > limits.maxSchemaBytes) {
    fail([{ field: path, issue: `is ${bytes} bytes as JSON; max_schema_bytes is ${limits.maxSchemaBytes}` }]);
  }
  const parsed = RecipeDefinition.safeParse(input);
  if (!parsed.success) {
    fail(parsed.error.issues.map((i) => ({ field: [path, ...i.path.map(String)].join('.'), issue: i.message })));
  }
  const def = parsed.data;
  const issues: FieldIssue[] = [];
  let rules = 0;
  const walk = (fields: FieldRule[], at: string, depth: number) => {
    const names = new Set<string>();
    fields.forEach((f, i) => {
      rules += 1;
      const here = `${at}.${i}`;
      if (names.has(f.name)) issues.push({ field: `${here}.name`, issue: `duplicates another field named ${f.name}` });
      names.add(f.name);
      const selectors = f.selectors ?? [];
      const selectorCount = selectors.length + (f.scope ? 1 : 0);
      if (selectorCount > limits.maxSelectorsPerRule) {
        issues.push({
          field: `${here}.selectors`,
          issue: `has ${selectorCount} selectors; max_selectors_per_rule is ${limits.maxSelectorsPerRule}`,
        });
      }
      selectors.forEach((s, j) => {
        const bad = selectorIssue(s);
        if (bad) issues.push({ field: `${here}.selectors.${j}`, issue: bad });
      });
      if (f.type === 'object') {
        if (depth + 1 > limits.maxNestingDepth) {
          issues.push({ field: here, issue: `nests objects ${depth + 1} deep; max_object_nesting_depth is ${limits.maxNestingDepth}` });
        }
        if (!f.scope) issues.push({ field: `${here}.scope`, issue: 'is required for an object field (the CSS selector of each item)' });
        else {
          const bad = selectorIssue(f.scope);
          if (bad) issues.push({ field: `${here}.scope`, issue: bad });
        }
        if (!f.fields || f.fields.length === 0) issues.push({ field: `${here}.fields`, issue: 'an object field needs at least one field' });
        if (f.source) issues.push({ field: `${here}.source`, issue: 'is not used by an object field' });
        if (selectors.length > 0) issues.push({ field: `${here}.selectors`, issue: 'an object field finds its items with scope' });
        if (f.fields) walk(f.fields, `${here}.fields`, depth + 1);
        return;
      }
      if (f.scope) issues.push({ field: `${here}.scope`, issue: 'only object fields have a scope' });
      if (f.fields) issues.push({ field: `${here}.fields`, issue: 'only object fields have fields' });
      const source = f.source ?? { type: 'text' };
      if (ELEMENT_SOURCES.includes(source.type)) {
        if (selectors.length === 0)
          issues.push({ field: `${here}.selectors`, issue: `a ${source.type} source needs at least one selector` });
      } else if (selectors.length > 0) {
        issues.push({ field: `${here}.selectors`, issue: `a ${source.type} source takes no selectors` });
      }
    });
  };
  walk(def.fields, `${path}.fields`, 0);
  if (rules > limits.maxRules) issues.unshift({ field: `${path}.fields`, issue: `has ${rules} rules; max_rules is ${limits.maxRules}` });
  if (issues.length > 0) fail(issues);
  return def;
}

function fail(details: FieldIssue[]): never {
  throw new PublicError('VALIDATION_FAILED', 'The recipe definition is not valid.', { details });
}
