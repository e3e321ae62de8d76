#!/usr/bin/env node
// `wdr-prisma <prisma args...>`: runs the project's installed Prisma CLI with every argument
// passed through and PRISMA_SCHEMA_ENGINE_BINARY set by resolveSchemaEngine() - the native
// engine when one is available, otherwise the Wasm shim.
//
//   wdr-prisma migrate deploy --config apps/x/prisma.config.ts
//
// WDR_PRISMA_ENGINE=wasm|native|auto   force a kind of engine (default auto)
// WDR_PRISMA_ENGINE_VERBOSE=1           print the chosen engine on stderr
import { spawn } from 'node:child_process';
import path from 'node:path';

import { findPrismaCli, prismaEnv } from '../src/index.mjs';

const args = process.argv.slice(2);

// Prefer the prisma installed next to the config file (an app may pin its own).
const from = [];
const configIdx = args.findIndex((a) => a === '--config' || a.startsWith('--config='));
if (configIdx !== -1) {
  const value = args[configIdx].includes('=') ? args[configIdx].split('=').slice(1).join('=') : args[configIdx + 1];
  if (value) from.push(path.dirname(path.resolve(value)));
}

const cli = findPrismaCli({ from });
if (!cli) {
  process.stderr.write('wdr-prisma: the `prisma` package is not installed (it is a peer dependency of @wdr/prisma-engine).\n');
  process.exit(1);
}

let env, engine;
try {
  ({ env, engine } = prismaEnv({ prismaDir: cli.dir }));
} catch (e) {
  process.stderr.write(`wdr-prisma: ${e.message}\n`);
  process.exit(1);
}
// Prisma's telemetry ping goes to the internet; keep it off unless explicitly enabled.
env.CHECKPOINT_DISABLE ??= '1';

if (env.WDR_PRISMA_ENGINE_VERBOSE === '1') {
  process.stderr.write(
    `wdr-prisma: prisma ${cli.version} at ${cli.dir}; schema engine: ${engine.kind} ${engine.path} (${engine.reason})\n`,
  );
}

const child = spawn(process.execPath, [cli.bin, ...args], { stdio: 'inherit', env });
const forward = (sig) => () => child.kill(sig);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, forward(sig));
child.on('error', (e) => {
  process.stderr.write(`wdr-prisma: cannot start prisma: ${e.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 }[signal] ?? 1) : 1));
});
