import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jestConfigWithSharedFleet } from '../../jest.preset.js';

// Files under test/e2e/shared/ share one fleet (started once per run); the other e2e files start their own.
// A test gets 90 s, not the preset's 30: an end-to-end test spawns admin CLIs and waits on six services,
// and machines of the same kind ran this suite 2.3x apart in wall time (a time-out is not what these
// tests assert; each waits for its outcome with its own bound).
// The last argument: the files `./dev test` runs in its third lane (WDR_JEST_LANE=late), after the
// checks, so the gateway's lane (the run's longest) ends with the others: the unit files and four
// short end-to-end files with fleets of their own.
export default jestConfigWithSharedFleet(dirname(fileURLToPath(import.meta.url)), 'test/e2e/shared', { testTimeout: 90_000 }, [
  'src/**/*.test.ts',
  'test/*.test.ts',
  'test/e2e/{kafka-security,request-ids,recipe-generation,service-identity}.e2e.test.ts',
]);
