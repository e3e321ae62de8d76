import { spawn } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * serve()'s shutdown, in a real process sent SIGTERM: exit 0 with the time it took once the work
 * stopped; past the grace period, exit 1 with a log naming what it still waited for.
 */
const KIT = join(dirname(fileURLToPath(import.meta.url)), '..');

function serviceProcess(stopMs: number): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
  const script = `
    import express from 'express';
    import { createLogger } from './dist/log.js';
    import { serve } from './dist/service.js';
    const log = createLogger('shutdown-test', 'info');
    await serve({
      name: 'shutdown-test', log, graceMs: 400, port: 0, host: '127.0.0.1',
      service: { app: express(), start: async () => {}, stop: () => new Promise((r) => setTimeout(r, ${stopMs})) },
    });
    process.stdout.write('READY\\n');
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: KIT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('READY\n') && !child.killed) child.kill('SIGTERM');
    });
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      resolve({
        code,
        lines: out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      }),
    );
  });
}

describe('serve: stopping on SIGTERM', () => {
  it('exits 0 once the work stopped within the grace period, and logs how long it took', async () => {
    const { code, lines } = await serviceProcess(50);
    expect(code).toBe(0);
    const stopped = lines.find((l) => l['msg'] === 'stopped');
    expect(stopped?.['ms']).toEqual(expect.any(Number));
    expect(stopped!['ms'] as number).toBeGreaterThanOrEqual(40);
  }, 20_000);

  it('exits 1 past the grace period, naming what it still waited for', async () => {
    const { code, lines } = await serviceProcess(60_000);
    expect(code).toBe(1);
    expect(lines.find((l) => l['msg'] === 'graceful shutdown timed out')).toMatchObject({
      grace_ms: 400,
      waiting_for: 'the work in flight (consumers, jobs, pools)',
    });
  }, 20_000);
});
