import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import { EXTRACTION_ERROR_CODES, REPAIR_ERROR_CODES, REQUEST_ERROR_CODES } from '@wdr/contracts';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '@wdr/kit/errors';

// The committed OpenAPI document as tenants get it (GET /api/v1/openapi.json serves this file).
const require = createRequire(import.meta.url);
const doc = JSON.parse(readFileSync(require.resolve('@wdr/contracts/openapi.json'), 'utf8')) as OpenApiDocument;
const apiDoc = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');

interface MediaType {
  schema?: unknown;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Operation {
  summary?: string;
  requestBody?: { content?: Record<string, MediaType> };
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

/**
 * Operations whose owners have not documented them yet (every controller is documented now): an
 * operation listed here is skipped by the checks below until its summary and examples exist.
 */
const NOT_YET_DOCUMENTED = new Set<string>([]);

const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
);
const checked = operations.filter(({ key }) => !NOT_YET_DOCUMENTED.has(key));

/** Success responses that have a body (a 204 has none to show). */
function successBodies(op: Operation): [string, Record<string, MediaType>][] {
  return Object.entries(op.responses)
    .filter(([status]) => /^2\d\d$/.test(status) && status !== '204')
    .map(([status, r]) => [status, r.content ?? {}]);
}

function examplesOf(media: MediaType): unknown[] {
  const out: unknown[] = [];
  if ('example' in media) out.push(media.example);
  for (const e of Object.values(media.examples ?? {})) if (e && 'value' in e) out.push(e.value);
  return out;
}

/** The error codes an error response's description names (`CODE: when`, `A or B`). */
function codesNamed(description: string): string[] {
  return (description.match(/\b[A-Z][A-Z_]+[A-Z]\b/g) ?? []).filter((w) => (ERROR_CODES as readonly string[]).includes(w));
}

/** OpenAPI 3.0 schema -> JSON Schema for ajv: `nullable` becomes a null alternative, refs point into the document. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'nullable' || k === 'example') continue;
    out[k] = k === '$ref' && typeof v === 'string' ? `openapi.json${v}` : toJsonSchema(v);
  }
  if ((node as { nullable?: boolean }).nullable !== true) return out;
  if (typeof out['type'] === 'string') {
    out['type'] = [out['type'], 'null'];
    if (Array.isArray(out['enum']) && !out['enum'].includes(null)) out['enum'] = [...out['enum'], null];
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

const ajv = new Ajv({
  strict: false,
  allErrors: true,
  formats: {
    uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    'date-time': (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s) && !Number.isNaN(Date.parse(s)),
    uri: (s: string) => URL.canParse(s),
    byte: true,
    binary: true,
    int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
    int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
    double: { type: 'number', validate: () => true },
    float: { type: 'number', validate: () => true },
  },
});
ajv.addSchema({ $id: 'openapi.json', components: toJsonSchema(doc.components) });

/** What keeps an operation from being documented: no summary, a success body without an example, an error response naming no code or a code of another status. */
function problemsOf(key: string, op: Operation): string[] {
  const problems: string[] = [];
  if (!op.summary?.trim()) problems.push(`${key}: no summary`);
  for (const [status, content] of successBodies(op)) {
    if (!Object.values(content).some((m) => examplesOf(m).length > 0)) problems.push(`${key} ${status}: no example`);
  }
  for (const [status, response] of Object.entries(op.responses)) {
    if (!/^[45]\d\d$/.test(status)) continue;
    const codes = codesNamed(response.description);
    if (codes.length === 0) problems.push(`${key} ${status}: names no error code ("${response.description}")`);
    for (const code of codes) {
      const expected = ERROR_STATUS[code as ErrorCode];
      if (String(expected) !== status) problems.push(`${key} ${status}: ${code} is a ${expected}`);
    }
  }
  return problems;
}

/**
 * Operations that call no internal service (the gateway's own database only: browser workspaces, members,
 * projects, project keys and workflows), so a 503 DEPENDENCY_UNAVAILABLE cannot happen; every other
 * operation must document it. The domain modules behind them are checked below to use no internal client.
 */
const GATEWAY_LOCAL =
  /^(GET|POST|PATCH|DELETE) \/api\/v1\/client\/(api-keys|browser\/(workspaces|projects\/\{projectId\}(\/workflows|\/environments\/\{environmentId\}\/api-keys.*)?$|workflows|workflow-versions))/;
/** Codes allowed to stay plain strings (none). */
const KNOWN_PLAIN_CODES = new Set<string>([]);
const GATEWAY_LOCAL_MODULES = ['browser/workspaces.ts', 'browser/project-keys.ts', 'browser/workflows.ts', 'tenants/cabinet-keys.ts'];

/** Errors of an operation as a tool reads them: an example on every request body and error response, 500 everywhere, 503 where it calls a service. */
function errorProblemsOf(key: string, op: Operation): string[] {
  const problems: string[] = [];
  for (const [type, media] of Object.entries(op.requestBody?.content ?? {}))
    if (examplesOf(media).length === 0) problems.push(`${key} request body ${type}: no example`);
  for (const [status, response] of Object.entries(op.responses)) {
    if (!/^[45]\d\d$/.test(status)) continue;
    const media = Object.values(response.content ?? {});
    const examples = media.flatMap(examplesOf) as { code?: string }[];
    if (examples.length === 0) problems.push(`${key} ${status}: no example`);
    for (const e of examples)
      if (String(ERROR_STATUS[e.code as ErrorCode]) !== status)
        problems.push(`${key} ${status}: example code ${e.code} is not a ${status}`);
  }
  if (!op.responses['500']) problems.push(`${key}: no 500`);
  if (!GATEWAY_LOCAL.test(key) && !op.responses['503']) problems.push(`${key}: calls an internal service but documents no 503`);
  return problems;
}

/** Every property named `code` (or `*_code`) of every schema: an enum, or a reference to one. */
function plainCodeFields(): string[] {
  const out: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (!node || typeof node !== 'object') return;
    const props = (node as { properties?: Record<string, { type?: string; enum?: unknown[]; $ref?: string }> }).properties ?? {};
    for (const [name, p] of Object.entries(props)) {
      if (/(^|_)code$/.test(name) && p.type === 'string' && !p.enum && !p.$ref) out.push(`${at}.${name}`);
      walk(p, `${at}.${name}`);
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'properties' && typeof v === 'object') walk(v, `${at}.${k}`);
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, name);
  return out;
}

