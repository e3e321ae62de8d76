import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { orchestratorDatabase, requestRowOf } from './database.js';
import { PublicError } from '@wdr/kit/errors';
import { enqueueMany, makeEnvelope } from '@wdr/kit/kafka';
import { Sealer } from '@wdr/kit/sealing';
import { appendEvent } from '../src/domain/requests/events.js';
import { EVERY_TENANT, registerLifecycleListeners, releaseLifecycleListener } from '../src/domain/lifecycle-listeners.js';

/**
 * A request event is mirrored on request.lifecycle only for a tenant somebody listens to: the
 * outbox's insert trigger against lifecycle_listeners, on the real Postgres with the real event
 * writer (appendEvent). The history is stored either way.
 */
const testDb = orchestratorDatabase();
const sealer = Sealer.fromBase64(Buffer.alloc(32, 9).toString('base64'));

async function requestOf(tenantId: string): Promise<{ id: string; tenantId: string }> {
  const { id } = await testDb.db.dataRequest.create({ data: requestRowOf(sealer, tenantId) });
  return { id, tenantId };
}

/** One event appended in its own transaction; answers whether it was mirrored and whether it was stored. */
async function eventOf(request: { id: string; tenantId: string }): Promise<{ mirrored: boolean; stored: boolean }> {
  const seq = await testDb.db.$transaction((tx) => appendEvent(tx, request, 'request.running', 'running', {}));
  return witnessed(request.id, seq);
}

