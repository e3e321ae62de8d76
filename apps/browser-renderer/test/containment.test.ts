import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SandboxUnavailableError } from '../src/domain/browser-pool.js';
import { testPool } from './pool.js';

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

const pool = (over: Parameters<typeof testPool>[0]) => testPool({ maxPages: 100, healthIntervalMs: 5_000, ...over });

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

/**
 * The pod's seccomp profile (k8s/seccomp/wdr-chromium.json, the container's Localhost profile in
 * k8s/base/browser-renderer.yaml) on this kernel, without a container runtime: test/seccomp-exec.py
 * compiles the profile with the machine's libseccomp, loads it and execs Chromium, which inherits
 * the filter as a container's process does. What this does not show: the kubelet installing the
 * profile, the runtime applying it to the whole container, the node's user-namespace settings.
 */
const PYTHON = '/usr/bin/python3';
const repoFile = (rel: string) => new URL(`../../../${rel}`, import.meta.url).pathname;
const canLoadProfiles =
  existsSync(PYTHON) &&
  ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib'].some((d) => existsSync(`${d}/libseccomp.so.2`));

describe('Chromium under the pod seccomp profile', () => {
  let wrappers = 0;
  /** A "Chromium" that is the real one started under `profile` (files readable by CHROMIUM_USER). */
  const underProfile = async (profile: string): Promise<string> => {
    const n = ++wrappers;
    const profileFile = join(dir, `profile-${n}.json`);
    const loader = join(dir, 'seccomp-exec.py');
    await writeFile(profileFile, profile);
    await copyFile(new URL('./seccomp-exec.py', import.meta.url).pathname, loader);
    await Promise.all([chmod(profileFile, 0o644), chmod(loader, 0o644)]);
    const wrapper = join(dir, `chromium-under-profile-${n}`);
    const chromium = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
    await writeFile(wrapper, `#!/bin/sh\nexec ${PYTHON} ${loader} ${profileFile} ${chromium} "$@"\n`);
    await chmod(wrapper, 0o755);
    return wrapper;
  };
  const status = (pid: number, field: string) =>
    new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  const childrenOf = (root: number): number[] => {
    const all: number[] = [];
    const stack = [root];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      for (const name of readdirSync('/proc')) {
        if (!/^\d+$/.test(name)) continue;
        try {
          const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
          if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) {
            all.push(Number(name));
            stack.push(Number(name));
          }
        } catch {
          // gone
        }
      }
    }
    return all;
  };

  (canLoadProfiles ? it : it.skip)(
    'starts sandboxed under the profile the manifest names: the browser runs under its filter, the zygotes in user namespaces of their own',
    async () => {
      const manifest = readFileSync(repoFile('k8s/base/browser-renderer.yaml'), 'utf8');
      expect(manifest).toMatch(/seccompProfile:\s*\n\s*type: Localhost\s*\n\s*localhostProfile: profiles\/wdr-chromium\.json/);
      const p = pool({ chromiumPath: await underProfile(readFileSync(repoFile('k8s/seccomp/wdr-chromium.json'), 'utf8')) });
      try {
        await p.start();
        expect(p.sandbox()).toMatchObject({ sandboxed: true, detail: expect.stringMatching(/^sandboxed/) });
        const [browser] = p.pids();
        expect(browser).toBeDefined();
        // The profile's filter is on the browser process (without the loader it has none: Seccomp 0).
        expect(status(browser!, 'Seccomp')).toBe('2');
        const ownNs = readlinkSync(`/proc/${browser}/ns/user`);
        const sandboxed = childrenOf(browser!).filter((pid) => {
          try {
            return readlinkSync(`/proc/${pid}/ns/user`) !== ownNs;
          } catch {
            return false;
          }
        });
        expect(sandboxed.length).toBeGreaterThan(0);
      } finally {
        await p.stop();
      }
    },
    60_000,
  );

  (canLoadProfiles ? it : it.skip)(
    'negative control: under a profile that refuses namespace creation (as the runtime default does without CAP_SYS_ADMIN) the renderer refuses to start',
    async () => {
      const CLONE_NEWUSER = 0x10000000;
      const runtimeDefaultLike = JSON.stringify({
        defaultAction: 'SCMP_ACT_ALLOW',
        architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_AARCH64'],
        syscalls: [
          { names: ['unshare', 'setns'], action: 'SCMP_ACT_ERRNO' },
          {
            names: ['clone'],
            action: 'SCMP_ACT_ERRNO',
            args: [{ index: 0, value: CLONE_NEWUSER, valueTwo: CLONE_NEWUSER, op: 'SCMP_CMP_MASKED_EQ' }],
          },
          { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38 },
        ],
      });
      const p = pool({ chromiumPath: await underProfile(runtimeDefaultLike) });
      try {
        // toThrow(class): the same instanceof check, and a mismatch prints the error's message.
        await expect(p.start()).rejects.toThrow(SandboxUnavailableError);
        expect(p.pids()).toEqual([]);
      } finally {
        await p.stop();
      }
    },
    60_000,
  );
});
