import { readdirSync, readFileSync } from 'node:fs';

/** Every process below `pid` (its children, theirs, ...), read from /proc; empty where there is no /proc. */
export function descendantsOf(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * Send `signal` to a process. A SIGKILL also goes to everything the process started, as when a
 * container or a machine dies: a killed browser-renderer's Chromium (which puppeteer starts in a
 * process group of its own) must not outlive it and pile up across test runs.
 */
export function signalTree(proc: { pid?: number | undefined; kill(signal: NodeJS.Signals): boolean }, signal: NodeJS.Signals): void {
  const below = signal === 'SIGKILL' && proc.pid !== undefined ? descendantsOf(proc.pid) : [];
  proc.kill(signal);
  for (const pid of below) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
