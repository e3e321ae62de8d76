// Loads the Prisma schema engine compiled to WebAssembly.
//
// The JS glue always comes from the pinned @prisma/schema-engine-wasm package. The .wasm
// binary is, in order of preference:
//   1. $WDR_PRISMA_SCHEMA_ENGINE_WASM (explicit path), if set;
//   2. the schema_engine_bg.wasm that the `prisma` CLI package itself ships in build/ - it is
//      built from exactly the engines commit the CLI was released with (7.10.1 ->
//      d1b3f377...), which is not published to npm on its own. Used only if its imports and
//      exports match what the glue provides/expects (checked below). Disable with
//      WDR_PRISMA_ENGINE_WASM_SOURCE=package;
//   3. the .wasm from the pinned @prisma/schema-engine-wasm package.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/** Directory of the `prisma` CLI package that will spawn/use the engine, or undefined. */
export function findPrismaCliDir({ env = process.env, cwd = process.cwd() } = {}) {
  const candidates = [];
  if (env.WDR_PRISMA_CLI_DIR) candidates.push(() => env.WDR_PRISMA_CLI_DIR);
  candidates.push(() => path.dirname(createRequire(path.join(cwd, 'noop.js')).resolve('prisma/package.json')));
  candidates.push(() => path.dirname(require.resolve('prisma/package.json')));
  for (const c of candidates) {
    try {
      const dir = c();
      if (dir && fs.existsSync(path.join(dir, 'package.json'))) return dir;
    } catch {
      // not resolvable from there
    }
  }
  return undefined;
}

export function packageWasmPaths() {
  const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const pkgJson = JSON.parse(fs.readFileSync(path.join(path.dirname(gluePath), 'package.json'), 'utf8'));
  return {
    gluePath,
    wasmPath: path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'),
    packageVersion: pkgJson.version,
  };
}

function compatible(module, glue, glueSource) {
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module !== './schema_engine_bg.js' || typeof glue[imp.name] !== 'function') {
      return `import ${imp.module}:${imp.name} is not provided by the glue`;
    }
  }
  const exported = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  for (const m of glueSource.matchAll(/\bwasm\.(\w+)/g)) {
    if (!exported.has(m[1])) return `glue needs export ${m[1]} which the module lacks`;
  }
  return null;
}

let loaded;

/**
 * @param {{ env?: NodeJS.ProcessEnv, cwd?: string, log?: (level: string, msg: string) => void }} [opts]
 * @returns {Promise<{ SchemaEngine: any, version: string, wasmPath: string, source: string, packageVersion: string }>}
 */
export function loadSchemaEngineWasm(opts = {}) {
  loaded ??= load(opts);
  return loaded;
}

async function load({ env = process.env, cwd = process.cwd(), log = () => {} }) {
  const { gluePath, wasmPath: packageWasm, packageVersion } = packageWasmPaths();
  const glue = await import(pathToFileURL(gluePath).href);
  const glueSource = fs.readFileSync(gluePath, 'utf8');

  const candidates = [];
  if (env.WDR_PRISMA_SCHEMA_ENGINE_WASM) candidates.push({ source: 'env', wasmPath: path.resolve(cwd, env.WDR_PRISMA_SCHEMA_ENGINE_WASM) });
  if ((env.WDR_PRISMA_ENGINE_WASM_SOURCE ?? 'cli') === 'cli') {
    const cliDir = findPrismaCliDir({ env, cwd });
    if (cliDir) candidates.push({ source: 'prisma-cli', wasmPath: path.join(cliDir, 'build', 'schema_engine_bg.wasm') });
  }
  candidates.push({ source: 'package', wasmPath: packageWasm });

  for (const { source, wasmPath } of candidates) {
    if (!fs.existsSync(wasmPath)) continue;
    let module;
    try {
      module = await WebAssembly.compile(fs.readFileSync(wasmPath));
    } catch (e) {
      log('WARN', `cannot compile ${wasmPath}: ${e.message}`);
      continue;
    }
    const problem = compatible(module, glue, glueSource);
    if (problem) {
      log('WARN', `skipping ${wasmPath}: ${problem}`);
      continue;
    }
    const instance = await WebAssembly.instantiate(module, { './schema_engine_bg.js': glue });
    glue.__wbg_set_wasm(instance.exports);
    instance.exports.__wbindgen_start();
    return { SchemaEngine: glue.SchemaEngine, version: glue.version(), wasmPath, source, packageVersion };
  }
  throw new Error(`No usable schema engine wasm found (tried ${candidates.map((c) => c.wasmPath).join(', ')})`);
}
