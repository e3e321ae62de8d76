import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * Memory of a process and all its descendants (Chromium's renderers, GPU and utility processes),
 * from /proc. Proportional set size (PSS): pages shared between Chromium's processes are counted
 * once in total, not once per process as RSS would, so the sum is what the tree really holds.
 *
 * PSS is dear to read (the kernel walks every mapping for smaps_rollup: some 20 ms of CPU for a
 * browser with four pages), the tree's summed RSS is not, and it bounds PSS from above. The small
 * /proc files are read synchronously: the kernel answers them from memory, and the asynchronous
 * form costs ten times the CPU in thread-pool hops.
 */

/** An exact reading of a tree: its PSS, the summed RSS at the same moment, and when. */
export interface PssReading {
  pss: number;
  rss: number;
  at: number;
}

/** A reading older than this is not scaled: the tree is measured again. */
export const PSS_READING_MAX_AGE_MS = 30_000;
/** A scaled reading is trusted while it stays under this share of the bound. */
export const PSS_ESTIMATE_MARGIN = 0.75;

/**
 * The tree's memory as a caller comparing it with `bound` needs it. At most the bound by its summed
 * RSS: that sum, unmeasured (it is never less than the PSS). Over it, `last` (this tree's previous
 * exact reading) scaled by how the summed RSS moved since, while that reading is younger than
 * PSS_READING_MAX_AGE_MS and the scaled figure stays under PSS_ESTIMATE_MARGIN of the bound;
 * otherwise the PSS, read now. A busy Chromium's summed RSS is over a 1 GiB bound at a PSS of half
 * that (its processes share their libraries): it was read every check (2 s), some 10 ms of CPU a
 * second, where a tree whose memory does not approach the bound is now read every 30 s. A tree
 * that grows moves its summed RSS with it, so the scaled figure nears the bound and is read exactly.
 * `reading`: the exact reading the answer rests on (`last`, or the new one), to pass next time.
 */
export async function treeMemory(
  rootPid: number,
  bound: number,
  last: PssReading | undefined,
  now = Date.now(),
): Promise<{ bytes: number; reading: PssReading | undefined }> {
  const tree = processTree(rootPid);
  const rss = tree.reduce((n, pid) => n + rssOf(pid), 0);
  if (rss <= bound) return { bytes: rss, reading: last };
  if (last && last.rss > 0 && now - last.at < PSS_READING_MAX_AGE_MS) {
    const scaled = Math.round((rss * last.pss) / last.rss);
    if (scaled <= bound * PSS_ESTIMATE_MARGIN) return { bytes: scaled, reading: last };
  }
  let pss = 0;
  for (const pid of tree) pss += await pssOf(pid);
  return { bytes: pss, reading: { pss, rss, at: now } };
}

/**
 * The tree's memory (above): with `exactAbove`, the summed RSS when that is at most the bound,
 * else the PSS; without, the PSS.
 */
export async function treeRss(rootPid: number, opts: { exactAbove?: number } = {}): Promise<number> {
  return (await treeMemory(rootPid, opts.exactAbove ?? -1, undefined)).bytes;
}

/**
 * Every process's parent, as last read: a process keeps its parent while it lives (an orphan is
 * adopted by init, and is no descendant of a browser then either), so each scan of /proc reads the
 * `stat` of the processes it has not seen before only, and forgets those gone. A scan read every
 * process of the machine before (a Postgres backend, a broker's JVM), some 150 files every check.
 */
let parentsSeen = new Map<number, number>();

/** A process and its descendants, from every process's parent in /proc. */
export function processTree(rootPid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const known = parentsSeen.get(pid);
    if (known !== undefined) {
      parents.set(pid, known);
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name (which may contain spaces) start after the last ')'.
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  parentsSeen = parents;
  const tree = [rootPid];
  for (let i = 0; i < tree.length; i++)
    for (const [child, parent] of parents) if (parent === tree[i] && !tree.includes(child)) tree.push(child);
  return tree;
}

/** A process's resident set (bytes; 0 when it is gone). */
function rssOf(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function pssOf(pid: number): Promise<number> {
  try {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
