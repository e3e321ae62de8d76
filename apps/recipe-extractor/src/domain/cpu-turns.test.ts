import { describe, expect, it } from '@jest/globals';
import { CpuTurns } from './cpu-turns.js';

/**
 * Busy-wait: a synchronous task that holds the thread for `ms` of CPU time, as a recipe run does
 * (CpuTurns measures CPU time: a machine that deschedules the spin does not make it shorter or longer).
 */
function hold(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

/** A run's steps before it asks for its turn (reading its version, its page): each needs the thread for a moment. */
async function roundTrips(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 1));
}

/**
 * Tenant a queues three runs that hold the thread `holdMs` each; during the first, `startB` starts
 * tenant b's run. Answers the order in which the runs had the thread.
 */
async function runOrder(holdMs: number, startB: (turns: CpuTurns, order: string[]) => Promise<unknown>): Promise<string[]> {
  const turns = new CpuTurns();
  const order: string[] = [];
  let bRun: Promise<unknown> | undefined;
  const aRuns = [1, 2, 3].map((i) =>
    turns.arrive('a').run(() => {
      order.push(`a${i}`);
      if (i === 1) bRun = startB(turns, order);
      hold(holdMs);
    }),
  );
  await Promise.all(aRuns);
  await bRun;
  return order;
}

describe('CpuTurns', () => {
  it("gives a tenant that asks during another tenant's run the next turn, before that tenant's queued runs", async () => {
    const order = await runOrder(20, (turns, order) => turns.arrive('b').run(() => order.push('b1')));
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it("after a tenant's long run, waits for another tenant's run that is on its way (a few round trips) before the next", async () => {
    const order = await runOrder(60, (turns, order) => {
      const ticket = turns.arrive('b');
      return roundTrips(5).then(() => ticket.run(() => order.push('b1')));
    });
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('waits for a run on its way 500 ms in all, not turn after turn, and no longer once it leaves', async () => {
    const turns = new CpuTurns();
    const started: Record<string, number> = {};
    const ended: Record<string, number> = {};
    // b arrives and never asks for a turn: after a1, a2 waits 500 ms for it (timers never fire
    // early; a few ms of rounding allowed), and a3 does not wait for b again. Both are read between
    // one run's end and the next one's start: a run's 60 ms of CPU may take much longer by the clock
    // on a loaded machine, or a little less (the process's CPU time counts its other threads too:
    // a1's run once ended 550 ms before a2 started, read from a1's start), a wait would take 500 ms.
    const late = turns.arrive('b');
    const t0 = performance.now();
    const slow = [1, 2, 3].map((i) =>
      turns.arrive('a').run(() => {
        started[`a${i}`] = performance.now() - t0;
        hold(60);
        ended[`a${i}`] = performance.now() - t0;
      }),
    );
    await Promise.all(slow);
    expect(started['a2']! - ended['a1']!).toBeGreaterThanOrEqual(495);
    expect(started['a3']! - ended['a2']!).toBeLessThan(300);
    late.leave();
    // c arrives, then leaves (its page was gone): d's second run does not wait for the bound.
    const gone = turns.arrive('c');
    const d = [1, 2].map((i) =>
      turns.arrive('d').run(() => {
        started[`d${i}`] = performance.now() - t0;
        if (i === 1) setTimeout(() => gone.leave(), 20);
        hold(60);
        ended[`d${i}`] = performance.now() - t0;
      }),
    );
    await Promise.all(d);
    expect(started['d2']! - ended['d1']!).toBeLessThan(300);
  });

  it('never holds a turn after short runs', async () => {
    const turns = new CpuTurns();
    turns.arrive('b'); // on its way, and never asks
    const runs: { start: number; end: number }[] = [];
    await Promise.all(
      [1, 2, 3, 4].map(() =>
        turns.arrive('a').run(() => {
          const start = performance.now();
          hold(5);
          runs.push({ start, end: performance.now() });
        }),
      ),
    );
    // Waiting for b would leave 500 ms or more between one run's end and the next one's start.
    const gaps = runs.slice(1).map((r, i) => r.start - runs[i]!.end);
    expect(Math.max(...gaps)).toBeLessThan(300);
  });

  it('serves tenants round-robin, one run each per round, in the order they first waited', async () => {
    const turns = new CpuTurns();
    const order: string[] = [];
    const runs = [
      ...['a1', 'a2', 'a3'].map((n) => turns.arrive('a').run(() => order.push(n))),
      ...['b1', 'b2'].map((n) => turns.arrive('b').run(() => order.push(n))),
      turns.arrive('c').run(() => order.push('c1')),
    ];
    expect(turns.pending).toBe(6);
    await Promise.all(runs);
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(turns.pending).toBe(0);
  });

  it("passes a task's value and its error to its caller, and goes on with the next tasks after an error", async () => {
    const turns = new CpuTurns();
    const failing = turns.arrive('a').run(() => {
      throw new Error('budget exceeded');
    });
    const after = turns.arrive('a').run(() => 42);
    await expect(failing).rejects.toThrow('budget exceeded');
    await expect(after).resolves.toBe(42);
  });
});
