import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jestConfig } from '../../jest.preset.js';

export default jestConfig(dirname(fileURLToPath(import.meta.url)));
