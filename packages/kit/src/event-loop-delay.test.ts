import perfHooks from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from '@jest/globals';
import { IdleAwareDelayMonitor } from './event-loop-delay.js';
import { createMetrics } from './metrics.js';

/** Busy pace 20 ms, idle pace 400 ms: the same rule as the production 1 s / 10 s, fifty times faster. */
const sampling = { busyMs: 20, idleMs: 400, busyUtilization: 0.01 };

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

  it('samples at the idle pace while the loop did nothing since the last sample, at the busy pace once it works', async () => {
    // The loop's utilisation as the test says, so the pace does not depend on the machine's load.
    let utilization = 0;
    monitor = new IdleAwareDelayMonitor(sampling, () => utilization);
    monitor.enable();
    expect(monitor.nextMs).toBe(20); // the first sample at the busy pace
    await sleep(100);
    expect(monitor.samples).toBe(1); // then idle: the next is 400 ms away
    expect(monitor.nextMs).toBe(400);
    utilization = 0.5;
    await sleep(500);
    // The idle interval ended with work in it: from then on a sample every 20 ms.
    expect(monitor.nextMs).toBe(20);
    const busyFrom = monitor.samples;
    await sleep(200);
    expect(monitor.samples).toBeGreaterThan(busyFrom + 1);
    utilization = 0.005; // under the threshold: idle again
    await sleep(100);
    expect(monitor.nextMs).toBe(400);
  });

  it("paces itself by node's event-loop utilisation by default", async () => {
    monitor = new IdleAwareDelayMonitor({ ...sampling, busyUtilization: 0.2 });
    monitor.enable();
    await sleep(300);
    expect(monitor.nextMs).toBe(400); // a sleeping loop is idle
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
