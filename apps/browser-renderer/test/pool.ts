import { createLogger } from '@wdr/kit/log';
import { createMetrics } from '@wdr/kit/metrics';
import { BrowserPool, type PoolOptions } from '../src/domain/browser-pool.js';
import { EgressGate } from '../src/domain/egress-gate.js';

/**
 * A pool of the machine's Chromium for a test: one browser with one page, silent, metrics and an
 * egress gate of its own; `over` changes any setting.
 */
export function testPool(over: Partial<PoolOptions> = {}): BrowserPool {
  return new BrowserPool({
    chromiumPath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
    size: 1,
    pagesPerBrowser: 1,
    maxPages: 1000,
    maxRssBytes: 4 * 1024 ** 3,
    healthIntervalMs: 1_000,
    log: createLogger('test', 'silent'),
    metrics: createMetrics('browser-renderer'),
    gate: new EgressGate({ log: createLogger('test', 'silent') }),
    ...over,
  });
}