describe('the OpenAPI document', () => {
  it('lists no operation as not yet documented that is documented already', () => {
    const done = operations.filter(({ key, op }) => NOT_YET_DOCUMENTED.has(key) && problemsOf(key, op).length === 0);
    expect(done.map((o) => `${o.key}: documented now, remove it from NOT_YET_DOCUMENTED`)).toEqual([]);
  });

  it('documents every operation: a summary, an example of each success body, the error codes of each error response', () => {
    expect(checked.length).toBeGreaterThan(15);
    expect(checked.flatMap(({ key, op }) => problemsOf(key, op))).toEqual([]);
  });

  it('has examples (of answers and of request bodies) that are valid against their schemas', () => {
    const invalid: string[] = [];
    let count = 0;
    for (const { key, op } of operations) {
      for (const [status, response] of [...Object.entries(op.responses), ['request body', op.requestBody ?? {}] as const]) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (!media.schema) continue;
          const validate = ajv.compile(toJsonSchema(media.schema) as object);
          for (const example of examplesOf(media)) {
            count += 1;
            if (!validate(example)) invalid.push(`${key} ${status} ${type}: ${ajv.errorsText(validate.errors)}`);
          }
        }
      }
    }
    expect(count).toBeGreaterThan(15);
    expect(invalid).toEqual([]);
  });

  it('has an example on every request body and every error response, a 500 on every operation, a 503 where a service is called', () => {
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.flatMap(({ key, op }) => errorProblemsOf(key, op))).toEqual([]);
    const local = operations.filter(({ key }) => GATEWAY_LOCAL.test(key));
    expect(local.length).toBe(20);
    for (const f of GATEWAY_LOCAL_MODULES) {
      const text = readFileSync(new URL(`../domain/${f}`, import.meta.url), 'utf8');
      expect({ f, internal: text.match(/\b(orchestrator|ledger|renderer|extractor|webhooks)\b\s*\./g) }).toEqual({ f, internal: null });
    }
  });

  it('finds what is missing (negative control): a body without example, an error without example, no 500, no 503, a wrong code', () => {
    const { key, op } = operations.find((o) => o.key === 'POST /api/v1/data/requests')!;
    const broken = structuredClone(op);
    delete broken.requestBody!.content!['application/json']!.examples;
    delete broken.requestBody!.content!['application/json']!.example;
    delete broken.responses['500'];
    delete broken.responses['503'];
    const notFound = broken.responses['402']!.content!['application/json']!;
    notFound.examples = { x: { value: { code: 'NOT_FOUND', message: 'x', request_id: 'x' } } };
    delete broken.responses['409']!.content!['application/json']!.examples;
    expect(errorProblemsOf(key, broken).sort()).toEqual(
      [
        `${key} request body application/json: no example`,
        `${key}: no 500`,
        `${key}: calls an internal service but documents no 503`,
        `${key} 402: example code NOT_FOUND is not a 402`,
        `${key} 409: no example`,
      ].sort(),
    );
  });

  it('types error code fields as enums (the public error body, extraction errors)', () => {
    expect(plainCodeFields().filter((f) => !KNOWN_PLAIN_CODES.has(f))).toEqual([]);
    const extraction = doc.components.schemas['ExtractionErrorCode'] as { enum?: string[] } | undefined;
    expect([...(extraction?.enum ?? [])].sort()).toEqual([...EXTRACTION_ERROR_CODES].sort());
    const repair = doc.components.schemas['RepairErrorCode'] as { enum?: string[] } | undefined;
    expect([...(repair?.enum ?? [])].sort()).toEqual([...REPAIR_ERROR_CODES].sort());
    const request = doc.components.schemas['RequestErrorCode'] as { enum?: string[] } | undefined;
    expect([...(request?.enum ?? [])].sort()).toEqual([...REQUEST_ERROR_CODES, 'FAILED'].sort());
  });

  it("enumerates exactly the kit's error codes in the error body", () => {
    const schema = doc.components.schemas['PublicErrorCode'] as { enum?: string[] } | undefined;
    expect([...(schema?.enum ?? [])].sort()).toEqual([...ERROR_CODES].sort());
  });
});

