#!/usr/bin/env node
// Generates the client's types (src/generated/openapi.ts, not committed: the build makes them, so
// they always follow the committed OpenAPI document) from packages/contracts/openapi/openapi.json.
// Unlike @wdr/contracts' types (the fleet's view, where a property with a default is always
// present), a property with a default is optional here: a tenant may leave it out of a body.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const spec = resolve(here, '../../contracts/openapi/openapi.json');
const out = resolve(here, '../src/generated/openapi.ts');
const ast = await openapiTS(pathToFileURL(spec), { defaultNonNullable: false });
const text = `// Generated from packages/contracts/openapi/openapi.json by scripts/generate.mjs (openapi-typescript). Do not edit.\n${astToString(ast)}`;
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, text);
console.log(`wrote ${out}`);
