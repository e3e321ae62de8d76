#!/usr/bin/env node
// Generates the client's types (src/openapi.ts) from the committed OpenAPI document.
//   node scripts/generate.mjs          write src/openapi.ts
//   node scripts/generate.mjs --check  fail when the committed file differs from what the generator makes
// Unlike @wdr/contracts' types (the fleet's view, where a property with a default is always
// present), a property with a default is optional here: a tenant may leave it out of a body.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const spec = resolve(here, '../../contracts/openapi/openapi.json');
const out = resolve(here, '../src/openapi.ts');
const ast = await openapiTS(pathToFileURL(spec), { defaultNonNullable: false });
const text = `// Generated from packages/contracts/openapi/openapi.json by scripts/generate.mjs (openapi-typescript). Do not edit.\n${astToString(ast)}`;
if (process.argv.includes('--check')) {
  if (!existsSync(out) || readFileSync(out, 'utf8') !== text) {
    console.error(`generated file drifted from its generator:\n  ${out}\nrun \`npx turbo run generate\` and commit the result`);
    process.exit(1);
  }
  console.log('generated client types are up to date');
} else {
  writeFileSync(out, text);
  console.log(`wrote ${out}`);
}
