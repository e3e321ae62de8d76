import { describe, expect, it } from '@jest/globals';
import { OffsetProgress } from './progress.js';

/** `n` microtask turns, then `fn`. */
const afterTurns = (n: number, fn: () => void) => {
  if (n === 0) fn();
  else queueMicrotask(() => afterTurns(n - 1, fn));
};

describe('OffsetProgress', () => {
  it('commits a message done just as the previous commit ends, at whatever turn it lands', async () => {
    for (let turns = 0; turns < 8; turns++) {
      const written: string[] = [];
      let late: Promise<void> | undefined;
      const progress = new OffsetProgress(
        async (offset) => {
          written.push(offset);
          // The next message is done while this commit is finishing (a flow has no batch end to cover it).
          if (offset === '0')
            afterTurns(turns, () => {
              progress.done('1', undefined);
              late = progress.commit();
            });
        },
        ['0', '1'],
      );
      progress.done('0', undefined);
      await progress.commit();
      await new Promise((resolve) => setImmediate(resolve));
      await late;
      expect({ turns, written }).toEqual({ turns, written: ['0', '1'] });
    }
  });

  it('commits the longest done prefix of offsets added as they are dispatched, each once', async () => {
    const written: { offset: string; ids: string[] }[] = [];
    const progress = new OffsetProgress(async (offset, ids) => {
      written.push({ offset, ids });
    });
    for (const o of ['5', '6', '7', '9']) progress.add(o);
    progress.done('6', 'b');
    await progress.commit();
    expect(written).toEqual([]);
    progress.done('5', 'a');
    progress.done('9', 'd');
    await progress.commit();
    expect(written).toEqual([{ offset: '6', ids: ['b', 'a', 'd'] }]);
    progress.done('7', undefined);
    await progress.commit();
    expect(written.map((w) => w.offset)).toEqual(['6', '9']);
  });
});
