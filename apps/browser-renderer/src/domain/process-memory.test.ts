import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PSS_ESTIMATE_MARGIN, PSS_READING_MAX_AGE_MS, processTree, treeMemory, type PssReading } from './process-memory.js';

/**
 * The process tree and its memory read from this machine's /proc: this test's process with a child
 * of its own (a `sleep`), and the choice between the summed RSS, a scaled earlier reading and a PSS
 * read now.
 */
let child: ChildProcess;
beforeAll(async () => {
  child = spawn('sleep', ['60'], { stdio: 'ignore' });
  await new Promise((r) => child.once('spawn', r));
});
afterAll(() => {
  child.kill('SIGKILL');
});

const summedRss = async () => (await treeMemory(process.pid, Number.MAX_SAFE_INTEGER, undefined)).bytes;

describe('processTree', () => {
  it('finds a child started after an earlier scan, and forgets one that ended', async () => {
    expect(processTree(process.pid)).toContain(child.pid);
    const late = spawn('sleep', ['60'], { stdio: 'ignore' });
    await new Promise((r) => late.once('spawn', r));
    expect(processTree(process.pid)).toEqual(expect.arrayContaining([process.pid, child.pid, late.pid]));
    late.kill('SIGKILL');
    await new Promise((r) => late.once('exit', r));
    await new Promise((r) => setTimeout(r, 50)); // reaped
    expect(processTree(process.pid)).not.toContain(late.pid);
    expect(processTree(child.pid!)).toEqual([child.pid]);
  });
});

describe('treeMemory', () => {
  it('answers the summed RSS at most the bound, reading no PSS and keeping the last reading', async () => {
    const last: PssReading = { pss: 1, rss: 2, at: 0 };
    const out = await treeMemory(process.pid, Number.MAX_SAFE_INTEGER, last);
    expect(out.bytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(out.reading).toBe(last);
  });

  it('over the bound without a reading, reads the PSS: never more than the summed RSS', async () => {
    const rss = await summedRss();
    const now = Date.now();
    const out = await treeMemory(process.pid, 1, undefined, now);
    expect(out.reading).toEqual({ pss: out.bytes, rss: expect.any(Number), at: now });
    expect(out.bytes).toBeGreaterThan(0);
    expect(out.bytes).toBeLessThanOrEqual(rss * 1.1);
  });

  it('scales a young reading while it stays under the margin of the bound, and reads again otherwise', async () => {
    const rss = await summedRss();
    const bound = Math.floor(rss / 2);
    const now = Date.now();
    // A reading whose PSS was a thousandth of its RSS: scaled, far under the bound.
    const small: PssReading = { pss: 1_000, rss: 1_000_000, at: now - 1_000 };
    const scaled = await treeMemory(process.pid, bound, small, now);
    expect(scaled.reading).toBe(small);
    expect(scaled.bytes).toBeLessThanOrEqual(bound * PSS_ESTIMATE_MARGIN);
    expect(scaled.bytes).toBeGreaterThan(0);
    // Too old to scale: read again.
    const old: PssReading = { ...small, at: now - PSS_READING_MAX_AGE_MS - 1 };
    const reread = await treeMemory(process.pid, bound, old, now);
    expect(reread.reading).not.toBe(old);
    expect(reread.reading?.at).toBe(now);
    // Scaled, it comes near the bound: read again.
    const near: PssReading = { pss: 1_000, rss: 1_000, at: now - 1_000 };
    const exact = await treeMemory(process.pid, bound, near, now);
    expect(exact.reading).not.toBe(near);
    expect(exact.bytes).toBe(exact.reading?.pss);
  });
});
