/**
 * At most `perKey` calls run at once for one key; the rest wait their turn in arrival order.
 *
 * A tenant's reservations all update its one account row, so Postgres runs them one after another
 * anyway. Without this limit, a burst from one tenant (a big batch fan-out, 200 concurrent
 * submissions) holds every pooled connection while its transactions wait on that row lock: the
 * pool's own wait then times out and the burst's tail, and every other tenant's call, is answered
 * 503. Queued here, a burst holds `perKey` connections and waits in memory instead.
 */
export class PerKeyLimit {
  private readonly running = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly perKey: number) {
    if (!Number.isInteger(perKey) || perKey < 1) throw new Error(`PerKeyLimit needs a positive integer, got ${perKey}`);
  }

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let slot = this.running.get(key);
    if (!slot) {
      slot = { active: 0, waiting: [] };
      this.running.set(key, slot);
    }
    if (slot.active >= this.perKey) {
      const s = slot;
      await new Promise<void>((resolve) => s.waiting.push(resolve));
    } else {
      slot.active++;
    }
    try {
      return await fn();
    } finally {
      const next = slot.waiting.shift();
      if (next) {
        next(); // the slot passes to the next caller: `active` stays as it is
      } else if (--slot.active === 0) {
        this.running.delete(key);
      }
    }
  }

  /** Keys with a call running or waiting (for tests: the map forgets a key once it is idle). */
  get keys(): number {
    return this.running.size;
  }
}
