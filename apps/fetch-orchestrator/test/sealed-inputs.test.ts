import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { orchestratorDatabase, requestRowOf } from './database.js';
import { withDatabase } from '@wdr/testkit';
import { Sealer } from '@wdr/kit/sealing';
import type { Prisma } from '../src/generated/prisma/client.js';
import { InputsPurgedError, openInputs, sealInputs, shownInputs, storedInputs } from '../src/domain/requests/sealed-inputs.js';
import { detailView } from '../src/domain/requests/views.js';
import { retentionPass } from '../src/domain/retention.js';

/**
 * Rows stored before inputs were sealed (the clear form) against the real Postgres: the retention
 * pass seals them (or, when their URL is already purged, drops the values), the stages read both
 * forms, key rotation opens what the previous key sealed, and views never show a value.
 */
const testDb = orchestratorDatabase();
const k1 = { id: 'k1', key: Buffer.alloc(32, 1) };
const k2 = { id: 'k2', key: Buffer.alloc(32, 2) };
const sealer = Sealer.fromKeys(k1);

const CLEAR = {
  timeout_ms: 45000,
  headers: { Authorization: 'Bearer CLEAR-AUTH-1' },
  cookies: { sid: 'CLEAR-COOKIE-1' },
  browser_actions: [
    { type: 'fill', selector: '#user', value: 'CLEAR-FILL-1' },
    { type: 'press', key: 'Enter' },
  ],
};
const SECRETS = ['CLEAR-AUTH-1', 'CLEAR-COOKIE-1', 'CLEAR-FILL-1'];

async function stored(extra: Partial<Prisma.DataRequestUncheckedCreateInput>) {
  return testDb.db.dataRequest.create({
    data: requestRowOf(sealer, randomUUID(), {
      url: 'http://127.0.0.1:9/x',
      routeMode: 'browser',
      proxyType: null,
      options: CLEAR,
      ...extra,
    }),
  });
}

const rowText = (id: string) =>
  withDatabase(
    testDb.url,
    async (c) => (await c.query<{ t: string }>('SELECT row_to_json(r)::text AS t FROM data_requests r WHERE id = $1', [id])).rows[0]!.t,
  );

describe('rows stored in the clear form', () => {
  it('are what SEAL_REQUEST_INPUTS=false writes, and the retention pass leaves them alone then', async () => {
    const id = randomUUID();
    expect(storedInputs({ sealer, sealRequestInputs: false }, id, CLEAR)).toEqual({ options: CLEAR, secretsSealed: null });
    expect(storedInputs({ sealer, sealRequestInputs: true }, id, CLEAR).secretsSealed).toMatch(/^k1\./);
    const row = await stored({});
    expect(await retentionPass(testDb.db, sealer, new Date(), undefined, false)).toMatchObject({ sealed: 0 });
    expect((await testDb.db.dataRequest.findUniqueOrThrow({ where: { id: row.id } })).options).toEqual(CLEAR);
  });

  it('are read as they are until the retention pass seals them; the pass leaves no value in the row', async () => {
    const live = await stored({});
    expect(openInputs(sealer, live)).toEqual(CLEAR);
    const before = detailView(live).request;
    expect(JSON.stringify(before)).not.toMatch(/CLEAR-/);

    const pass = await retentionPass(testDb.db, sealer);
    expect(pass.sealed).toBeGreaterThanOrEqual(1);
    const text = await rowText(live.id);
    for (const s of SECRETS) expect(text).not.toContain(s);
    const after = await testDb.db.dataRequest.findUniqueOrThrow({ where: { id: live.id } });
    expect(after.secretsSealed).toMatch(/^k1\./);
    expect(openInputs(sealer, after)).toEqual(CLEAR);
    // The detail is the same before and after.
    expect(detailView(after).request).toEqual(before);
    expect(before).toMatchObject({
      header_names: ['Authorization'],
      cookie_names: ['sid'],
      browser_actions: [{ type: 'fill', selector: '#user' }, { type: 'press' }],
    });
    // A second pass finds nothing left to seal for this row.
    await retentionPass(testDb.db, sealer);
    expect((await testDb.db.dataRequest.findUniqueOrThrow({ where: { id: live.id } })).secretsSealed).toBe(after.secretsSealed);
  });

  it('whose URL was already purged lose the values without being sealed', async () => {
    const gone = await stored({ targetSealed: null, targetPurgeAt: new Date(Date.now() - 1000) });
    await retentionPass(testDb.db, sealer);
    const row = await testDb.db.dataRequest.findUniqueOrThrow({ where: { id: gone.id } });
    expect(row.secretsSealed).toBeNull();
    for (const s of SECRETS) expect(await rowText(gone.id)).not.toContain(s);
    expect(() => openInputs(sealer, row)).toThrow(InputsPurgedError);
    expect(detailView(row).request).toMatchObject({ header_names: ['Authorization'], cookie_names: ['sid'] });
  });
});

describe('sealed inputs', () => {
  it('are purged with the URL', async () => {
    const id = randomUUID();
    const s = sealInputs(sealer, id, CLEAR);
    await stored({
      id,
      options: s.options as Prisma.InputJsonObject,
      secretsSealed: s.secretsSealed,
      targetPurgeAt: new Date(Date.now() - 1000),
    });
    const kept = randomUUID();
    const k = sealInputs(sealer, kept, CLEAR);
    await stored({ id: kept, options: k.options as Prisma.InputJsonObject, secretsSealed: k.secretsSealed });
    await retentionPass(testDb.db, sealer);
    expect(await testDb.db.dataRequest.findUniqueOrThrow({ where: { id } })).toMatchObject({ targetSealed: null, secretsSealed: null });
    expect((await testDb.db.dataRequest.findUniqueOrThrow({ where: { id: kept } })).secretsSealed).toBe(k.secretsSealed);
  });

  it('open after a key rotation (k2 current, k1 previous) and are sealed under the current key', async () => {
    const id = randomUUID();
    const old = sealInputs(sealer, id, CLEAR);
    const rotated = Sealer.fromKeys(k2, [k1]);
    expect(openInputs(rotated, { id, options: old.options, secretsSealed: old.secretsSealed })).toEqual(CLEAR);
    expect(sealInputs(rotated, id, CLEAR).secretsSealed).toMatch(/^k2\./);
    // Without k1 in the ring it does not open: the previous key is kept until the rows are purged.
    expect(() => openInputs(Sealer.fromKeys(k2), { id, options: old.options, secretsSealed: old.secretsSealed })).toThrow(/k1/);
  });

  it('are bound to their request: another request id does not open them', () => {
    const s = sealInputs(sealer, randomUUID(), CLEAR);
    expect(() => openInputs(sealer, { id: randomUUID(), options: s.options, secretsSealed: s.secretsSealed })).toThrow();
  });

  it('a request without headers, cookies or actions seals nothing and shows nothing extra', () => {
    const s = sealInputs(sealer, randomUUID(), { timeout_ms: 1000 });
    expect(s).toEqual({ options: { timeout_ms: 1000 }, secretsSealed: null });
    expect(shownInputs(s.options)).toEqual({ timeout_ms: 1000 });
  });
});
