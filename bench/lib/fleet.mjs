/**
 * The fleet settings the benches share, spelled once: the gateway's (a key prefix of its own, no
 * limits in the way), production's where the test fleet's differ, and CPU profiling
 * (`BENCH_CPU_PROF_DIR`: a V8 profile of every service, summarised by bench/profile-top.mjs).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { SERVICE_NAMES } from '@wdr/testkit';

/** The gateway of a bench fleet: its own Redis keys, and limits no bench reaches. */
export const benchGatewayEnv = () => ({
  REDIS_KEY_PREFIX: `wdr:bench:${randomBytes(4).toString('hex')}:`,
  RATE_LIMIT_SUBMISSIONS: '10000000',
  CONCURRENCY_LIMIT: '10000000',
});

/**
 * Production settings where the test fleet's differ: the services' defaults for the outbox's safety
 * poll (5 s, `BENCH_OUTBOX_POLL_MS` to try another), the consumer session (30 s) and idle fetch wait (5 s), production mode, quiet logs.
 */
export const productionEnv = () => ({
  NODE_ENV: 'production',
  // Production verifies that the topics exist; a bench's fresh topic prefix needs them created.
  KAFKA_TOPICS_MODE: 'create',
  LOG_LEVEL: 'error',
  OUTBOX_POLL_MS: process.env.BENCH_OUTBOX_POLL_MS ?? '5000',
  KAFKA_SESSION_TIMEOUT_MS: '30000',
  KAFKA_FETCH_WAIT_MS: '5000',
});

/** Where the services' CPU profiles go (BENCH_CPU_PROF_DIR), or undefined: no profiling. */
export const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
// A profile is written at the service's exit: give the fleet's stop time for a graceful one.
if (CPU_PROF_DIR) process.env.WDR_FLEET_STOP_BOUND_MS ??= '30000';

/**
 * The services' NODE_OPTIONS: `BENCH_NODE_OPTIONS` (V8 flags to try) and, when profiling, the
 * profiler's flags after them.
 */
export function nodeOptionsEnv() {
  const flags = [process.env.BENCH_NODE_OPTIONS, CPU_PROF_DIR ? `--cpu-prof --cpu-prof-dir=${CPU_PROF_DIR}` : undefined].filter(Boolean);
  return flags.length > 0 ? { NODE_OPTIONS: flags.join(' ') } : {};
}

/** When profiling: which profile is which service's (services.json, by pid, read by profile-top.mjs). */
export function recordProfiledFleet(fleet) {
  if (!CPU_PROF_DIR) return;
  mkdirSync(CPU_PROF_DIR, { recursive: true });
  writeFileSync(`${CPU_PROF_DIR}/services.json`, JSON.stringify(Object.fromEntries(SERVICE_NAMES.map((s) => [fleet.pid(s), s]))));
}
