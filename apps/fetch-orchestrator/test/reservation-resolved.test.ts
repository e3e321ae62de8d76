import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { orchestratorDatabase, requestRowOf } from './database.js';
import { Sealer } from '@wdr/kit/sealing';
import type { EventData } from '@wdr/contracts';
import { appendEvent } from '../src/domain/requests/events.js';
import {
  reflectResolvedReservation,
  reflectResolvedReservations,
  type ResolvedReservation,
} from '../src/domain/requests/reservation-resolved.js';

/**
 * billing.events in a run (reflectResolvedReservations, one statement per run) must leave exactly
 * what the single handler (reflectResolvedReservation, a transaction per event) leaves: the row's
 * token state, CAPTCHA tokens, base price and a workflow run's budget, the `tokens.<state>` event
 * with its number, and its `request.lifecycle` mirror (scope, tenant, status, x-request-id). Each
 * case runs on twin requests, one through each path, against the real Postgres.
 */
const testDb = orchestratorDatabase();
const sealer = Sealer.fromBase64(Buffer.alloc(32, 9).toString('base64'));

type Resolution = EventData<'billingEvents', 'billing.reservation_resolved'>;

async function stored(tenantId: string, opts: { status?: string; project?: boolean } = {}) {
  const id = randomUUID();
  const status = opts.status ?? 'completed';
  await testDb.db.$transaction(async (tx) => {
    const r = await tx.dataRequest.create({
      data: requestRowOf(sealer, tenantId, {
        id,
        status,
        routeMode: 'auto',
        baseTokens: 5,
        captchaTokens: 0,
        tokenState: 'settlement_pending',
        ...(opts.project ? { projectId: randomUUID(), environmentId: randomUUID(), budgetCommitted: 5 } : {}),
      }),
    });
    await appendEvent(tx, r, 'request.accepted', 'pending', {});
    await appendEvent(tx, r, `request.${status}`, status, {});
  });
  return id;
}

/** What a request's resolution left: the row's fields, its events after the first two, their mirrors. */
async function leftOf(id: string) {
  const row = await testDb.db.dataRequest.findUniqueOrThrow({ where: { id } });
  const events = await testDb.db.$queryRawUnsafe<{ seq: number; kind: string; status: string; payload: unknown }[]>(
    'SELECT seq, kind, status, payload FROM request_events WHERE request_id = $1::uuid AND seq > 2 ORDER BY seq',
    id,
  );
  const mirrors = await testDb.db.$queryRawUnsafe<{ envelope: Record<string, unknown> & { data: Record<string, unknown> } }[]>(
    `SELECT envelope FROM outbox_messages WHERE message_key = $1 AND topic = 'requestLifecycle' AND (envelope->'data'->>'event_id')::int > 2 ORDER BY id`,
    id,
  );
  return {
    row: {
      tokenState: row.tokenState,
      captchaTokens: row.captchaTokens,
      baseTokens: row.baseTokens,
      budgetCommitted: row.budgetCommitted,
      lastEventSeq: row.lastEventSeq,
      status: row.status,
    },
    events,
    mirrors: mirrors.map(({ envelope }) => {
      // A fresh envelope id and timestamps each time; the rest must be the same.
      const { id: envelopeId, occurred_at: occurredAt, $request_id: _requestIdHeader, ...rest } = envelope;
      const { created_at: createdAt, request_id: requestId, scope, ...data } = envelope.data;
      expect(typeof envelopeId).toBe('string');
      expect(typeof occurredAt).toBe('string');
      expect(typeof createdAt).toBe('string');
      expect(requestId).toBe(id);
      return { ...rest, data: { ...data, scope: scope === undefined ? undefined : 'present' } };
    }),
    scope: mirrors.map(({ envelope }) => envelope.data['scope']),
    requestIds: mirrors.map(({ envelope }) => envelope['$request_id']),
    project: row.projectId === null ? null : { project_id: row.projectId, environment_id: row.environmentId },
  };
}

