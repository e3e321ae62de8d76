import { createHistogram, performance, type EventLoopUtilization, type RecordableHistogram } from 'node:perf_hooks';

/** When the loop samples its delay: every `busyMs` while it works, every `idleMs` while it does not. */
export interface DelaySampling {
  busyMs: number;
  idleMs: number;
  /** Event-loop utilisation over the last interval above which the loop counts as working. */
  busyUtilization: number;
}

/** Once a second while the loop works (more than 1 % of the time), every 10 s while it idles. */
export const DEFAULT_DELAY_SAMPLING: DelaySampling = { busyMs: 1_000, idleMs: 10_000, busyUtilization: 0.01 };

/**
 * The event-loop delay histogram of prom-client's default metrics (`nodejs_eventloop_lag_*`), with the
 * interface of node's `monitorEventLoopDelay` (prom-client reads min, max, mean, stddev, percentiles
 * and resets it at each scrape), sampled by one timer whose pace follows the loop's work.
 *
 * Node's own monitor wakes the process at a fixed pace; every wake-up of an idle service costs CPU
 * (bench/README.md: at prom-client's 10 ms about 0.6 % of a core per process; at one a second half
 * the wake-ups of an idle service, 15 ms of CPU per 40 s in a bare process). A loop with
 * nothing to do has no delay to measure, so while the last interval's utilisation stays under
 * `busyUtilization` the next sample is `idleMs` away; as soon as an interval shows work the pace
 * is `busyMs` again. Each sample records how late its timer fired: a loop that stays slow is seen by
 * every sample at the busy pace (what WdrEventLoopLagHigh alerts on), a single stall only when it
 * overlaps a sample, as with any sampling monitor. The timer is unref'd, so it never keeps a process
 * alive. An empty histogram (no sample since the last scrape) reads 0, not node's sentinel values.
 */
export class IdleAwareDelayMonitor {
  private readonly histogram: RecordableHistogram = createHistogram();
  private timer: NodeJS.Timeout | undefined;
  /** Samples taken since creation. */
  samples = 0;
  /** Milliseconds from the last sample (or enable) to the next. */
  nextMs: number | undefined;

  /**
   * `utilization`: the loop's utilisation since the previous call (0..1); node's event-loop
   * utilisation by default (tests give their own, the pace then does not depend on the machine).
   */
  constructor(
    private readonly sampling: DelaySampling = DEFAULT_DELAY_SAMPLING,
    private readonly utilization: () => number = eventLoopUtilizationSinceLastCall(),
  ) {}

  enable(): boolean {
    if (this.timer) return false;
    this.utilization();
    this.schedule(this.sampling.busyMs);
    return true;
  }

  disable(): boolean {
    if (!this.timer) return false;
    clearTimeout(this.timer);
    this.timer = undefined;
    return true;
  }

  private schedule(ms: number): void {
    this.nextMs = ms;
    const due = performance.now() + ms;
    this.timer = setTimeout(() => this.sample(due), ms);
    this.timer.unref();
  }

  private sample(due: number): void {
    this.samples += 1;
    // Recorded in nanoseconds, as node's monitor does (prom-client divides by 1e9); at least 1.
    this.histogram.record(Math.max(1, Math.round((performance.now() - due) * 1e6)));
    this.schedule(this.utilization() > this.sampling.busyUtilization ? this.sampling.busyMs : this.sampling.idleMs);
  }

  private get empty(): boolean {
    return this.count === 0;
  }
  get count(): number {
    return this.histogram.count;
  }
  get min(): number {
    return this.empty ? 0 : this.histogram.min;
  }
  get max(): number {
    return this.histogram.max;
  }
  get mean(): number {
    return this.empty ? 0 : this.histogram.mean;
  }
  get stddev(): number {
    return this.empty ? 0 : this.histogram.stddev;
  }
  percentile(p: number): number {
    return this.empty ? 0 : this.histogram.percentile(p);
  }
  reset(): void {
    this.histogram.reset();
  }
}

/** Node's event-loop utilisation since the previous call of the answered function. */
function eventLoopUtilizationSinceLastCall(): () => number {
  let last: EventLoopUtilization | undefined;
  return () => {
    const now = performance.eventLoopUtilization();
    const since = last ? performance.eventLoopUtilization(now, last).utilization : 0;
    last = now;
    return since;
  };
}
