// resolveSchemaEngine(): native engine when available, Wasm shim otherwise.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { findPrismaCli, prismaEnv, resolveSchemaEngine, SHIM_PATH } from '../src/index.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wdr-prisma-resolve-'));
const HASH = 'd1b3f377ca835d73fd50954a5e22128b9ebdd6b8';

function write(file, content, mode) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  if (mode) fs.chmodSync(file, mode);
  return file;
}

/** A fake install: node_modules/prisma + @prisma/engines(-version), optionally a "downloaded" engine. */
function fakeInstall(name, { engineVersionOutput } = {}) {
  const root = path.join(tmp, name);
  const nm = path.join(root, 'node_modules');
  write(path.join(nm, 'prisma', 'package.json'), JSON.stringify({ name: 'prisma', version: '7.10.1', bin: { prisma: 'build/index.js' } }));
  write(path.join(nm, 'prisma', 'build', 'index.js'), '');
  write(path.join(nm, '@prisma', 'engines', 'package.json'), JSON.stringify({ name: '@prisma/engines', version: '7.10.1' }));
  write(
    path.join(nm, '@prisma', 'engines-version', 'package.json'),
    JSON.stringify({ name: '@prisma/engines-version', prisma: { enginesVersion: HASH } }),
  );
  let binary;
  if (engineVersionOutput) {
    binary = write(
      path.join(nm, '@prisma', 'engines', 'schema-engine-debian-openssl-3.0.x'),
      `#!/bin/sh\necho "${engineVersionOutput}"\n`,
      0o755,
    );
    write(path.join(nm, '@prisma', 'engines', 'schema-engine-debian-openssl-3.0.x.gz.sha256'), 'x');
  }
  return { root, prismaDir: path.join(nm, 'prisma'), binary };
}

describe('resolveSchemaEngine', () => {
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const bare = fakeInstall('bare');

  test('prefers a native binary when PRISMA_SCHEMA_ENGINE_BINARY points to an existing file', () => {
    const native = write(path.join(tmp, 'bin', 'schema-engine'), '#!/bin/sh\n', 0o755);
    const r = resolveSchemaEngine({ env: { PRISMA_SCHEMA_ENGINE_BINARY: native }, prismaDir: bare.prismaDir });
    assert.deepEqual([r.kind, r.source, r.path], ['native', 'env', native]);
    // relative paths resolve against cwd, as in the Prisma CLI
    const rel = resolveSchemaEngine({
      env: { PRISMA_SCHEMA_ENGINE_BINARY: 'bin/schema-engine' },
      cwd: tmp,
      prismaDir: bare.prismaDir,
    });
    assert.equal(rel.path, native);
    // the deprecated variable counts too
    assert.equal(resolveSchemaEngine({ env: { PRISMA_MIGRATION_ENGINE_BINARY: native }, prismaDir: bare.prismaDir }).path, native);
  });

  test('ignores PRISMA_SCHEMA_ENGINE_BINARY when the file does not exist and falls back to the shim', () => {
    const r = resolveSchemaEngine({
      env: { PRISMA_SCHEMA_ENGINE_BINARY: path.join(tmp, 'nope') },
      prismaDir: bare.prismaDir,
    });
    assert.deepEqual([r.kind, r.source, r.path], ['wasm', 'shim', SHIM_PATH]);
    assert.match(r.reason, /does not exist/);
  });

  test('uses the engine @prisma/engines downloaded, if it reports the expected version', () => {
    const good = fakeInstall('good', { engineVersionOutput: `schema-engine-cli ${HASH}` });
    const r = resolveSchemaEngine({ env: {}, prismaDir: good.prismaDir });
    assert.deepEqual([r.kind, r.source, r.path], ['native', 'download', good.binary]);
    // found from cwd as well (prisma resolved like require() would)
    assert.equal(resolveSchemaEngine({ env: {}, cwd: good.root }).path, good.binary);
  });

  test('a stale downloaded engine (other version) is not used', () => {
    const stale = fakeInstall('stale', {
      engineVersionOutput: 'schema-engine-cli 0000000000000000000000000000000000000000',
    });
    const r = resolveSchemaEngine({ env: {}, prismaDir: stale.prismaDir });
    assert.equal(r.kind, 'wasm');
    assert.match(r.reason, /expected d1b3f377/);
  });

  test('WDR_PRISMA_ENGINE=wasm forces the shim; =native fails loudly without one', () => {
    const native = write(path.join(tmp, 'bin2', 'schema-engine'), '#!/bin/sh\n', 0o755);
    const forced = resolveSchemaEngine({
      env: { WDR_PRISMA_ENGINE: 'wasm', PRISMA_SCHEMA_ENGINE_BINARY: native },
      prismaDir: bare.prismaDir,
    });
    assert.equal(forced.path, SHIM_PATH);
    assert.throws(
      () => resolveSchemaEngine({ env: { WDR_PRISMA_ENGINE: 'native' }, prismaDir: bare.prismaDir }),
      /No native schema engine/,
    );
  });

  test('the shim is executable and prismaEnv() wires it up for the CLI', () => {
    fs.accessSync(SHIM_PATH, fs.constants.X_OK);
    const { env, engine } = prismaEnv({
      env: { PATH: '/usr/bin', PRISMA_MIGRATION_ENGINE_BINARY: '/nope' },
      prismaDir: bare.prismaDir,
    });
    assert.equal(engine.kind, 'wasm');
    assert.equal(env.PRISMA_SCHEMA_ENGINE_BINARY, SHIM_PATH);
    assert.equal(env.PRISMA_MIGRATION_ENGINE_BINARY, undefined);
    assert.equal(env.WDR_PRISMA_CLI_DIR, bare.prismaDir);
    assert.equal(env.PATH.split(path.delimiter)[0], path.dirname(process.execPath));
  });

  test('findPrismaCli locates the installed CLI', () => {
    const cli = findPrismaCli({ from: [bare.root], env: {} });
    assert.equal(cli.dir, bare.prismaDir);
    assert.equal(cli.bin, path.join(bare.prismaDir, 'build', 'index.js'));
  });
});
