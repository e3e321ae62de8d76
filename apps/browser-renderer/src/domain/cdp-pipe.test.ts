import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { coalescePipeWrites } from './cdp-pipe.js';

/** A writable that records each call the stream machinery makes to the sink: one entry per syscall it would be. */
function recordingSink() {
  const calls: string[][] = [];
  const sink = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, done) {
      calls.push([String(chunk)]);
      done();
    },
    writev(chunks, done) {
      calls.push(chunks.map((c) => String(c.chunk)));
      done();
    },
  });
  return { sink, calls };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('coalescePipeWrites', () => {
  it('sends a message and its NUL, written in one tick, as one write, in order', async () => {
    const plain = recordingSink();
    plain.sink.write('{"id":1}');
    plain.sink.write('\0');
    await tick();
    // Without it: the message, then its terminator, each its own write.
    expect(plain.calls).toEqual([['{"id":1}'], ['\0']]);

    const { sink, calls } = recordingSink();
    expect(coalescePipeWrites(sink)).toBe(true);
    sink.write('{"id":1}');
    sink.write('\0');
    sink.write('{"id":2}');
    sink.write('\0');
    await tick();
    sink.write('{"id":3}');
    sink.write('\0');
    await tick();
    expect(calls).toEqual([
      ['{"id":1}', '\0', '{"id":2}', '\0'],
      ['{"id":3}', '\0'],
    ]);
  });

  it('wraps a stream once, and answers false without a pipe', () => {
    const { sink } = recordingSink();
    expect(coalescePipeWrites(sink)).toBe(true);
    expect(coalescePipeWrites(sink)).toBe(false);
    expect(coalescePipeWrites(undefined)).toBe(false);
    expect(coalescePipeWrites(null)).toBe(false);
  });

  it("delivers every byte through a real child's pipe", async () => {
    // `cat` echoes its stdin: what arrives is what was written, NULs and all, in order.
    const child = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
    const received: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => received.push(b));
    const closed = new Promise((resolve) => child.on('close', resolve));
    expect(coalescePipeWrites(child.stdin)).toBe(true);
    const sent: string[] = [];
    for (let i = 0; i < 200; i++) {
      const message = JSON.stringify({ id: i, method: 'Runtime.evaluate', params: { expression: 'x'.repeat(i * 37) } });
      sent.push(message, '\0');
      child.stdin.write(message);
      child.stdin.write('\0');
      if (i % 7 === 0) await tick();
    }
    child.stdin.end();
    await closed;
    expect(Buffer.concat(received).toString('utf8')).toBe(sent.join(''));
  });
});
