import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '@wdr/kit/log';
import { createMetrics } from '@wdr/kit/metrics';
import { BrowserPool, SandboxUnavailableError } from '../src/domain/browser-pool.js';
import { EgressGate } from '../src/domain/egress-gate.js';

/**
 * Chromium is never started without its sandbox unless the development setting says so: a
 * renderer that cannot start it sandboxed refuses to start. (The sandboxed process tree, its
 * environment and the absence of a DevTools port are checked on the real fleet in
 * apps/gateway/test/e2e/security-egress.e2e.test.ts.)
 */
const root = process.getuid?.() === 0;
let dir: string;
let noSandboxChromium: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wdr-containment-'));
  await chmod(dir, 0o755);
  // A "Chromium" whose sandbox cannot start, as the real one says it on stderr.
  noSandboxChromium = join(dir, 'chromium');
  await writeFile(noSandboxChromium, '#!/bin/sh\necho "FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox!" >&2\nexit 1\n');
  await chmod(noSandboxChromium, 0o755);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const pool = (over: Partial<ConstructorParameters<typeof BrowserPool>[0]>) =>
  new BrowserPool({
    chromiumPath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
    size: 1,
    pagesPerBrowser: 1,
    maxPages: 100,
    maxRssBytes: 4 * 1024 ** 3,
    healthIntervalMs: 5_000,
    log: createLogger('test', 'silent'),
    metrics: createMetrics('browser-renderer'),
    gate: new EgressGate({ log: createLogger('test', 'silent') }),
    ...over,
  });

describe('Chromium sandbox', () => {
  it('refuses to start when Chromium cannot start sandboxed, and launches nothing without it', async () => {
    const p = pool({ chromiumPath: noSandboxChromium });
    await expect(p.start()).rejects.toBeInstanceOf(SandboxUnavailableError);
    expect(p.pids()).toEqual([]);
    await p.stop();
  });

  (root ? it : it.skip)('as root: refuses to start without an unprivileged user for Chromium', async () => {
    const p = pool({ chromiumUser: '' });
    await expect(p.start()).rejects.toThrow(/refuses to start.*CHROMIUM_ALLOW_NO_SANDBOX/s);
    expect(p.pids()).toEqual([]);
    await p.stop();
  });

  (root ? it : it.skip)(
    'starts without the sandbox only under CHROMIUM_ALLOW_NO_SANDBOX, and says so',
    async () => {
      const p = pool({ chromiumUser: '', allowNoSandbox: true });
      try {
        await p.start();
        expect(p.ready()).toBe(true);
        expect(p.sandbox()).toMatchObject({ sandboxed: false, detail: expect.stringContaining('CHROMIUM_ALLOW_NO_SANDBOX=true') });
      } finally {
        await p.stop();
      }
    },
    60_000,
  );

  it('starts sandboxed by default (as nobody when the service is root)', async () => {
    const p = pool({});
    try {
      await p.start();
      expect(p.sandbox()).toMatchObject({ sandboxed: true, detail: expect.stringMatching(/^sandboxed/) });
      if (root) expect(p.sandbox().uid).not.toBe(0);
    } finally {
      await p.stop();
    }
  }, 60_000);
});
