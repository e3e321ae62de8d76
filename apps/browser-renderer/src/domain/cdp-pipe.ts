import type { Writable } from 'node:stream';

/**
 * Puppeteer's pipe transport writes every DevTools command as two writes, the message and then its
 * NUL terminator, each its own syscall into Chromium's pipe (and a wake-up of Chromium's reader for a
 * message it cannot parse yet). In the renderer's CPU profile those writes were an eighth of its busy
 * time, some 60 a page. Here the pipe is corked at the first write of a tick and uncorked on the next:
 * what puppeteer writes in one tick (a message and its NUL, or several commands sent together) goes
 * out as one `writev`, in order. Only the timing of the syscall changes (the end of the current
 * tick instead of at once), never the bytes. Public stream API only (`cork`/`uncork`); the stream
 * is the one puppeteer writes to (the child's fd 3), so nothing of puppeteer's own is replaced.
 *
 * Answers whether the stream was wrapped (false when there is no writable pipe, e.g. not launched
 * with `pipe: true`, or when it was already wrapped).
 */
export function coalescePipeWrites(pipe: Writable | null | undefined): boolean {
  if (!pipe || typeof pipe.cork !== 'function' || COALESCED.has(pipe)) return false;
  COALESCED.add(pipe);
  const write = pipe.write.bind(pipe) as (...args: unknown[]) => boolean;
  let corked = false;
  const flush = () => {
    corked = false;
    pipe.uncork();
  };
  pipe.write = ((...args: unknown[]) => {
    if (!corked && !pipe.destroyed) {
      corked = true;
      pipe.cork();
      process.nextTick(flush);
    }
    return write(...args);
  }) as Writable['write'];
  return true;
}

const COALESCED = new WeakSet<Writable>();
