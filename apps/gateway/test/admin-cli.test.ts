import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, startServiceProcess, type ServiceProcess, type TestDatabase } from '@wdr/testkit';

/**
 * The operator command lines (apps/<service>/dist/admin.js, built): --help, usage and environment
 * errors without stack traces; the gateway's create-tenant refusing a second tenant of one name,
 * and, when the grant fails, still printing the tenant and key with the exact retry command.
 * Real Postgres and a real billing-ledger process.
 */
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PEPPER = 'test-pepper-not-secret-0123456789';

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function admin(service: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [`${REPO}apps/${service}/dist/admin.js`, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (err += b.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => resolve({ code, out, err }));
  });
}

const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

let gatewayDb: TestDatabase;
let ledgerDb: TestDatabase;
let ledger: ServiceProcess;
let gatewayEnv: Record<string, string>;

beforeAll(async () => {
  [gatewayDb, ledgerDb] = await Promise.all([createTestDatabase('gateway'), createTestDatabase('billing-ledger')]);
  ledger = await startServiceProcess('billing-ledger', { DATABASE_URL: ledgerDb.url, LOG_LEVEL: 'warn' });
  gatewayEnv = { DATABASE_URL: gatewayDb.url, API_KEY_PEPPER: PEPPER, LEDGER_URL: ledger.url, LOG_LEVEL: 'silent' };
}, 120_000);

afterAll(async () => {
  await ledger?.kill('SIGTERM');
  await Promise.all([gatewayDb?.drop(), ledgerDb?.drop()]);
}, 60_000);

describe.each([
  ['gateway', 'create-tenant', 'API_KEY_PEPPER'],
  ['billing-ledger', 'top-up', 'DATABASE_URL'],
  ['fetch-orchestrator', 'proxy-add', 'TARGET_URL_KEY'],
  ['webhook-dispatcher', 'webhook-reseal', 'WEBHOOK_SECRET_KEY'],
])('%s admin', (service, command, variable) => {
  it('--help prints the usage and exits 0', async () => {
    for (const args of [['--help'], ['-h'], [command, '--help']]) {
      const r = await admin(service, args, {});
      expect(r.code).toBe(0);
      expect(r.out).toContain('usage: admin <command>');
      expect(r.out).toContain(command);
      noStack(r.out + r.err);
    }
  });

  it('an unknown command or option prints the usage and exits 2', async () => {
    for (const args of [['frobnicate'], [], [command, '--no-such-option']]) {
      const r = await admin(service, args, {});
      expect(r.code).toBe(2);
      expect(r.err).toContain('usage: admin <command>');
      noStack(r.err);
    }
  });

  it('a missing environment variable is one line naming it, exit 2', async () => {
    const r = await admin(service, [command], {});
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain(`${variable} is not set`);
    noStack(r.err);
    const invalid = await admin(service, [command], { DATABASE_URL: 'not a url' });
    expect(invalid.code).toBe(2);
    expect(invalid.err).toMatch(/DATABASE_URL is invalid/);
  });
});

describe('gateway create-tenant', () => {
  it('creates once per name and refuses a rerun, pointing at issue-key', async () => {
    const first = await admin('gateway', ['create-tenant', '--name', 'cli-acme', '--credits', '7'], gatewayEnv);
    expect(first.code).toBe(0);
    const t = JSON.parse(first.out) as { tenant_id: string; api_key: string; balance_tokens: number };
    expect(t.balance_tokens).toBe(7);
    const again = await admin('gateway', ['create-tenant', '--name', 'cli-acme', '--credits', '7'], gatewayEnv);
    expect(again.code).toBe(1);
    expect(again.out).toBe('');
    expect(again.err).toContain(`already exists (tenant_id ${t.tenant_id})`);
    expect(again.err).toContain(`admin issue-key --tenant ${t.tenant_id}`);
    noStack(again.err);
    // Concurrent runs of one name make one tenant.
    const runs = await Promise.all([1, 2, 3].map(() => admin('gateway', ['create-tenant', '--name', 'cli-race'], gatewayEnv)));
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1, 1]);
  }, 60_000);

  it('a failed grant still prints the tenant and key, the error and the retry command; the retry grants once', async () => {
    const r = await admin('gateway', ['create-tenant', '--name', 'cli-grant-fails', '--credits', '5'], { ...gatewayEnv, LEDGER_URL: 'http://127.0.0.1:9' });
    expect(r.code).toBe(1);
    const t = JSON.parse(r.out) as { tenant_id: string; api_key: string; grant_failed: boolean };
    expect(t.api_key).toMatch(/\S{16,}/);
    expect(t.grant_failed).toBe(true);
    noStack(r.err);
    const retry = `admin grant --tenant ${t.tenant_id} --amount 5 --reference initial-grant:${t.tenant_id}`;
    expect(r.err).toContain(retry);
    const args = retry.split(' ').slice(1);
    const granted = await admin('gateway', args, gatewayEnv);
    expect(granted.code).toBe(0);
    expect(JSON.parse(granted.out)).toMatchObject({ tenant_id: t.tenant_id, balance_tokens: 5 });
    // The same reference again is a replay, not a second grant.
    const replay = await admin('gateway', args, gatewayEnv);
    expect(JSON.parse(replay.out)).toMatchObject({ balance_tokens: 5 });
  }, 60_000);
});
