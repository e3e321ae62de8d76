// Ports for the services, brokers and proxies tests start, chosen so that no two test processes on
// the machine get the same one. Node built-ins only, and only syntax Node strips (no enums, no
// parameter properties): the test runs this file as is in separate processes.
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the port locks live unless WDR_PORT_LOCK_DIR says otherwise: one file per held port, shared by every test process of the machine. */
export function portLockDir(): string {
  return process.env['WDR_PORT_LOCK_DIR'] || join(tmpdir(), 'wdr-test-ports');
}

export interface FreePortOptions {
  /** First port of the range chosen from (default 20000). */
  from?: number;
  /** One past its last port (default 32000). */
  to?: number;
  /** The lock directory (default portLockDir()). */
  lockDir?: string;
  /** Random candidates tried before giving up (default 50). */
  attempts?: number;
}

/** Ports this process holds: the lock file and the token written in it. */
const held = new Map<number, { path: string; token: string }>();

/**
 * A port for a service a test starts later, held for this process until releasePort (or until the
 * process is gone).
 *
 * Chosen at random below Linux's ephemeral range (32768-60999), not by binding port 0: a port from
 * that range is handed to the next outgoing connection of any process, and one took a fleet's port
 * between the check and the service's listen (EADDRINUSE). Below it, only another test's choice
 * could take it: the fleet wires every service's URL into the others' environment before any of
 * them listens, and restarts a killed service on the same port, so a port has to stay reserved
 * while nothing listens on it. Each chosen port is therefore locked by a file created exclusively
 * (`<lockDir>/<port>.lock`, holding the owner's pid): another process's chooser, in another jest
 * worker or another package's suite, skips it. A lock whose owner process has died (killed before
 * it released) is reclaimed.
 */
export async function freePort(opts: FreePortOptions = {}): Promise<number> {
  const from = opts.from ?? 20_000;
  const to = opts.to ?? 32_000;
  const dir = opts.lockDir ?? portLockDir();
  const attempts = opts.attempts ?? 50;
  mkdirSync(dir, { recursive: true });
  for (let attempt = 0; attempt < attempts; attempt++) {
    const candidate = from + Math.floor(Math.random() * (to - from));
    const lock = tryLock(dir, candidate);
    if (!lock) continue;
    // Locked: no other chooser takes it now. Something outside them may still listen there.
    if (await canListen(candidate)) {
      held.set(candidate, lock);
      return candidate;
    }
    unlinkIfOurs(lock);
  }
  throw new Error(`no free port found between ${from} and ${to} in ${attempts} tries (locks in ${dir})`);
}

/** Give a port this process chose back (a stopped fleet's); a port it does not hold is ignored. */
export function releasePort(port: number): void {
  const lock = held.get(port);
  if (!lock) return;
  held.delete(port);
  unlinkIfOurs(lock);
}

/** Whether this process holds the port (chosen and not released). */
export function holdsPort(port: number): boolean {
  return held.has(port);
}

/**
 * Create the port's lock file atomically with its content: written under a name of its own, then
 * linked to the lock's name, which fails if the name exists. A reader never sees a half-written lock.
 */
function tryLock(dir: string, port: number): { path: string; token: string } | undefined {
  const path = join(dir, `${port}.lock`);
  const token = `${process.pid} ${randomBytes(8).toString('hex')}`;
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  writeFileSync(draft, token);
  try {
    for (let tries = 0; tries < 2; tries++) {
      try {
        linkSync(draft, path);
        return { path, token };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      // Taken: try once more only if its owner is gone and the stale lock could be cleared.
      if (!reclaimStale(path)) return undefined;
    }
    return undefined;
  } finally {
    unlinkSync(draft);
  }
}

/**
 * Clear a lock whose owner process no longer runs; true when it is gone. Reclaimers of one port take
 * turns (`<port>.lock.reclaim`, created exclusively) and delete the lock only if it still is the
 * stale one they read: nothing else deletes a lock of a dead owner, so it cannot have been replaced
 * by a live one in between. A reclaimer killed inside those few statements leaves the turn taken and
 * that port unused, nothing worse.
 */
function reclaimStale(path: string): boolean {
  const seen = readLock(path);
  if (seen === undefined) return true; // released meanwhile
  const pid = Number(seen.split(' ')[0]);
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) return false;
  const turn = `${path}.reclaim`;
  try {
    closeSync(openSync(turn, 'wx'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false; // another reclaimer's turn
    throw err;
  }
  try {
    const now = readLock(path);
    if (now === undefined) return true;
    if (now !== seen) return false;
    unlinkSync(path);
    return true;
  } finally {
    unlinkSync(turn);
  }
}

function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function unlinkIfOurs(lock: { path: string; token: string }): void {
  if (readLock(lock.path) !== lock.token) return;
  try {
    unlinkSync(lock.path);
  } catch {
    // gone already
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
