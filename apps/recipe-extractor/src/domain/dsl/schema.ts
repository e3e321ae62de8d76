import type { FieldRule, RecipeDefinition, RecipeFieldView } from '@wdr/contracts';
import type { FieldIssue } from '@wdr/kit/errors';

/** The spec's field list of a version: name, type, required, multiple, description (top level). */
export function fieldViews(def: RecipeDefinition): RecipeFieldView[] {
  return def.fields.map((f) => ({
    name: f.name,
    type: f.type,
    required: f.required ?? false,
    multiple: f.multiple ?? false,
    description: f.description ?? '',
  }));
}

const SCALAR_SCHEMA: Record<string, Record<string, unknown>> = {
  string: { type: 'string' },
  number: { type: 'number' },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  url: { type: 'string', format: 'uri' },
  date: { type: 'string', description: 'YYYY-MM-DD, or an ISO 8601 date-time' },
};

/** JSON Schema (2020-12) of what a run of this definition outputs. */
export function outputSchema(def: RecipeDefinition): Record<string, unknown> {
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...objectSchema(def.fields) };
}

function objectSchema(fields: FieldRule[]): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: fields.map((f) => f.name),
    properties: Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])),
  };
}

function fieldSchema(f: FieldRule): Record<string, unknown> {
  const one = f.type === 'object' ? objectSchema(f.fields ?? []) : { ...SCALAR_SCHEMA[f.type] };
  if (f.description) one['description'] = f.description;
  if (f.multiple) return { type: 'array', items: one, ...(f.required ? { minItems: 1 } : {}) };
  return f.required ? one : { anyOf: [one, { type: 'null' }] };
}

/**
 * Check an output against the definition's field schema (what `outputSchema` says): every field
 * present, required ones non-null (non-empty when multiple), each value of its type. The extractor
 * builds conforming outputs; this is the check a stored run's data has passed.
 */
export function validateOutput(def: RecipeDefinition, data: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  checkObject(def.fields, data, '', issues);
  return issues;
}

function checkObject(fields: FieldRule[], value: unknown, prefix: string, issues: FieldIssue[]): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    issues.push({ field: prefix.replace(/\.$/, '') || 'data', issue: 'must be an object' });
    return;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj))
    if (!fields.some((f) => f.name === key)) issues.push({ field: `${prefix}${key}`, issue: 'is not a field of the recipe' });
  for (const f of fields) {
    const path = `${prefix}${f.name}`;
    const v = obj[f.name];
    if (f.multiple) {
      if (!Array.isArray(v)) {
        issues.push({ field: path, issue: 'must be an array' });
        continue;
      }
      if (f.required && v.length === 0) issues.push({ field: path, issue: 'is required and empty' });
      v.forEach((item, i) => checkValue(f, item, `${path}.${i}`, issues));
    } else if (v === null || v === undefined) {
      if (f.required) issues.push({ field: path, issue: 'is required' });
    } else {
      checkValue(f, v, path, issues);
    }
  }
}

function checkValue(f: FieldRule, v: unknown, path: string, issues: FieldIssue[]): void {
  const bad = (issue: string) => issues.push({ field: path, issue });
  switch (f.type) {
    case 'object':
      return checkObject(f.fields ?? [], v, `${path}.`, issues);
    case 'string':
    case 'url':
    case 'date':
      if (typeof v !== 'string') bad(`must be a ${f.type}`);
      return;
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) bad('must be a number');
      return;
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) bad('must be an integer');
      return;
    case 'boolean':
      if (typeof v !== 'boolean') bad('must be a boolean');
      return;
  }
}
