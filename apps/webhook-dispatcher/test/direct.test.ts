import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { messageIdFor } from '../src/domain/direct.js';
import { webhookIdOf } from '../src/domain/signing.js';
import { processStack, type Answer } from './harness.js';

/**
 * Direct delivery (domain/direct.ts): a new message is posted from the consumer's hand and stored
 * once when answered; what waits or fails goes to the durable queue. Each test starts a dispatcher
 * with the wait it needs (WEBHOOK_DIRECT_WAIT_MS), in place of the previous test's, on one database
 * and one set of topics.
 */
const { stack, setUp, start, tearDown, receiver, endpoint, requestEvent, sql, until, messagesOf, attemptsOf } =
  processStack('webhook-direct-test');

const startWith = (env: Record<string, string>) =>
  start({
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 31).toString('base64'),
    WEBHOOK_TIMEOUT_MS: '5000',
    ...env,
  });

beforeAll(setUp, 60_000);

afterAll(tearDown, 60_000);

/** A dispatcher with this wait, an endpoint answering so, and one event whose POST has reached the receiver. */
async function onePosted(waitMs: number, answer: (nth: number) => Answer) {
  await startWith({ WEBHOOK_DIRECT_WAIT_MS: String(waitMs) });
  const tenant = randomUUID();
  const r = await receiver((_d, nth) => answer(nth));
  const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
  const event = await requestEvent(tenant, 'request.completed');
  await until(
    'the POST reaching the receiver',
    () => r.arrived(),
    (n) => n === 1,
  );
  return { r, ep, event };
}

const rowsOf = (endpointId: string) =>
  sql<{ id: string; status: string; attempts: number; claim_token: string | null; delivered_at: Date | null }>(
    'SELECT id::text, status, attempts, claim_token::text, delivered_at FROM webhook_messages WHERE endpoint_id = $1::uuid ORDER BY created_at, id',
    [endpointId],
  );

it('posts a new message before storing it, then stores it once, delivered, with its attempt; its webhook-id follows from the event and the endpoint', async () => {
  const { r, ep, event } = await onePosted(3_000, () => ({ status: 200, delayMs: 600 }));
  // Posted, not answered yet: nothing is stored (the queue's path inserts the message before its POST).
  expect(await rowsOf(ep.id)).toEqual([]);
  await until(
    'the message stored',
    () => rowsOf(ep.id),
    (rows) => rows.length === 1 && rows[0]!.status === 'delivered',
  );
  const [row] = await rowsOf(ep.id);
  expect(row).toMatchObject({ id: messageIdFor(event.id, ep.id), attempts: 1, claim_token: null });
  expect(r.deliveries.map((d) => d.id)).toEqual([webhookIdOf(messageIdFor(event.id, ep.id))]);
  expect(await attemptsOf(ep.id)).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered', status_code: 200 })]);
  expect(
    (await sql<{ last: Date | null }>('SELECT last_success_at AS last FROM webhook_endpoints WHERE id = $1::uuid', [ep.id]))[0]!.last,
  ).not.toBeNull();
}, 60_000);

it('a POST not answered within the wait is stored held by its sender, so the event can move on; its answer is then recorded as a claimed message', async () => {
  const { r, ep, event } = await onePosted(1_000, () => ({ status: 200, delayMs: 3_000 }));
  expect(await rowsOf(ep.id)).toEqual([]);
  // Past the wait, the answer still out: stored pending under this sender's lease.
  const held = await until(
    'the message held',
    () => rowsOf(ep.id),
    (rows) => rows.length === 1,
    2_500,
  );
  expect(r.deliveries).toHaveLength(0);
  expect(held[0]).toMatchObject({ id: messageIdFor(event.id, ep.id), status: 'pending', attempts: 0, claim_token: expect.any(String) });
  await until(
    'the answer recorded',
    () => rowsOf(ep.id),
    (rows) => rows[0]!.status === 'delivered',
  );
  expect((await rowsOf(ep.id))[0]).toMatchObject({ attempts: 1, claim_token: null });
  expect(await attemptsOf(ep.id)).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered' })]);
  expect(r.arrived()).toBe(1);
}, 60_000);

