import type { Fleet } from '../fleet.js';

/** Jest global teardown: stops the fleet the global setup started (the same process keeps it). */
export default async function teardown(): Promise<void> {
  await (globalThis as { __wdrSharedFleet?: Fleet }).__wdrSharedFleet?.stop();
}
