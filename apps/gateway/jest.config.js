import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jestConfigWithSharedFleet } from '../../jest.preset.js';

// Files under test/e2e/shared/ share one fleet (started once per run); the other e2e files start their own.
export default jestConfigWithSharedFleet(dirname(fileURLToPath(import.meta.url)), 'test/e2e/shared');
