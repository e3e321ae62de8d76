import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { webhooksApi } from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import { ok, processStack } from './harness.js';

/**
 * Fan out only what someone listens to, end to end: the dispatcher as a real process, lifecycle
 * events produced onto its real Kafka topics as the orchestrator produces them, endpoints created
 * through its internal API (as the gateway creates them) or changed by "another replica" (plain
 * SQL on the same table). The events of a tenant nobody listens to are skipped (the consumer's
 * `skipped` count) and leave no message; a new endpoint takes the very next event; a change heard
 * after the listening connection was cut is read from the table again.
 */
const { stack, setUp, start, tearDown, receiver, endpoint, requestEvent, sql, until } = processStack('webhook-listeners-test');

beforeAll(async () => {
  await setUp();
  await start({ WEBHOOK_SECRET_KEY: Buffer.alloc(32, 12).toString('base64') });
  // Ready before its set of listeners is loaded (until then it skips nobody): wait for the listening connection and the first read.
  await until('listening', listening, (rows) => rows.length === 1);
  await sleep(1_000);
}, 120_000);

const listening = () =>
  sql<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'webhook-dispatcher:subscribers' AND datname = $1`, [
    stack.database.name,
  ]);

afterAll(tearDown, 60_000);

/** Events the dispatcher's consumer skipped (no endpoint takes them), from its /metrics. */
async function skipped(): Promise<number> {
  const text = await (await fetch(`${stack.dispatcher.metricsUrl}/metrics`)).text();
  return [...text.matchAll(/^wdr_kafka_messages_total\{[^}]*outcome="skipped"[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

const messagesOfTenant = (tenantId: string) =>
  sql<{ event_id: string; event_type: string }>('SELECT event_id::text, event_type FROM webhook_messages WHERE tenant_id = $1::uuid', [
    tenantId,
  ]);

/** Produce one event and wait until the consumer skipped it (nothing else is produced meanwhile). */
async function skippedEvent(...args: Parameters<typeof requestEvent>) {
  const before = await skipped();
  await requestEvent(...args);
  await until('the event skipped', skipped, (n) => n > before);
}

it("skips a tenant without endpoints (no fan-out, no message) while a subscribed tenant's events are delivered", async () => {
  const r = await receiver(() => ok());
  const subscribed = randomUUID();
  await endpoint(subscribed, r.url, ['request.completed']);
  const lonely = randomUUID();
  const before = await skipped();
  for (let i = 0; i < 20; i++) await requestEvent(lonely, 'request.completed');
  await requestEvent(subscribed, 'request.completed');
  await until(
    'the subscribed tenant delivered',
    () => r.deliveries.length,
    (n) => n === 1,
  );
  await until('the lonely tenant skipped', skipped, (n) => n - before >= 20);
  expect(await skipped()).toBe(before + 20);
  expect(await messagesOfTenant(lonely)).toHaveLength(0);
  expect(await messagesOfTenant(subscribed)).toHaveLength(1);
}, 60_000);

it('an endpoint created and an event produced right after it: that event is delivered, the one before it was not', async () => {
  const r = await receiver(() => ok());
  const tenant = randomUUID();
  await skippedEvent(tenant, 'request.completed');
  await endpoint(tenant, r.url, ['request.completed']);
  const next = await requestEvent(tenant, 'request.completed');
  await until(
    'the next event delivered',
    () => r.deliveries.length,
    (n) => n >= 1,
  );
  await sleep(500);
  expect(r.deliveries).toHaveLength(1);
  expect((JSON.parse(r.deliveries[0]!.body) as { data: { request_id: string } }).data.request_id).toBe(next.data.request_id);
  expect(await messagesOfTenant(tenant)).toHaveLength(1);
}, 60_000);

it("fans out only the scope and types an endpoint takes, and follows another replica's changes", async () => {
  const r = await receiver(() => ok());
  const tenant = randomUUID();
  const [project, production, staging] = [randomUUID(), randomUUID(), randomUUID()];
  const created = await callInternal(stack.client, webhooksApi.createEndpoint, {
    body: { tenant_id: tenant, url: r.url, event_types: ['request.completed'], project_id: project, environment_id: production },
  });
  const prod = { project_id: project, environment_id: production };
  await skippedEvent(tenant, 'request.completed'); // a request of no project: tenant-wide endpoints only
  await skippedEvent(tenant, 'request.completed', randomUUID(), 3, { project_id: project, environment_id: staging });
  await skippedEvent(tenant, 'request.failed', randomUUID(), 3, prod);
  const taken = await requestEvent(tenant, 'request.completed', randomUUID(), 3, prod);
  await until(
    'the scoped event delivered',
    () => r.deliveries.length,
    (n) => n >= 1,
  );
  expect((await messagesOfTenant(tenant)).map((m) => m.event_id)).toEqual([taken.id]);

  // Another replica widens the endpoint to the whole tenant: heard through its notification.
  await sql(`UPDATE webhook_endpoints SET project_id = NULL, environment_id = NULL WHERE id = $1::uuid`, [created.endpoint.id]);
  await sleep(500);
  const wide = await requestEvent(tenant, 'request.completed');
  await until(
    'the tenant-wide event delivered',
    () => r.deliveries.length,
    (n) => n >= 2,
  );
  expect((await messagesOfTenant(tenant)).map((m) => m.event_id).sort()).toEqual([taken.id, wide.id].sort());
}, 60_000);

it('reads the endpoints again after its listening connection is cut, so a change made meanwhile is not missed', async () => {
  const r = await receiver(() => ok());
  const tenant = randomUUID();
  const created = await endpoint(tenant, r.url, ['request.failed']);
  await skippedEvent(tenant, 'request.completed');
  const [before] = await listening();
  expect(before).toBeDefined();
  // Cut, and at once (before the reconnection a second later) another replica widens the endpoint's types: the notification is lost.
  await sql('SELECT pg_terminate_backend($1)', [before!.pid]);
  await sql(`UPDATE webhook_endpoints SET event_types = ARRAY['request.failed', 'request.completed'] WHERE id = $1::uuid`, [
    created.endpoint.id,
  ]);
  await until('listening again', listening, (rows) => rows.length === 1 && rows[0]!.pid !== before!.pid);
  await sleep(500);
  const next = await requestEvent(tenant, 'request.completed');
  await until(
    'the event delivered',
    () => r.deliveries.length,
    (n) => n >= 1,
  );
  expect((await messagesOfTenant(tenant)).map((m) => m.event_id)).toEqual([next.id]);
  // And the set is whole again (not left "everyone may receive"): a tenant without endpoints is skipped.
  await skippedEvent(randomUUID(), 'request.completed');
}, 60_000);