async function witnessed(requestId: string, seq: number): Promise<{ mirrored: boolean; stored: boolean }> {
  const [row] = await testDb.db.$queryRawUnsafe<{ mirrored: boolean; stored: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM outbox_messages WHERE topic = 'requestLifecycle' AND message_key = $1
                      AND (envelope->'data'->>'event_id')::int = $2) AS mirrored,
            EXISTS (SELECT 1 FROM request_events WHERE request_id = $1::uuid AND seq = $2) AS stored`,
    requestId,
    seq,
  );
  return row!;
}

const dispatcher = (tenantIds: string[], complete = false) =>
  registerLifecycleListeners(testDb.db, 'webhook-dispatcher', {
    holder: 'webhook-dispatcher',
    tenant_ids: tenantIds,
    ttl_seconds: null,
    complete,
  });

describe('lifecycle mirrors only for listened tenants', () => {
  // The migration registers "every tenant" for the dispatcher; its first sync ends that. These run in order.
  const listened = randomUUID();
  const silent = randomUUID();

  it('mirrors every tenant until the dispatcher said which tenants it listens to', async () => {
    expect(await eventOf(await requestOf(silent))).toEqual({ mirrored: true, stored: true });
    expect(await testDb.db.lifecycleListener.count({ where: { tenantId: EVERY_TENANT } })).toBe(1);
  });

  it('after the sync, mirrors the registered tenant only; the other keeps its history', async () => {
    await expect(dispatcher([listened], true)).resolves.toEqual({ registered: 1 });
    expect(await testDb.db.lifecycleListener.count({ where: { tenantId: EVERY_TENANT } })).toBe(0);
    expect(await eventOf(await requestOf(listened))).toEqual({ mirrored: true, stored: true });
    expect(await eventOf(await requestOf(silent))).toEqual({ mirrored: false, stored: true });
  });

  it('a batch.completed is written whoever listens; other topics are not looked at', async () => {
    const before = await testDb.db.outboxMessage.count();
    await testDb.db.$transaction((tx) =>
      enqueueMany(tx, [
        {
          topic: 'requestLifecycle',
          key: randomUUID(),
          envelope: makeEnvelope('requestLifecycle', 'batch.completed', silent, {
            batch_id: randomUUID(),
            status: 'completed',
            total_jobs: 1,
            completed: 1,
            failed: 0,
            cancelled: 0,
            finished_at: new Date().toISOString(),
          }),
        },
      ]),
    );
    expect(await testDb.db.outboxMessage.count()).toBe(before + 1);
  });

  it('a gateway instance listens until its registration lapses', async () => {
    const streamed = randomUUID();
    const request = await requestOf(streamed);
    await registerLifecycleListeners(testDb.db, 'gateway', { holder: 'gateway:i-1', tenant_ids: [streamed], ttl_seconds: 60 });
    expect(await eventOf(request)).toEqual({ mirrored: true, stored: true });
    // A renewal keeps it (no lock taken: it is in force), and registers beside it a tenant not yet listened to.
    const joined = randomUUID();
    const expiresBefore = (await testDb.db.lifecycleListener.findFirstOrThrow({ where: { holder: 'gateway:i-1', tenantId: streamed } }))
      .expiresAt!;
    await registerLifecycleListeners(testDb.db, 'gateway', { holder: 'gateway:i-1', tenant_ids: [streamed, joined], ttl_seconds: 120 });
    const expiresAfter = (await testDb.db.lifecycleListener.findFirstOrThrow({ where: { holder: 'gateway:i-1', tenantId: streamed } }))
      .expiresAt!;
    expect(expiresAfter.getTime()).toBeGreaterThan(expiresBefore.getTime() + 30_000);
    expect(await eventOf(request)).toEqual({ mirrored: true, stored: true });
    expect(await eventOf(await requestOf(joined))).toEqual({ mirrored: true, stored: true });
    await testDb.db.$executeRawUnsafe(
      `UPDATE lifecycle_listeners SET expires_at = now() - interval '1 second' WHERE holder = 'gateway:i-1'`,
    );
    expect(await eventOf(request)).toEqual({ mirrored: false, stored: true });
    // The holder's next registration (another tenant) clears what lapsed.
    await registerLifecycleListeners(testDb.db, 'gateway', { holder: 'gateway:i-1', tenant_ids: [randomUUID()], ttl_seconds: 60 });
    expect(await testDb.db.lifecycleListener.count({ where: { holder: 'gateway:i-1', tenantId: streamed } })).toBe(0);
  });

  it('a released tenant is no longer mirrored', async () => {
    const request = await requestOf(listened);
    await expect(
      releaseLifecycleListener(testDb.db, 'webhook-dispatcher', { holder: 'webhook-dispatcher', tenant_id: listened }),
    ).resolves.toEqual({
      released: true,
    });
    expect(await eventOf(request)).toEqual({ mirrored: false, stored: true });
    await expect(
      releaseLifecycleListener(testDb.db, 'webhook-dispatcher', { holder: 'webhook-dispatcher', tenant_id: listened }),
    ).resolves.toEqual({
      released: false,
    });
  });

  it('a registration is answered only after the tenant writes in flight committed, and the next write mirrors', async () => {
    const tenant = randomUUID();
    const request = await requestOf(tenant);
    // A transaction that appended an event before the registration (not mirrored) and is still open.
    let commit!: () => void;
    const open = new Promise<void>((resolve) => (commit = resolve));
    let inFlightSeq = 0;
    const writer = testDb.db.$transaction(
      async (tx) => {
        inFlightSeq = await appendEvent(tx, request, 'request.running', 'running', {});
        await open;
      },
      { timeout: 30_000 },
    );
    while (inFlightSeq === 0) await new Promise((r) => setTimeout(r, 10));
    let answered = false;
    const registration = dispatcher([tenant]).then((a) => {
      answered = true;
      return a;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(answered).toBe(false);
    commit();
    await writer;
    await expect(registration).resolves.toEqual({ registered: 1 });
    // When the answer came, the unmirrored event was already in the stored history.
    expect(await witnessed(request.id, inFlightSeq)).toEqual({ mirrored: false, stored: true });
    expect(await eventOf(request)).toEqual({ mirrored: true, stored: true });
  });

  it('a service registers only under its own name', async () => {
    const refused = registerLifecycleListeners(testDb.db, 'gateway', {
      holder: 'webhook-dispatcher',
      tenant_ids: [randomUUID()],
      ttl_seconds: null,
    });
    await expect(refused).rejects.toBeInstanceOf(PublicError);
    await expect(refused).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(releaseLifecycleListener(testDb.db, 'gateway', { holder: 'gateway-x', tenant_id: randomUUID() })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});
