import type { Fleet } from '../fleet.js';
import { startSharedFleet } from '../shared-fleet.js';

/** Jest global setup of a project whose files share one fleet (see ../shared-fleet.ts). */
export default async function setup(): Promise<void> {
  (globalThis as { __wdrSharedFleet?: Fleet }).__wdrSharedFleet = await startSharedFleet();
}
