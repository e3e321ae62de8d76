/** A run at least this long makes its tenant wait for other tenants' runs on their way to a turn. */
const LONG_RUN_MS = 50;
/** The longest a turn is held for runs on their way (one whose page read is slow must not stall the rest). */
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
 * a tenant served less recently has a run on its way, for at most MAX_HOLD_MS. Short runs (the
 * common case) never wait for anyone.
 *
 * Nothing runs in parallel that did not before (the thread was already shared); the order changes.
 */
export class CpuTurns {
  /** Waiting tasks per tenant, in the order the tenants started waiting. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Runs that arrived and have not asked for a turn (or left), per tenant. */
  private readonly onTheWay = new Map<string, number>();
  /** The number of each tenant's last turn, and how long it held the thread (cleared when nobody waits). */
  private readonly lastTurn = new Map<string, { turn: number; heldMs: number }>();
  private turns = 0;
  private holdingSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;

  /** A run has arrived: it is on its way to a turn until it asks for one or leaves. */
  arrive(tenantId: string): TurnTicket {
    this.onTheWay.set(tenantId, (this.onTheWay.get(tenantId) ?? 0) + 1);
    let onItsWay = true;
    const off = () => {
      if (!onItsWay) return;
      onItsWay = false;
      const n = this.onTheWay.get(tenantId)! - 1;
      if (n > 0) this.onTheWay.set(tenantId, n);
      else this.onTheWay.delete(tenantId);
    };
    return {
      run: <T>(task: () => T) => {
        off();
        return this.enqueue(tenantId, task);
      },
      leave: () => {
        off();
        // A turn held for this run need not wait for it any longer.
        if (this.holdingSince !== undefined) this.schedule(0);
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
    if (chosen === undefined) {
      this.holdingSince = undefined;
      if (this.onTheWay.size === 0) this.lastTurn.clear();
      return;
    }
    if (this.mustHold(chosen)) return;
    this.holdingSince = undefined;
    const queue = this.waiting.get(chosen)!;
    const task = queue.shift()!;
    if (queue.length === 0) this.waiting.delete(chosen);
    const started = performance.now();
    task();
    this.lastTurn.set(chosen, { turn: ++this.turns, heldMs: performance.now() - started });
    if (this.waiting.size > 0) this.schedule(0);
    else if (this.onTheWay.size === 0) this.lastTurn.clear();
  }

  /** After its long run, `chosen` waits (up to MAX_HOLD_MS) for runs on their way of tenants served before it. */
  private mustHold(chosen: string): boolean {
    if ((this.lastTurn.get(chosen)?.heldMs ?? 0) < LONG_RUN_MS) return false;
    const due = [...this.onTheWay.keys()].some((t) => t !== chosen && this.served(t) < this.served(chosen));
    if (!due) return false;
    const now = performance.now();
    this.holdingSince ??= now;
    const left = this.holdingSince + MAX_HOLD_MS - now;
    if (left <= 0) return false;
    this.schedule(left);
    return true;
  }
}
