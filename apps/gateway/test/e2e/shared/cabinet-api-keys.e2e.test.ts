import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, eventually, sharedFleet, withDatabase, type Fleet } from '@wdr/testkit';

/**
 * Issue 21 item 6, in the cabinet: a tenant lists its data API keys without their secrets and
 * revokes one (`/api/v1/client/api-keys`), effective on the gateway within seconds like the
 * operators' `admin revoke-key`, also right after the credential cache's LISTEN connection was
 * cut; another tenant's key is a 404. Through the public API on the real fleet.
 */
let fleet: Fleet;
const gw = () => request(fleet.url('gateway'));

interface Tenant {
  id: string;
  keys: string[];
  token: string;
}

async function tenant(name: string): Promise<Tenant> {
  const t = await adminCommand(fleet, ['create-tenant', '--name', `${name}-${randomUUID()}`, '--credits', '10']);
  const id = t['tenant_id'] as string;
  const second = (await adminCommand(fleet, ['issue-key', '--tenant', id, '--label', 'ci', '--expires-in-days', '30']))[
    'api_key'
  ] as string;
  const token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', id]))['cabinet_token'] as string;
  return { id, keys: [t['api_key'] as string, second], token };
}

const list = (t: Tenant) => gw().get('/api/v1/client/api-keys').set('Authorization', `Bearer ${t.token}`);
const revoke = (t: Tenant, keyId: string) => gw().delete(`/api/v1/client/api-keys/${keyId}`).set('Authorization', `Bearer ${t.token}`);
const balance = (k: string) => gw().get('/api/v1/data/balance').set('X-API-Key', k);
/** The status a key gets, polled until it is `want` (at most `ms`). */
const statusBecomes = (k: string, want: number, ms = 5_000) =>
  eventually(
    async () => (await balance(k)).status,
    (s) => s === want,
    ms,
    50,
  );

type Listed = {
  id: string;
  prefix: string;
  label: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  state: string;
};
async function keysOf(t: Tenant): Promise<Listed[]> {
  const res = await list(t);
  expect(res.status).toBe(200);
  return (res.body as { items: Listed[] }).items;
}

/** `wdr_<12-char prefix>_<43-char secret>`: cut by position, the secret (base64url) may itself hold `_`. */
const prefixOf = (k: string) => k.slice(4, 16);
const secretOf = (k: string) => k.slice(17);

let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  fleet = sharedFleet();
  [a, b] = await Promise.all([tenant('cabinet-keys-a'), tenant('cabinet-keys-b')]);
}, 120_000);

describe('listing', () => {
  it("lists the tenant's keys, oldest first, with prefix, label, dates and state, never a secret", async () => {
    const res = await list(a);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const items = (res.body as { items: Listed[] }).items;
    expect(items.map((k) => [k.label, k.state, k.prefix])).toEqual([
      ['default', 'active', prefixOf(a.keys[0]!)],
      ['ci', 'active', prefixOf(a.keys[1]!)],
    ]);
    expect(items[0]).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), expires_at: null, revoked_at: null });
    expect(Date.parse(items[1]!.expires_at!)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    // Neither key's secret part, nor a hash, nor another tenant's key.
    for (const k of a.keys) expect(res.text).not.toContain(secretOf(k).slice(0, 16));
    expect(res.text).not.toMatch(/hash/i);
    const other = await keysOf(b);
    for (const k of other) expect(res.text).not.toContain(k.id);
  });

  it('needs the cabinet bearer token: none, or a data API key, is 401', async () => {
    expect((await gw().get('/api/v1/client/api-keys')).status).toBe(401);
    expect((await gw().get('/api/v1/client/api-keys').set('X-API-Key', a.keys[0]!)).status).toBe(401);
    expect((await gw().get('/api/v1/client/api-keys').set('Authorization', `Bearer ${a.keys[0]}`)).status).toBe(401);
  });
});

describe('revoking', () => {
  it("another tenant's key, an unknown id and a non-uuid are 404, and nothing is revoked", async () => {
    const [bKey] = await keysOf(b);
    const res = await revoke(a, bKey!.id);
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
    expect((await revoke(a, randomUUID())).status).toBe(404);
    expect((await revoke(a, 'not-a-uuid')).status).toBe(404);
    expect((await balance(b.keys[0]!)).status).toBe(200);
    expect((await keysOf(b)).every((k) => k.state === 'active')).toBe(true);
  });

  it('revokes one key: refused within seconds, the other keys keep working, the listing shows it revoked; twice is harmless', async () => {
    const keys = await keysOf(a);
    expect((await balance(a.keys[1]!)).status).toBe(200);
    const t0 = Date.now();
    const res = await revoke(a, keys[1]!.id);
    expect(res.status).toBe(204);
    expect(await statusBecomes(a.keys[1]!, 401)).toBe(401);
    console.log(`cabinet revocation -> 401: ${Date.now() - t0} ms`);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect((await balance(a.keys[0]!)).status).toBe(200);
    const after = await keysOf(a);
    expect(after[1]).toMatchObject({ id: keys[1]!.id, state: 'revoked', revoked_at: expect.any(String) });
    expect(after[0]).toMatchObject({ state: 'active' });
    expect((await revoke(a, keys[1]!.id)).status).toBe(204);
    expect((await keysOf(a))[1]!.revoked_at).toBe(after[1]!.revoked_at);
  });

  it('revokes the key in use, within seconds even right after the LISTEN connection was cut; the cabinet token still works', async () => {
    const keys = await keysOf(a);
    // The key is in the credential cache (answered from memory)...
    for (let i = 0; i < 3; i++) expect((await balance(a.keys[0]!)).status).toBe(200);
    // ...when the connection that receives the revocation notifications is cut. Its last statement
    // is its LISTEN or its heartbeat's `SELECT 1` (an idle pool connection matched too is harmless).
    const cut = await withDatabase(
      fleet.databases.gateway.url,
      async (c) =>
        (
          await c.query<{ t: boolean }>(
            `SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle'
               AND (query LIKE 'LISTEN%' OR query = 'SELECT 1') AND pid <> pg_backend_pid()`,
          )
        ).rows.filter((r) => r.t).length,
    );
    expect(cut).toBeGreaterThanOrEqual(1);
    // The gateway noticed: it was the notification connection that went.
    await eventually(
      async () => fleet.logs('gateway'),
      (l) => l.includes('listening connection lost'),
      5_000,
      50,
    );
    const t0 = Date.now();
    expect((await revoke(a, keys[0]!.id)).status).toBe(204);
    expect(await statusBecomes(a.keys[0]!, 401)).toBe(401);
    console.log(`cabinet revocation after the LISTEN connection was cut -> 401: ${Date.now() - t0} ms`);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect((await keysOf(a)).map((k) => k.state)).toEqual(['revoked', 'revoked']);
    // Another tenant is untouched.
    expect((await balance(b.keys[0]!)).status).toBe(200);
  });
});
