#!/usr/bin/env node
// Generates the public OpenAPI document from the gateway's tsoa controllers, and TS types from it.
//   node scripts/generate.mjs          write openapi/openapi.json and src/openapi/types.ts
//   node scripts/generate.mjs --check  fail when the committed files differ from what the generators make
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const contracts = resolve(here, '..');
const gateway = resolve(contracts, '../../apps/gateway');
const check = process.argv.includes('--check');
const specPath = join(contracts, 'openapi', 'openapi.json');
const typesPath = join(contracts, 'src', 'openapi', 'types.ts');

const tmp = mkdtempSync(join(tmpdir(), 'wdr-openapi-'));
try {
  const config = JSON.parse(readFileSync(join(gateway, 'tsoa.json'), 'utf8'));
  config.spec.outputDirectory = tmp;
  const configPath = join(tmp, 'tsoa.json');
  writeFileSync(configPath, JSON.stringify(config));
  const tsoa = spawnSync(process.execPath, [join(contracts, '../../node_modules/@tsoa/cli/dist/cli.js'), 'spec', '-c', configPath], {
    cwd: gateway,
    encoding: 'utf8',
  });
  if (tsoa.status !== 0) {
    process.stderr.write(tsoa.stdout + tsoa.stderr);
    process.exit(1);
  }
  // tsoa emits schemas and paths in the order it meets the controllers, which follows the file
  // system's directory order; sort them so every checkout generates the same bytes.
  const doc = JSON.parse(readFileSync(join(tmp, 'openapi.json'), 'utf8'));
  const sortKeys = (o) => (o ? Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : o);
  doc.paths = sortKeys(doc.paths);
  for (const p of Object.keys(doc.paths ?? {})) doc.paths[p] = sortKeys(doc.paths[p]);
  if (doc.components) for (const k of Object.keys(doc.components)) doc.components[k] = sortKeys(doc.components[k]);
  if (Array.isArray(doc.tags)) doc.tags.sort((a, b) => (a.name < b.name ? -1 : 1));
  expandHeaderObjects(doc);
  rawBodiesAsBinary(doc);
  const spec = `${JSON.stringify(doc, null, 2)}\n`;
  writeFileSync(join(tmp, 'openapi.sorted.json'), spec);
  const ast = await openapiTS(pathToFileURL(join(tmp, 'openapi.sorted.json')));
  const types = `// Generated from openapi/openapi.json by scripts/generate.mjs (openapi-typescript). Do not edit.\n${astToString(ast)}`;

  if (check) {
    const drifted = [
      [specPath, spec],
      [typesPath, types],
    ].filter(([path, text]) => !existsSync(path) || readFileSync(path, 'utf8') !== text);
    if (drifted.length > 0) {
      console.error(
        `generated files drifted from their generators:\n${drifted.map(([p]) => `  ${p}`).join('\n')}\nrun \`npx turbo run generate\` and commit the result`,
      );
      process.exit(1);
    }
    console.log('generated files are up to date');
  } else {
    writeFileSync(specPath, spec);
    writeFileSync(typesPath, types);
    console.log(`wrote ${specPath} and ${typesPath}`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

/**
 * tsoa renders a response's headers interface (`@SuccessResponse<RateLimitHeaders>`) as one header
 * named after the interface with an object schema, which no client or validating proxy can use
 * (Prism crashes on it). Replace it with one header per property, under the name the gateway sends
 * (`RateLimit-Policy`, `Retry-After`, ...), each with the property's schema and description, none
 * marked required (the gateway omits the rate headers while its limiter fails open).
 */
function expandHeaderObjects(doc) {
  const schemas = doc.components?.schemas ?? {};
  const used = new Set();
  for (const ops of Object.values(doc.paths ?? {}))
    for (const op of Object.values(ops))
      for (const res of Object.values(op?.responses ?? {})) {
        if (!res?.headers) continue;
        const headers = {};
        for (const [name, h] of Object.entries(res.headers)) {
          const ref = h.schema?.$ref?.replace('#/components/schemas/', '');
          const target = ref ? schemas[ref] : h.schema;
          if (target?.type !== 'object' || !target.properties) {
            headers[name] = h;
            continue;
          }
          if (ref) used.add(ref);
          for (const [prop, schema] of Object.entries(target.properties)) {
            const { description, ...rest } = schema;
            // Not required: the rate headers are absent while the limiter fails open (Redis unreachable).
            headers[prop] = { description: description ?? h.description, required: false, schema: rest };
          }
        }
        res.headers = headers;
      }
  // The interfaces only described headers: drop them unless something else still refers to them.
  const text = JSON.stringify({ ...doc, components: { ...doc.components, schemas: {} } });
  for (const ref of used) if (!text.includes(`"#/components/schemas/${ref}"`)) delete schemas[ref];
}

/**
 * tsoa renders a `Buffer` answer as `type: string, format: byte` (base64 text), but the gateway
 * sends the bytes themselves (a page as text/html, a screenshot as image/png): outside JSON media
 * types that is `format: binary`, or a validating proxy rejects every such answer.
 */
function rawBodiesAsBinary(doc) {
  for (const ops of Object.values(doc.paths ?? {}))
    for (const op of Object.values(ops))
      for (const res of Object.values(op?.responses ?? {}))
        for (const [type, media] of Object.entries(res?.content ?? {}))
          if (!/json/.test(type) && media.schema?.type === 'string' && media.schema.format === 'byte') media.schema.format = 'binary';
}
