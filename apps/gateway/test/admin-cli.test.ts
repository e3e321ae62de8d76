import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AdminBatchRequest } from '@wdr/contracts';
import {
  createTestDatabase,
  identityEnvOf,
  startAdminBatch,
  startServiceProcess,
  type AdminBatch,
  type AdminService,
  type ServiceProcess,
  type TestDatabase,
} from '@wdr/testkit';

/**
 * The operator command lines (apps/<service>/dist/admin.js, built): --help, usage and environment
 * errors without stack traces; the gateway's create-tenant making one tenant per name, a rerun of
 * it completing a failed initial grant (exit 0, the existing tenant, no key), and a rerun with other
 * credits refused as a conflict; `--batch` (one process, a command per stdin line) answering each
 * of the command lines here with the exit code and the texts of its single run.
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
    const proc = spawn(process.execPath, [`${REPO}apps/${service}/dist/admin.js`, ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (err += b.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** One batch process per service for the whole file, started with nothing but PATH, as the single runs are. */
const batches = new Map<string, AdminBatch>();

/** Run a command line once as its own process and once through `--batch`: the two answer alike. */
async function both(service: AdminService, args: string[], env: Record<string, string>): Promise<Run> {
  const single = await admin(service, args, env);
  let batch = batches.get(service);
  if (!batch) batches.set(service, (batch = startAdminBatch(service, { PATH: process.env['PATH'] ?? '' })));
  const reply = await batch.run({ args, env });
  expect({ code: reply.code, out: reply.stdout, err: reply.stderr }).toEqual({
    code: single.code,
    out: single.out.replace(/\n$/, ''),
    err: single.err.replace(/\n$/, ''),
  });
  return single;
}

const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

let gatewayDb: TestDatabase;
let ledgerDb: TestDatabase;
let ledger: ServiceProcess;
let gatewayEnv: Record<string, string>;

beforeAll(async () => {
  [gatewayDb, ledgerDb] = await Promise.all([createTestDatabase('gateway'), createTestDatabase('billing-ledger')]);
  ledger = await startServiceProcess('billing-ledger', { DATABASE_URL: ledgerDb.url, LOG_LEVEL: 'warn' });
  gatewayEnv = {
    ...identityEnvOf('gateway'),
    DATABASE_URL: gatewayDb.url,
    API_KEY_PEPPER: PEPPER,
    LEDGER_URL: ledger.url,
    LOG_LEVEL: 'silent',
  };
}, 120_000);

afterAll(async () => {
  await Promise.all([...batches.values()].map((b) => b.close()));
  await ledger?.kill('SIGTERM');
  await Promise.all([gatewayDb?.drop(), ledgerDb?.drop()]);
}, 60_000);

describe.each([
  ['gateway', 'create-tenant', 'API_KEY_PEPPER'],
  ['billing-ledger', 'top-up', 'DATABASE_URL'],
  ['fetch-orchestrator', 'proxy-add', 'TARGET_URL_KEY'],
  ['webhook-dispatcher', 'webhook-reseal', 'WEBHOOK_SECRET_KEY'],
] as const)('%s admin', (service, command, variable) => {
  it('--help prints the usage and exits 0', async () => {
    for (const args of [['--help'], ['-h'], [command, '--help']]) {
      const r = await both(service, args, {});
      expect(r.code).toBe(0);
      expect(r.out).toContain('usage: admin <command>');
      expect(r.out).toContain(command);
      noStack(r.out + r.err);
    }
  });

  it('an unknown command or option prints the usage and exits 2', async () => {
    for (const args of [['frobnicate'], [], [command, '--no-such-option']]) {
      const r = await both(service, args, {});
      expect(r.code).toBe(2);
      expect(r.err).toContain('usage: admin <command>');
      noStack(r.err);
    }
  });

  it('a missing environment variable is one line naming it, exit 2', async () => {
    const r = await both(service, [command], {});
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain(`${variable} is not set`);
    noStack(r.err);
    const invalid = await both(service, [command], { DATABASE_URL: 'not a url' });
    expect(invalid.code).toBe(2);
    expect(invalid.err).toMatch(/DATABASE_URL is invalid/);
  });
});