it('a failed direct attempt is recorded and retried from the queue under the same webhook-id', async () => {
  await startWith({ WEBHOOK_DIRECT_WAIT_MS: '3000' });
  const tenant = randomUUID();
  const r = await receiver((_d, nth) => (nth === 1 ? { status: 503 } : { status: 200 }));
  const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
  const event = await requestEvent(tenant, 'request.completed');
  await until(
    'the failure recorded, a retry scheduled',
    () => messagesOf(ep.id),
    (rows) => rows.length === 1 && rows[0]!.attempts === 1,
  );
  const [pending] = await messagesOf(ep.id);
  expect(pending).toMatchObject({ status: 'pending' });
  expect(pending!.delay_s).toBeGreaterThan(0);
  // Due now instead of after the schedule's first step.
  await sql(`UPDATE webhook_messages SET next_attempt_at = now() WHERE endpoint_id = $1::uuid`, [ep.id]);
  await sql(`SELECT pg_notify('wdr_webhooks', 'webhooks')`);
  await until(
    'the retry delivered',
    () => messagesOf(ep.id),
    (rows) => rows[0]!.status === 'delivered',
  );
  const id = webhookIdOf(messageIdFor(event.id, ep.id));
  expect(r.deliveries.map((d) => [d.id, d.answered])).toEqual([
    [id, 503],
    [id, 200],
  ]);
  expect((await attemptsOf(ep.id)).map((a) => [a.attempt, a.outcome, a.status_code])).toEqual([
    [1, 'failed', 503],
    [2, 'delivered', 200],
  ]);
}, 60_000);

it('messages that wait longer than the wait for a slot of their endpoint go to the queue, due, and are delivered from there, within the bound', async () => {
  await startWith({ WEBHOOK_DIRECT_WAIT_MS: '300', WEBHOOK_ENDPOINT_CONCURRENCY: '2' });
  const tenant = randomUUID();
  const r = await receiver(() => ({ status: 200, delayMs: 250 }));
  const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
  const events = [];
  for (let i = 0; i < 8; i++) events.push(await requestEvent(tenant, 'request.completed'));
  await until(
    'every message delivered',
    () => rowsOf(ep.id),
    (rows) => rows.length === 8 && rows.every((m) => m.status === 'delivered'),
  );
  // Eight POSTs of 250 ms, two at a time: a message handed over with six before it waits ~750 ms for a slot.
  const expected = events.map((e) => webhookIdOf(messageIdFor(e.id, ep.id))).sort();
  expect(r.deliveries.map((d) => d.id).sort()).toEqual(expected);
  expect(r.maxConcurrent()).toBeLessThanOrEqual(2);
  // Some went straight through (stored after their POST started), the others through the queue
  // (stored before, claimed later: the first attempt's time is the claim's).
  const paths = await sql<{ queued: boolean }>(
    `SELECT first_attempt_at >= created_at AS queued FROM webhook_messages WHERE endpoint_id = $1::uuid`,
    [ep.id],
  );
  expect(paths.filter((p) => p.queued).length).toBeGreaterThan(0);
  expect(paths.filter((p) => !p.queued).length).toBeGreaterThan(0);
}, 60_000);

it('SIGKILL while direct POSTs are unanswered: the events are read again and posted under the same webhook-ids, each message stored once', async () => {
  await startWith({ WEBHOOK_DIRECT_WAIT_MS: '5000' });
  const tenant = randomUUID();
  // The first arrival of each webhook-id is held past the kill; a later one is answered at once.
  const r = await receiver((_d, nth) => (nth === 1 ? { status: 200, delayMs: 4_000 } : { status: 200 }));
  const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
  const events = [];
  for (let i = 0; i < 3; i++) events.push(await requestEvent(tenant, 'request.completed'));
  await until(
    'the three POSTs under way',
    () => r.arrived(),
    (n) => n === 3,
  );
  expect(await rowsOf(ep.id)).toEqual([]);
  await stack.dispatcher.kill('SIGKILL');
  await stack.dispatcher.restart();
  await until(
    'every message stored, delivered',
    () => rowsOf(ep.id),
    (rows) => rows.length === 3 && rows.every((m) => m.status === 'delivered'),
    60_000,
  );
  const expected = events.map((e) => webhookIdOf(messageIdFor(e.id, ep.id))).sort();
  // Each posted twice (before and after the kill), under its one id; answered 200 after the restart.
  await sleep(4_500); // the first arrivals' answers (to a closed connection) land in the receiver's list too
  expect([...new Set(r.deliveries.map((d) => d.id))].sort()).toEqual(expected);
  expect(r.arrived()).toBe(6);
  expect((await rowsOf(ep.id)).map((m) => m.attempts)).toEqual([1, 1, 1]);
}, 120_000);
