/** A run that took at least this much CPU time makes its tenant wait for other tenants' runs on their way to a turn. */
const LONG_RUN_MS = 50;
/**
 * How long a run on its way is waited for, in all, from the first turn held for it: one whose page
 * read is slower is not waited for any more (it must not stall the rest, once or turn after turn).
 */
const MAX_HOLD_MS = 500;

/** One run's place: on its way to a turn from its arrival until it asks for one (`run`) or leaves. */
export interface TurnTicket {
  /** Run `task` on the tenant's next turn; resolves (or rejects) with its outcome. */
  run<T>(task: () => T): Promise<T>;
  /** The run is over (or needs no turn): idempotent, and harmless after `run`. */
  leave(): void;
}

/**
 * Turns at this process's one thread for the CPU-bound step of extraction runs, fair between
 * tenants. A run's rules execute synchronously (up to its budget, EXTRACTION_MAX_MS): in arrival
 * order, a tenant that submits a handful of expensive recipes would hold every other tenant's run
 * behind all of them. With turns, the next turn goes to the waiting tenant served least recently
 * (one never served first), so a run waits behind at most one run of each other tenant.
 *
 * A run arrives (`arrive`, when its job is taken) some round trips before it asks for its turn: it
 * reads its version and its page first. Between two long runs of one tenant those round trips get
 * the thread only for a moment each, so the other run would reach the queue only after the whole
 * queue of long runs. So after a tenant's long run (LONG_RUN_MS or more), its next turn waits while
 * a tenant served less recently has a run on its way, each such run for at most MAX_HOLD_MS in all
 * (from the first turn held for it). Short runs (the common case) never wait
 * for anyone.
 *
 * Nothing runs in parallel that did not before (the thread was already shared); the order changes.
 */
export class CpuTurns {
  /** Waiting tasks per tenant, in the order the tenants started waiting. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Runs that arrived and have not asked for a turn (or left), per tenant; `holdUntil` once a turn was held for one. */
  private readonly onTheWay = new Map<string, Set<{ holdUntil?: number }>>();
  /** The number of each tenant's last turn, and how long it held the thread (cleared when nobody waits). */
  private readonly lastTurn = new Map<string, { turn: number; heldMs: number }>();
  private turns = 0;
  private holding = false;
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;

  /** A run has arrived: it is on its way to a turn until it asks for one or leaves. */
  arrive(tenantId: string): TurnTicket {
    const arrival: { holdUntil?: number } = {};
    const mine = this.onTheWay.get(tenantId) ?? new Set();
    mine.add(arrival);
    this.onTheWay.set(tenantId, mine);
    const off = () => {
      const set = this.onTheWay.get(tenantId);
      if (!set?.delete(arrival)) return;
      if (set.size === 0) this.onTheWay.delete(tenantId);
    };
    return {
      run: <T>(task: () => T) => {
        off();
        return this.enqueue(tenantId, task);
      },
      leave: () => {
        off();
        // A turn held for this run need not wait for it any longer.
        if (this.holding) this.schedule(0);
      },
    };
  }

  /** Tasks waiting for a turn, over every tenant. */
  get pending(): number {
    let n = 0;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  private enqueue<T>(tenantId: string, task: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queue = this.waiting.get(tenantId) ?? [];
      queue.push(() => {
        try {
          resolve(task());
        } catch (err) {
          reject(err);
        }
      });
      this.waiting.set(tenantId, queue);
      this.schedule(0);
    });
  }

  /** Wake `next` in `delayMs`, unless it is already due sooner. */
  private schedule(delayMs: number): void {
    const at = performance.now() + delayMs;
    if (this.timer !== undefined && this.wakeAt <= at) return;
    clearTimeout(this.timer);
    this.wakeAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wakeAt = Infinity;
      this.next();
    }, delayMs);
  }

  private served(tenantId: string): number {
    return this.lastTurn.get(tenantId)?.turn ?? -1;
  }

  private next(): void {
    let chosen: string | undefined;
    for (const tenantId of this.waiting.keys()) if (chosen === undefined || this.served(tenantId) < this.served(chosen)) chosen = tenantId;
    this.holding = chosen !== undefined && this.mustHold(chosen);
    if (chosen === undefined) {
      if (this.onTheWay.size === 0) this.lastTurn.clear();
      return;
    }
    if (this.holding) return;
    const queue = this.waiting.get(chosen)!;
    const task = queue.shift()!;
    if (queue.length === 0) this.waiting.delete(chosen);
    // CPU time (the process's, which the synchronous task all but fills), not the clock's: on a
    // loaded machine a short run descheduled for a while would otherwise count as long and make its
    // tenant wait for runs on their way.
    const started = process.cpuUsage();
    task();
    const held = process.cpuUsage(started);
    this.lastTurn.set(chosen, { turn: ++this.turns, heldMs: (held.user + held.system) / 1000 });
    if (this.waiting.size > 0) this.schedule(0);
    else if (this.onTheWay.size === 0) this.lastTurn.clear();
  }

  /**
   * After its long run, `chosen` waits for the runs on their way of tenants served before it, each
   * until MAX_HOLD_MS after the first turn held for it; scheduled to look again when the first of
   * them stops counting.
   */
  private mustHold(chosen: string): boolean {
    if ((this.lastTurn.get(chosen)?.heldMs ?? 0) < LONG_RUN_MS) return false;
    const now = performance.now();
    let until = 0;
    for (const [tenantId, arrivals] of this.onTheWay) {
      if (tenantId === chosen || this.served(tenantId) >= this.served(chosen)) continue;
      for (const a of arrivals) {
        a.holdUntil ??= now + MAX_HOLD_MS;
        if (a.holdUntil > now) until = until === 0 ? a.holdUntil : Math.min(until, a.holdUntil);
      }
    }
    if (until === 0) return false;
    this.schedule(until - now);
    return true;
  }
}