describe('gateway create-tenant', () => {
  const run = (name: string, credits: number | undefined, env = gatewayEnv) =>
    admin('gateway', ['create-tenant', '--name', name, ...(credits === undefined ? [] : ['--credits', String(credits)])], env);

  it('creates once per name; a rerun of the same command exits 0 with the existing tenant, no key and no second grant', async () => {
    const first = await run('cli-acme', 7);
    expect(first.code).toBe(0);
    const t = JSON.parse(first.out) as { tenant_id: string; created: boolean; api_key: string; balance_tokens: number };
    expect(t).toMatchObject({ created: true, balance_tokens: 7 });
    expect(t.api_key).toMatch(/\S{16,}/);
    const again = await run('cli-acme', 7);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toEqual({ tenant_id: t.tenant_id, created: false, initial_grant: 'already granted', balance_tokens: 7 });
    expect(again.err).toContain(`already exists (tenant_id ${t.tenant_id})`);
    expect(again.err).toContain(`admin issue-key --tenant ${t.tenant_id}`);
    noStack(again.err);
    // Concurrent runs of one name make one tenant; one of them shows its key.
    const runs = await Promise.all([1, 2, 3].map(() => run('cli-race', undefined)));
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    const outs = runs.map((r) => JSON.parse(r.out) as { tenant_id: string; created: boolean; api_key?: string });
    expect(new Set(outs.map((o) => o.tenant_id)).size).toBe(1);
    expect(outs.filter((o) => o.created && o.api_key).length).toBe(1);
    expect(outs.filter((o) => !o.created && o.api_key === undefined).length).toBe(2);
  }, 60_000);

  it('a rerun with other credits is a conflict: one line, exit 1, nothing changed', async () => {
    const first = await run('cli-conflict', 7);
    expect(first.code).toBe(0);
    const t = JSON.parse(first.out) as { tenant_id: string };
    const other = await run('cli-conflict', 9);
    expect(other.code).toBe(1);
    expect(other.out).toBe('');
    expect(other.err.trim().split('\n')).toHaveLength(1);
    expect(other.err).toContain(
      `tenant "cli-conflict" exists (tenant_id ${t.tenant_id}) with an initial grant other than 9 credits; nothing changed`,
    );
    noStack(other.err);
    expect(JSON.parse((await run('cli-conflict', 7)).out)).toMatchObject({ tenant_id: t.tenant_id, balance_tokens: 7 });
  }, 60_000);

  it('a failed grant prints the tenant and key and the rerun that finishes it; the rerun grants once and exits 0', async () => {
    const r = await run('cli-grant-fails', 5, { ...gatewayEnv, LEDGER_URL: 'http://127.0.0.1:9' });
    expect(r.code).toBe(1);
    const t = JSON.parse(r.out) as { tenant_id: string; created: boolean; api_key: string; grant_failed: boolean };
    expect(t).toMatchObject({ created: true, grant_failed: true });
    expect(t.api_key).toMatch(/\S{16,}/);
    noStack(r.err);
    expect(r.err).toContain(
      'rerun the same command to finish it (the grant is made once): admin create-tenant --name "cli-grant-fails" --credits 5',
    );
    const finished = await run('cli-grant-fails', 5);
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.out)).toEqual({ tenant_id: t.tenant_id, created: false, initial_grant: 'granted now', balance_tokens: 5 });
    // Once more: a replay, not a second grant.
    const replay = await run('cli-grant-fails', 5);
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.out)).toEqual({ tenant_id: t.tenant_id, created: false, initial_grant: 'already granted', balance_tokens: 5 });
  }, 60_000);
});

describe('--batch', () => {
  it('runs command after command in one process, each with its own environment, and refuses a line that is not a request', async () => {
    const batch = startAdminBatch('gateway', { PATH: process.env['PATH'] ?? '' });
    try {
      const made = await batch.run({ args: ['create-tenant', '--name', 'cli-batch', '--credits', '3'], env: gatewayEnv });
      expect(made.code).toBe(0);
      const t = JSON.parse(made.stdout) as { tenant_id: string; created: boolean; api_key: string; balance_tokens: number };
      expect(t).toMatchObject({ created: true, balance_tokens: 3 });
      const key = await batch.run({ args: ['issue-key', '--tenant', t.tenant_id, '--label', 'second'], env: gatewayEnv });
      expect(key.code).toBe(0);
      const listed = await batch.run({ args: ['list-keys', '--tenant', t.tenant_id], env: gatewayEnv });
      expect((JSON.parse(listed.stdout) as { keys: { label: string }[] }).keys.map((k) => k.label).sort()).toEqual(['default', 'second']);
      // The next request's environment is its own: without the pepper, the one-line environment error.
      const bare = await batch.run({ args: ['list-keys', '--tenant', t.tenant_id] });
      expect(bare).toMatchObject({ code: 2, stdout: '' });
      expect(bare.stderr).toContain('API_KEY_PEPPER is not set');
      // A grant the ledger cannot take fails that command only; the process answers the next one.
      const down = await batch.run({
        args: ['grant', '--tenant', t.tenant_id, '--amount', '1', '--reference', 'r1'],
        env: { ...gatewayEnv, LEDGER_URL: 'http://127.0.0.1:9' },
      });
      expect(down.code).toBe(1);
      const up = await batch.run({ args: ['grant', '--tenant', t.tenant_id, '--amount', '1', '--reference', 'r1'], env: gatewayEnv });
      expect(up.code).toBe(0);
      expect(JSON.parse(up.stdout)).toMatchObject({ tenant_id: t.tenant_id, balance_tokens: 4 });
      for (const line of [{ args: 'list-keys' }, { args: [1] }, { args: ['list-keys'], env: { A: 1 } }] as unknown as AdminBatchRequest[]) {
        const refused = await batch.run(line);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/"args"|"env"/);
      }
    } finally {
      await batch.close();
    }
  }, 60_000);
});