describe('docs/api.md', () => {
  it('tables every error code with its status', () => {
    const rows = new Map([...apiDoc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]));
    expect(ERROR_CODES.filter((code) => rows.get(code) !== ERROR_STATUS[code]).map((code) => `${code} ${ERROR_STATUS[code]}`)).toEqual([]);
  });
});

describe('response headers', () => {
  it('are declared under the names the gateway sends, each with a scalar schema (no tsoa header-interface objects)', () => {
    const seen = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops))
        for (const [status, res] of Object.entries(op.responses)) {
          const headers = (res as { headers?: Record<string, { schema?: { type?: string; $ref?: string } }> }).headers ?? {};
          for (const [name, h] of Object.entries(headers)) {
            seen.add(name);
            expect({ at: `${method} ${path} ${status} ${name}`, type: h.schema?.type, ref: h.schema?.$ref }).toEqual({
              at: `${method} ${path} ${status} ${name}`,
              type: expect.stringMatching(/^(string|integer|number|boolean)$/),
              ref: undefined,
            });
          }
        }
    // admission.ts sends these on submissions, Retry-After with a 429.
    for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'Retry-After'])
      expect(seen).toContain(name);
    expect([...seen].filter((n) => /Headers$/.test(n))).toEqual([]);
  });
});
