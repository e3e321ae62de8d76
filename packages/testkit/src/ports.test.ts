import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { freePort, holdsPort, releasePort, type FreePortOptions } from './ports.js';

/**
 * freePort across processes: choosers in separate node processes (as jest workers and the two test
 * lanes are) pick from a narrow range, so that without the locks two of them would all but surely
 * pick the same port (nothing listens on a port while it is only held, so the bind check alone
 * passes them all). Each child runs ports.ts itself (Node strips its types), not a build of it.
 */
const PORTS_TS = fileURLToPath(new URL('./ports.ts', import.meta.url));
// Below freePort's default range (20000-32000): no fleet of a concurrent test run picks from here.
const FROM = 19_100;

const work = mkdtempSync(join(tmpdir(), 'wdr-ports-test-'));
const chooser = join(work, 'chooser.mjs');
writeFileSync(
  chooser,
  `const { freePort } = await import(${JSON.stringify(PORTS_TS)});
const [opts, count] = [JSON.parse(process.argv[2]), Number(process.argv[3])];
try {
  const ports = await Promise.all(Array.from({ length: count }, () => freePort(opts)));
  process.stdout.write(JSON.stringify({ ports }) + '\\n');
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err?.message ?? err) }) + '\\n');
}
// Hold the ports until told to end (stdin closed).
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`,
);

interface Chooser {
  child: ChildProcess;
  /** The ports it holds, or the error it got. */
  answer: Promise<{ ports?: number[]; error?: string }>;
}

const children: ChildProcess[] = [];
const sorted = (ports: number[]) => [...ports].sort((a, b) => a - b);

function startChooser(opts: FreePortOptions, count: number): Chooser {
  const child = spawn(process.execPath, [chooser, JSON.stringify(opts), String(count)], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const answer = new Promise<{ ports?: number[]; error?: string }>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as { ports?: number[]; error?: string });
    });
    child.once('exit', (code) => reject(new Error(`chooser exited (${code}) before answering: ${err}`)));
  });
  return { child, answer };
}

async function end(c: Chooser, signal?: NodeJS.Signals): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return;
  const gone = new Promise((r) => c.child.once('exit', r));
  if (signal) c.child.kill(signal);
  else c.child.stdin!.end();
  await gone;
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe('freePort', () => {
  it('never gives two concurrent choosers in separate processes the same port while they hold it', async () => {
    const lockDir = mkdtempSync(join(work, 'locks-'));
    // 10 processes x 4 ports out of 60: without locks, a repeat is all but certain.
    const opts = { from: FROM, to: FROM + 60, lockDir, attempts: 400 };
    const choosers = Array.from({ length: 10 }, () => startChooser(opts, 4));
    try {
      const answers = await Promise.all(choosers.map((c) => c.answer));
      expect(answers.filter((a) => a.error)).toEqual([]);
      const ports = answers.flatMap((a) => a.ports!);
      expect(ports).toHaveLength(40);
      const repeated = ports.filter((p, i) => ports.indexOf(p) !== i);
      expect(repeated).toEqual([]);
      // One lock file per held port, no more (no drafts left behind).
      expect(readdirSync(lockDir).sort()).toEqual(sorted(ports).map((p) => `${p}.lock`));
    } finally {
      await Promise.all(choosers.map((c) => end(c)));
    }
  }, 60_000);

  it("skips a live process's port, takes back a dead one's, and takes a released one", async () => {
    const lockDir = mkdtempSync(join(work, 'locks-'));
    const opts = { from: FROM + 100, to: FROM + 103, lockDir, attempts: 100 };
    // A live holder of the whole range: another chooser finds nothing.
    const holder = startChooser(opts, 3);
    const held = (await holder.answer).ports!;
    expect(sorted(held)).toEqual([FROM + 100, FROM + 101, FROM + 102]);
    const late = startChooser(opts, 1);
    expect((await late.answer).error).toMatch(/no free port found between 19200 and 19203/);
    await end(late);
    // Killed without releasing: its locks stay behind, and are reclaimed since their owner is gone.
    await end(holder, 'SIGKILL');
    expect(readdirSync(lockDir)).toHaveLength(3);
    const next = startChooser(opts, 3);
    expect(sorted((await next.answer).ports ?? [])).toEqual(sorted(held));
    await end(next);

    // In this process: held until released, then free for the next chooser.
    const one = { from: FROM + 110, to: FROM + 111, lockDir, attempts: 5 };
    const port = await freePort(one);
    expect(holdsPort(port)).toBe(true);
    await expect(freePort(one)).rejects.toThrow(/no free port/);
    releasePort(port);
    expect(holdsPort(port)).toBe(false);
    expect(await freePort(one)).toBe(port);
    releasePort(port);
  }, 60_000);
});
