import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { SERVICE_NAMES, SERVICE_NODE_ARGS, SERVICE_PROCESS_ENV } from './services.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

/**
 * A service's node flags and allocator settings are spelled in four places (the image, `npm start`,
 * `./dev`, the test kit's fleets): the benches measure the kit's, production runs the image's.
 */
describe('how a service process starts', () => {
  const settings = Object.entries(SERVICE_PROCESS_ENV);

  it("the image's CMD has the kit's node flags and its ENV the kit's allocator settings", () => {
    const dockerfile = read('infra/docker/service.Dockerfile');
    expect(dockerfile).toContain(`CMD ["node", ${SERVICE_NODE_ARGS.map((a) => JSON.stringify(a)).join(', ')}, "dist/main.js"]`);
    for (const [name, value] of settings) expect(dockerfile).toMatch(new RegExp(`^\\s+${name}=${value} \\\\$`, 'm'));
  });

  it("every service's npm start and ./dev start it the same way", () => {
    const defaults = settings.map(([name, value]) => `${name}=\${${name}:-${value}}`).join(' ');
    for (const service of SERVICE_NAMES) {
      const start = (JSON.parse(read(`apps/${service}/package.json`)) as { scripts: { start: string } }).scripts.start;
      expect({ service, start }).toEqual({ service, start: `${defaults} node ${SERVICE_NODE_ARGS.join(' ')} dist/main.js` });
    }
    const dev = read('dev');
    for (const [name, value] of settings) expect(dev).toContain(`${name}="\${${name}:-${value}}"`);
    expect(dev).toContain(`nohup node ${SERVICE_NODE_ARGS.join(' ')} dist/main.js`);
  });
});
