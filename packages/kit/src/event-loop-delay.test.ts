import perfHooks from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from '@jest/globals';
import { IdleAwareDelayMonitor } from './event-loop-delay.js';
import { createMetrics } from './metrics.js';

/**
 * Busy pace 20 ms, idle pace 400 ms: the same rule as the production 1 s / 10 s, fifty times
 * faster. Busy above 20 % utilisation, not production's 1 %: a test worker on a loaded machine
 * (the whole suite at once) is busier than an idle service without doing anything, and `work`
 * keeps the loop about half busy.
 */
const sampling = { busyMs: 20, idleMs: 400, busyUtilization: 0.2 };

/** Keeps the loop working about half the time for `ms`: 5 ms of spinning every 10 ms. */
async function work(ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const spinUntil = Date.now() + 5;
    while (Date.now() < spinUntil);
    await sleep(5);
  }
}

describe('IdleAwareDelayMonitor', () => {
  let monitor: IdleAwareDelayMonitor | undefined;
  afterEach(() => void monitor?.disable());

  it('samples at the idle pace while the loop does nothing, at the busy pace while it works', async () => {
    monitor = new IdleAwareDelayMonitor(sampling);
    monitor.enable();
    await sleep(1_000);
    const idle = monitor.samples;
    // The first sample at the busy pace, then one every 400 ms: 3 in a second, a few more when the
    // test's own start counts as work on a loaded machine; never the 50 of the busy pace.
    expect(idle).toBeGreaterThanOrEqual(2);
    expect(idle).toBeLessThanOrEqual(10);
    // Work starts: within one idle interval the pace is the busy one again.
    await work(1_000);
    const busy = monitor.samples - idle;
    expect(busy).toBeGreaterThanOrEqual(15);
  });

  it('records how late a sample fires: a stall of the loop is in the histogram, in nanoseconds', async () => {
    monitor = new IdleAwareDelayMonitor(sampling);
    monitor.enable();
    await work(200); // at the busy pace
    const before = monitor.samples;
    const spinUntil = Date.now() + 150;
    while (Date.now() < spinUntil);
    await sleep(60);
    expect(monitor.samples).toBeGreaterThan(before);
    // The sample due during the stall fired when it ended: at least 100 ms late.
    expect(monitor.max).toBeGreaterThanOrEqual(100e6);
    expect(monitor.percentile(100)).toBe(monitor.max);
    expect(monitor.min).toBeGreaterThan(0);
  });

  it("reads 0 when nothing was sampled since the last reset (not node's sentinel minimum)", () => {
    monitor = new IdleAwareDelayMonitor(sampling);
    expect(monitor.count).toBe(0);
    expect([monitor.min, monitor.max, monitor.mean, monitor.stddev, monitor.percentile(99)]).toEqual([0, 0, 0, 0, 0]);
  });

  it("is what prom-client's nodejs_eventloop_lag_* read, and node's monitor is left in place", async () => {
    const nodes = perfHooks.monitorEventLoopDelay;
    const metrics = createMetrics('kit-test-lag');
    expect(perfHooks.monitorEventLoopDelay).toBe(nodes);
    // Right after start nothing is sampled yet: every figure 0 (node's empty histogram reads a
    // minimum of 9.2e18 ns and a NaN mean).
    const text = await metrics.registry.metrics();
    expect(text).toContain('nodejs_eventloop_lag_min_seconds{wdr_service="kit-test-lag"} 0');
    expect(text).toContain('nodejs_eventloop_lag_mean_seconds{wdr_service="kit-test-lag"} 0');
    // The first sample (busy pace, 1 s) reaches the histogram, and the scrape reads it.
    await sleep(1_100);
    const p99 = /nodejs_eventloop_lag_p99_seconds\{wdr_service="kit-test-lag"\} (\S+)/.exec(await metrics.registry.metrics());
    expect(Number(p99?.[1])).toBeGreaterThan(0);
    expect(Number(p99?.[1])).toBeLessThan(1);
  });
});