const resolution = (requestId: string, over: Partial<Resolution> = {}): Resolution => ({
  request_id: requestId,
  token_state: 'settled',
  charged_tokens: 3,
  ...over,
});

/** The same resolutions, one twin through the single path (a transaction each), the other in one run. */
async function compare(cases: { tenant: string; opts?: Parameters<typeof stored>[1]; resolutions: Partial<Resolution>[] }[]) {
  const singles: string[] = [];
  const batched: string[] = [];
  const perCase: ResolvedReservation[][] = [];
  for (const c of cases) {
    const a = await stored(c.tenant, c.opts);
    const b = await stored(c.tenant, c.opts);
    singles.push(a);
    batched.push(b);
    perCase.push([]);
    for (const r of c.resolutions) {
      await testDb.db.$transaction((tx) => reflectResolvedReservation(tx, resolution(a, r)));
      perCase.at(-1)!.push({ data: resolution(b, r), requestId: `req-${b}` });
    }
  }
  // Interleaved as a Kafka batch would carry them (each request's own in their order).
  const run: ResolvedReservation[] = [];
  for (let k = 0; perCase.some((l) => l.length > k); k++) for (const l of perCase) if (l[k]) run.push(l[k]!);
  await testDb.db.$transaction((tx) => reflectResolvedReservations(tx, run));
  for (let i = 0; i < cases.length; i++) {
    const single = await leftOf(singles[i]!);
    const batch = await leftOf(batched[i]!);
    expect(batch.row).toEqual(single.row);
    expect(batch.events).toEqual(single.events);
    expect(batch.mirrors).toEqual(single.mirrors);
    expect(batch.events).toHaveLength(cases[i]!.resolutions.length);
    expect(batch.requestIds).toEqual(batch.events.map(() => `req-${batched[i]}`));
    for (const s of batch.scope) expect(s).toEqual(batch.project ?? undefined);
    for (const s of single.scope) expect(s).toEqual(single.project ?? undefined);
  }
  return { singles, batched };
}

describe('resolutions reflected in a run', () => {
  it('leave what the single handler leaves: settled, refunded, CAPTCHA and base lines, a workflow run', async () => {
    const tenant = randomUUID();
    await compare([
      { tenant, resolutions: [{}] },
      { tenant, resolutions: [{ token_state: 'refunded', charged_tokens: 0, base_tokens: 4 }] },
      { tenant, resolutions: [{ base_tokens: 2, captcha_tokens: 7, charged_tokens: 9 }] },
      { tenant: randomUUID(), opts: { project: true }, resolutions: [{ charged_tokens: 11 }] },
      { tenant, opts: { status: 'failed' }, resolutions: [{ token_state: 'refunded', charged_tokens: 0 }] },
    ]);
  });

  it('a request named twice in one run gets both, in order, numbered one after the other', async () => {
    const tenant = randomUUID();
    await compare([
      { tenant, resolutions: [{ captcha_tokens: 1 }, { token_state: 'refunded', charged_tokens: 0, captcha_tokens: 2 }] },
      { tenant, resolutions: [{}] },
    ]);
  });

  it('carries each message’s request id to its mirror, and ignores a request that was never stored', async () => {
    const id = await stored(randomUUID());
    await testDb.db.$transaction((tx) =>
      reflectResolvedReservations(tx, [
        { data: resolution(randomUUID()), requestId: 'req-missing' },
        { data: resolution(id), requestId: 'req-present' },
      ]),
    );
    const mirrors = await testDb.db.$queryRawUnsafe<{ envelope: Record<string, unknown> }[]>(
      `SELECT envelope FROM outbox_messages WHERE message_key = $1 AND (envelope->'data'->>'event_id')::int = 3`,
      id,
    );
    expect(mirrors).toHaveLength(1);
    expect(mirrors[0]!.envelope['$request_id']).toBe('req-present');
    expect(await testDb.db.outboxMessage.count({ where: { envelope: { path: ['$request_id'], equals: 'req-missing' } } })).toBe(0);
  });
});
