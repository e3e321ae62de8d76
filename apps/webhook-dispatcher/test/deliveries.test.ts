import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { webhooksApi, type WebhookEventType } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { callInternal } from '@wdr/kit/internal-call';
import { makeEnvelope } from '@wdr/kit/kafka';
import { ok, processStack, type Delivery, type Receiver } from './harness.js';

/**
 * The delivery engine end to end: the dispatcher as a real process, events produced onto its real
 * Kafka topics, receivers as HTTP servers on 127.0.0.1. Retries are driven from the database: the
 * test moves the schedule (next_attempt_at, and leases) back instead of waiting, which is what
 * advancing the clock means for a schedule kept in Postgres.
 */
const ENDPOINT_CONCURRENCY = 3;
const {
  stack,
  setUp,
  start,
  tearDown,
  receiver,
  endpoint,
  requestEvent,
  sql,
  advance,
  until,
  messagesOf,
  attemptsOf,
  delaysAfterLastAttempt,
} = processStack('webhook-deliveries-test');

beforeAll(async () => {
  await setUp();
  await start({
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 11).toString('base64'),
    WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
  });
}, 120_000);

afterAll(tearDown, 60_000);

describe('endpoints', () => {
  it('refuses URLs at private, loopback-by-name, link-local and metadata addresses with VALIDATION_FAILED', async () => {
    const tenant = randomUUID();
    for (const url of [
      'http://10.0.0.5/hook',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://localhost:8080/',
      'http://[::1]/',
      'ftp://example.com/',
      'http://user:pw@example.com/',
    ]) {
      const err = await endpoint(tenant, url, ['request.completed']).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PublicError);
      expect(err).toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ field: 'url' })] });
    }
    const page = await callInternal(stack.client, webhooksApi.listEndpoints, { query: { tenant_id: tenant, limit: 50 } });
    expect(page).toEqual({ items: [], next_cursor: null });
  });

  it("lists a tenant's endpoints as cursor pages, redacted to the origin; another tenant sees none of them", async () => {
    const tenant = randomUUID();
    const r = await receiver(ok);
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await endpoint(tenant, r.url, ['request.completed']));
    expect(created[0]!.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const first = await callInternal(stack.client, webhooksApi.listEndpoints, { query: { tenant_id: tenant, limit: 2 } });
    expect(first.items.map((e) => e.id)).toEqual(created.slice(0, 2).map((c) => c.endpoint.id));
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await callInternal(stack.client, webhooksApi.listEndpoints, {
      query: { tenant_id: tenant, limit: 2, cursor: first.next_cursor! },
    });
    expect(second).toEqual({ items: [expect.objectContaining({ id: created[2]!.endpoint.id })], next_cursor: null });
    const text = JSON.stringify(first);
    expect(text).not.toContain('token=');
    expect(text).not.toContain('/hooks');
    expect(text).not.toContain('whsec_');
    expect(first.items[0]).toMatchObject({ url_origin: new URL(r.url).origin, status: 'enabled', event_types: ['request.completed'] });
    const other = randomUUID();
    expect((await callInternal(stack.client, webhooksApi.listEndpoints, { query: { tenant_id: other, limit: 50 } })).items).toEqual([]);
    await expect(
      callInternal(stack.client, webhooksApi.readEndpoint, {
        params: { endpointId: created[0]!.endpoint.id },
        query: { tenant_id: other },
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const bad = await callInternal(stack.client, webhooksApi.listEndpoints, {
      query: { tenant_id: tenant, limit: 2, cursor: 'nonsense' },
    }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('a create under an endpoint_id already used answers that endpoint with its secret; another tenant under it is refused', async () => {
    const tenant = randomUUID();
    const r = await receiver(ok);
    const endpointId = randomUUID();
    const body = { tenant_id: tenant, url: r.url, event_types: ['request.completed' as const], endpoint_id: endpointId };
    const first = await callInternal(stack.client, webhooksApi.createEndpoint, { body });
    expect(first.endpoint.id).toBe(endpointId);
    const retried = await callInternal(stack.client, webhooksApi.createEndpoint, { body });
    expect(retried).toEqual(first);
    expect((await callInternal(stack.client, webhooksApi.listEndpoints, { query: { tenant_id: tenant, limit: 50 } })).items).toHaveLength(
      1,
    );
    const other = await callInternal(stack.client, webhooksApi.createEndpoint, { body: { ...body, tenant_id: randomUUID() } }).catch(
      (e: unknown) => e,
    );
    expect(other).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
  });
});

describe('deliveries', () => {
  it('delivers subscribed events once, signed (verified by standardwebhooks), with the public form of the event', async () => {
    const tenant = randomUUID();
    const r = await receiver(ok);
    const { endpoint: ep, secret } = await endpoint(tenant, r.url, ['request.completed']);
    const requestId = randomUUID();
    await requestEvent(tenant, 'request.running', requestId, 2); // not subscribed
    const completed = await requestEvent(tenant, 'request.completed', requestId, 3);
    await requestEvent(randomUUID(), 'request.completed'); // another tenant's
    await until(
      'the delivery',
      () => r.deliveries.length,
      (n) => n >= 1,
    );
    await sleep(500);
    expect(r.deliveries).toHaveLength(1);
    const d = r.deliveries[0]!;
    expect(d.id).toMatch(/^msg_[0-9a-f]{32}$/);
    const payload = new Webhook(secret).verify(d.body, {
      'webhook-id': String(d.headers['webhook-id']),
      'webhook-timestamp': String(d.headers['webhook-timestamp']),
      'webhook-signature': String(d.headers['webhook-signature']),
    }) as { type: string; timestamp: string; data: { request_id: string; event: Record<string, unknown> } };
    expect(payload).toEqual({
      type: 'request.completed',
      timestamp: completed.occurred_at,
      data: {
        request_id: requestId,
        event: {
          id: 3,
          type: 'request.completed',
          status: 'completed',
          created_at: expect.any(String),
          data: { result: { stage: 'http', status_code: 200, bytes: 10 } },
        },
      },
    });
    expect(d.body).not.toContain('acme');
    expect(d.body).not.toContain('/private/path');
    expect(() =>
      new Webhook('whsec_' + Buffer.alloc(32, 1).toString('base64')).verify(d.body, d.headers as Record<string, string>),
    ).toThrow();

    const attempts = await until(
      'the attempt record',
      () =>
        callInternal(stack.client, webhooksApi.listAttempts, { params: { endpointId: ep.id }, query: { tenant_id: tenant, limit: 50 } }),
      (p) => p.items.length === 1,
    );
    expect(attempts.items[0]).toMatchObject({
      message_id: d.id,
      event_type: 'request.completed',
      attempt: 1,
      outcome: 'delivered',
      status_code: 204,
      error: null,
    });
    expect(attempts.items[0]!.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('a signing-secret rotation with an overlap (an hour) signs with both secrets until it ends, then with the new one alone', async () => {
    const tenant = randomUUID();
    const r = await receiver(ok);
    const { endpoint: ep, secret: oldSecret } = await endpoint(tenant, r.url, ['request.completed']);
    const rotated = await callInternal(stack.client, webhooksApi.rotateSecret, {
      params: { endpointId: ep.id },
      body: { tenant_id: tenant, previous_valid_seconds: 3_600 },
    });
    const newSecret = rotated.secret;
    expect(newSecret).not.toBe(oldSecret);
    const headersOf = (d: Delivery) => ({
      'webhook-id': String(d.headers['webhook-id']),
      'webhook-timestamp': String(d.headers['webhook-timestamp']),
      'webhook-signature': String(d.headers['webhook-signature']),
    });
    const signaturesOf = (d: Delivery) => String(d.headers['webhook-signature']).split(' ');
    /** Which of the two secrets a delivery's header carries a valid signature for (each checked alone). */
    const signedBy = (d: Delivery) =>
      signaturesOf(d).map((sig) => {
        const one = { ...headersOf(d), 'webhook-signature': sig };
        const verifies = (secret: string) => {
          try {
            new Webhook(secret).verify(d.body, one);
            return true;
          } catch {
            return false;
          }
        };
        return verifies(newSecret) ? 'new' : verifies(oldSecret) ? 'old' : 'neither';
      });

    // During the overlap: two signatures, the new secret's first, each valid for its own secret only.
    await requestEvent(tenant, 'request.completed');
    await until(
      'the delivery during the overlap',
      () => r.deliveries.length,
      (n) => n === 1,
    );
    const during = r.deliveries[0]!;
    expect(signedBy(during)).toEqual(['new', 'old']);
    expect(new Webhook(oldSecret).verify(during.body, headersOf(during))).toMatchObject({ type: 'request.completed' });
    expect(new Webhook(newSecret).verify(during.body, headersOf(during))).toMatchObject({ type: 'request.completed' });

    // After it (the hour moved by, as the schedule is: the expiry is a column): the new secret's
    // signature alone; a receiver still on the old secret rejects the delivery.
    await sql(`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1::uuid`, [ep.id]);
    await requestEvent(tenant, 'request.completed');
    await until(
      'the delivery after the overlap',
      () => r.deliveries.length,
      (n) => n === 2,
    );
    const after = r.deliveries[1]!;
    expect(signedBy(after)).toEqual(['new']);
    expect(new Webhook(newSecret).verify(after.body, headersOf(after))).toMatchObject({ type: 'request.completed' });
    expect(() => new Webhook(oldSecret).verify(after.body, headersOf(after))).toThrow();
  }, 30_000);

  it('stores a truncated, redacted excerpt of the answer: URLs to their origin, whsec_ secrets and bearer/basic credentials masked', async () => {
    const tenant = randomUUID();
    const answer =
      'rejected\u0000: signature for whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw= did not match;\n' +
      'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln was refused, so was BASIC dXNlcjpwYXNzd29yZA==; ' +
      'retry at https://hooks.example.com/retry/42?token=abc123 later. ' +
      'x'.repeat(400);
    const r = await receiver(() => ({ status: 401, body: answer }));
    const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
    await requestEvent(tenant, 'request.completed');
    const [attempt] = await until(
      'the failed attempt',
      () => attemptsOf(ep.id),
      (rows) => rows.length === 1,
    );
    const expected = (
      'rejected : signature for whsec_[redacted] did not match;\n' +
      'Authorization: Bearer [redacted] was refused, so was BASIC [redacted]; ' +
      'retry at https://hooks.example.com later. ' +
      'x'.repeat(400)
    ).slice(0, 256);
    expect(attempt).toMatchObject({ outcome: 'failed', status_code: 401, response_excerpt: expected });
    // The API answers the same stored excerpt.
    const page = await callInternal(stack.client, webhooksApi.listAttempts, {
      params: { endpointId: ep.id },
      query: { tenant_id: tenant, limit: 50 },
    });
    expect(page.items[0]!.response_excerpt).toBe(expected);
    for (const secret of ['MfKQ9r8G', 'eyJhbGci', 'c2ln', 'dXNlcjpw', 'abc123', '/retry']) expect(expected).not.toContain(secret);
  }, 30_000);

  it('a receiver that fails, then recovers, gets every event exactly once by webhook-id after retries driven from the database', async () => {
    const tenant = randomUUID();
    // Each message is answered 500 twice, then 200.
    const r = await receiver((_d, nth) =>
      nth <= 2 ? { status: 500, body: 'down for maintenance, see https://status.example.com/incidents/42?key=abc' } : { status: 200 },
    );
    const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed', 'request.failed']);
    for (let i = 0; i < 5; i++) await requestEvent(tenant, i % 2 ? 'request.failed' : 'request.completed');
    // First attempts at once; the second ones about 5 s later (the schedule, not a timer: moved here).
    await until(
      'the first attempts',
      () => messagesOf(ep.id),
      (ms) => ms.length === 5 && ms.every((m) => m.attempts === 1),
    );
    for (const d of await delaysAfterLastAttempt(ep.id)) expect([d, d >= 4.5 && d <= 5.5]).toEqual([d, true]); // 5 s +-10 %
    await advance(6_000);
    await until(
      'the second attempts',
      () => messagesOf(ep.id),
      (ms) => ms.every((m) => m.attempts === 2),
    );
    for (const d of await delaysAfterLastAttempt(ep.id)) expect([d, d >= 270 && d <= 330]).toEqual([d, true]); // 5 min +-10 %
    await sleep(1_000);
    expect(r.deliveries).toHaveLength(10); // nothing was sent early
    await advance(6 * 60_000);
    await until(
      'every message delivered',
      () => messagesOf(ep.id),
      (ms) => ms.every((m) => m.status === 'delivered'),
    );
    const byId = new Map<string, number[]>();
    for (const d of r.deliveries) byId.set(d.id, [...(byId.get(d.id) ?? []), d.answered]);
    expect(byId.size).toBe(5);
    for (const answers of byId.values()) expect(answers).toEqual([500, 500, 200]);

    const page = await callInternal(stack.client, webhooksApi.listAttempts, {
      params: { endpointId: ep.id },
      query: { tenant_id: tenant, limit: 10 },
    });
    expect(page.items).toHaveLength(10);
    expect(page.next_cursor).toEqual(expect.any(String));
    const rest = await callInternal(stack.client, webhooksApi.listAttempts, {
      params: { endpointId: ep.id },
      query: { tenant_id: tenant, limit: 10, cursor: page.next_cursor! },
    });
    expect(rest.items).toHaveLength(5);
    expect(rest.next_cursor).toBeNull();
    const failed = [...page.items, ...rest.items].filter((a) => a.outcome === 'failed');
    expect(failed).toHaveLength(10);
    expect(failed[0]).toMatchObject({ status_code: 500, response_excerpt: 'down for maintenance, see https://status.example.com' });
  }, 60_000);

  it('honours Retry-After: the next attempt waits for it, not for the schedule', async () => {
    const tenant = randomUUID();
    const r = await receiver((_d, nth) => (nth === 1 ? { status: 503, headers: { 'retry-after': '3600' } } : { status: 200 }));
    const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
    await requestEvent(tenant, 'request.completed');
    const [m] = await until(
      'the first attempt',
      () => messagesOf(ep.id),
      (ms) => ms[0]?.attempts === 1,
    );
    // Retry-After's hour, not the schedule's 5 s; measured against the database clock a moment
    // later, give or take a step of the machine's clock (a run saw 3600.005).
    expect(m!.delay_s).toBeGreaterThan(3_590);
    expect(m!.delay_s).toBeLessThanOrEqual(3_601);
    await advance(60_000);
    await sleep(800);
    expect(r.deliveries).toHaveLength(1);
    await advance(3_600_000);
    await until(
      'the delivery',
      () => messagesOf(ep.id),
      (ms) => ms[0]?.status === 'delivered',
    );
    expect(r.deliveries.map((d) => d.answered)).toEqual([503, 200]);
  }, 30_000);

  it("410 disables the endpoint (reason gone) and tells the tenant's endpoints that subscribe to webhook.endpoint_disabled", async () => {
    const tenant = randomUUID();
    const gone = await receiver(() => ({ status: 410 }));
    const watcher = await receiver(ok);
    const { endpoint: ep } = await endpoint(tenant, gone.url, ['request.completed']);
    const { endpoint: watch, secret } = await endpoint(tenant, watcher.url, ['webhook.endpoint_disabled']);
    await requestEvent(tenant, 'request.completed');
    const view = await until(
      'the endpoint disabled',
      () => callInternal(stack.client, webhooksApi.readEndpoint, { params: { endpointId: ep.id }, query: { tenant_id: tenant } }),
      (e) => e.status === 'disabled',
    );
    expect(view).toMatchObject({ disabled_reason: 'gone', disabled_at: expect.any(String) });
    await until(
      'the disabled notice',
      () => watcher.deliveries.length,
      (n) => n === 1,
    );
    const notice = new Webhook(secret).verify(watcher.deliveries[0]!.body, watcher.deliveries[0]!.headers as Record<string, string>);
    expect(notice).toMatchObject({
      type: 'webhook.endpoint_disabled',
      data: { endpoint_id: ep.id, reason: 'gone', url_origin: new URL(gone.url).origin },
    });
    // A disabled endpoint takes no new messages and sends nothing.
    await requestEvent(tenant, 'request.completed');
    await advance(3_600_000);
    await sleep(1_000);
    expect(gone.deliveries).toHaveLength(1);
    expect(watch.status).toBe('enabled');
  }, 30_000);

  it("a workflow run's events reach its project's endpoints; a disabled project endpoint is announced to its scope and tenant-wide endpoints, never to another project", async () => {
    const tenant = randomUUID();
    const p1 = randomUUID();
    const p2 = randomUUID();
    const env = randomUUID();
    const gone = await receiver(() => ({ status: 410 }));
    const [same, wide, other] = [await receiver(ok), await receiver(ok), await receiver(ok)];
    const scoped = (r: Receiver, project: string, types: WebhookEventType[]) =>
      callInternal(stack.client, webhooksApi.createEndpoint, {
        body: { tenant_id: tenant, project_id: project, environment_id: env, url: r.url, event_types: types },
      });
    const { endpoint: ep } = await scoped(gone, p1, ['request.completed']);
    await scoped(same, p1, ['webhook.endpoint_disabled', 'request.completed']);
    await endpoint(tenant, wide.url, ['webhook.endpoint_disabled']);
    await scoped(other, p2, ['webhook.endpoint_disabled', 'request.completed']);
    // An event of a request outside any project reaches no project endpoint; a run of p1 reaches p1's.
    await requestEvent(tenant, 'request.completed');
    const run = await requestEvent(tenant, 'request.completed', randomUUID(), 3, { project_id: p1, environment_id: env });
    await until(
      'the endpoint disabled',
      () => callInternal(stack.client, webhooksApi.readEndpoint, { params: { endpointId: ep.id }, query: { tenant_id: tenant } }),
      (e) => e.status === 'disabled',
    );
    await until(
      'the notices',
      () => same.deliveries.length + wide.deliveries.length,
      (n) => n === 3,
    );
    await sleep(500);
    expect(gone.deliveries).toHaveLength(1);
    expect(JSON.parse(gone.deliveries[0]!.body).data.request_id).toBe((run.data as { request_id: string }).request_id);
    expect(same.deliveries.map((d) => JSON.parse(d.body).type).sort()).toEqual(['request.completed', 'webhook.endpoint_disabled']);
    expect(wide.deliveries.map((d) => JSON.parse(d.body))).toEqual([
      expect.objectContaining({ type: 'webhook.endpoint_disabled', data: expect.objectContaining({ endpoint_id: ep.id }) }),
    ]);
    expect(other.deliveries).toEqual([]);
  }, 30_000);

  it('records why an attempt failed: timeout, redirect (not followed), an oversized answer, a refused connection', async () => {
    const tenant = randomUUID();
    const slow = await receiver(() => ({ status: 200, delayMs: 4_500 })); // WEBHOOK_TIMEOUT_MS is 3000
    const moved = await receiver(() => ({ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } }));
    const huge = await receiver(() => ({ status: 200, body: 'x'.repeat(200 * 1024) }));
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hooks`;
    await new Promise((resolve) => closed.close(resolve));
    const eps: string[] = [];
    for (const url of [slow.url, moved.url, huge.url, closedUrl])
      eps.push((await endpoint(tenant, url, ['request.completed'])).endpoint.id);
    await requestEvent(tenant, 'request.completed');
    const attempts = await until(
      'the four failed attempts',
      () =>
        sql<{ endpoint_id: string; outcome: string; status_code: number | null; error: string | null }>(
          `SELECT endpoint_id::text, outcome, status_code, error FROM webhook_attempts WHERE endpoint_id = ANY($1::uuid[])`,
          [eps],
        ),
      (rows) => rows.length >= 4,
      20_000,
    );
    const byEndpoint = new Map(attempts.map((a) => [a.endpoint_id, a]));
    expect(eps.map((id) => byEndpoint.get(id))).toEqual([
      { endpoint_id: eps[0], outcome: 'failed', status_code: null, error: 'timeout' },
      { endpoint_id: eps[1], outcome: 'failed', status_code: 302, error: 'redirect' },
      { endpoint_id: eps[2], outcome: 'failed', status_code: null, error: 'response_too_large' },
      { endpoint_id: eps[3], outcome: 'failed', status_code: null, error: 'connection_refused' },
    ]);
    // Each is scheduled again (the first retry after about 5 s), none delivered.
    const pending = await sql<{ status: string; attempts: number }>(
      `SELECT status, attempts FROM webhook_messages WHERE endpoint_id = ANY($1::uuid[])`,
      [eps],
    );
    expect(pending.map((m) => [m.status, m.attempts])).toEqual(Array(4).fill(['pending', 1]));
  }, 30_000);

  it('an exhausted schedule (8 attempts, none answered 2xx) fails the message, disables the endpoint as sustained_failure and tells the other subscribed endpoints', async () => {
    const tenant = randomUUID();
    const r = await receiver(() => ({ status: 500 }));
    const watcher = await receiver(ok);
    const { endpoint: ep } = await endpoint(tenant, r.url, ['billing.balance_low']);
    const { secret: watcherSecret } = await endpoint(tenant, watcher.url, ['webhook.endpoint_disabled']);
    const envelope = makeEnvelope('billingAlerts', 'billing.balance_low', tenant, { balance_tokens: 3, threshold_tokens: 10 });
    await stack.bus.send(stack.bus.topic('billingAlerts'), [{ key: tenant, envelope }]);
    for (let attempt = 1; attempt <= 8; attempt++) {
      await until(
        `attempt ${attempt}`,
        () => messagesOf(ep.id),
        (ms) => ms[0]?.attempts === attempt,
      );
      // The next attempt made due at once. Not after the last: there is none, and moving every pending
      // lease back would expire the notice's while it is being sent (another claim sends it again).
      if (attempt < 8) await advance(11 * 3_600_000);
    }
    const [m] = await until(
      'the message failed',
      () => messagesOf(ep.id),
      (ms) => ms[0]?.status === 'failed',
    );
    expect(m).toMatchObject({ attempts: 8, next_attempt_at: null });
    const view = await callInternal(stack.client, webhooksApi.readEndpoint, {
      params: { endpointId: ep.id },
      query: { tenant_id: tenant },
    });
    expect(view).toMatchObject({ status: 'disabled', disabled_reason: 'sustained_failure' });
    expect(new Set(r.deliveries.map((d) => d.id)).size).toBe(1);
    expect(JSON.parse(r.deliveries[0]!.body)).toMatchObject({
      type: 'billing.balance_low',
      data: { balance_tokens: 3, threshold_tokens: 10 },
    });
    // The notice: one, signed for the watcher, naming the endpoint and the reason (the disabled endpoint gets none).
    await until(
      'the disabled notice',
      () => watcher.deliveries.length,
      (n) => n >= 1,
    );
    await sleep(500);
    expect(watcher.deliveries).toHaveLength(1);
    const notice = new Webhook(watcherSecret).verify(watcher.deliveries[0]!.body, watcher.deliveries[0]!.headers as Record<string, string>);
    expect(notice).toMatchObject({
      type: 'webhook.endpoint_disabled',
      data: { endpoint_id: ep.id, reason: 'sustained_failure', url_origin: new URL(r.url).origin },
    });
    expect(r.deliveries.every((d) => JSON.parse(d.body).type === 'billing.balance_low')).toBe(true);

    // Re-enabled and redelivered by hand: the same webhook-id, the same body, now answered.
    await callInternal(stack.client, webhooksApi.updateEndpoint, {
      params: { endpointId: ep.id },
      body: { tenant_id: tenant, enabled: true },
    });
    const again = await callInternal(stack.client, webhooksApi.redeliver, {
      params: { endpointId: ep.id, messageId: r.deliveries[0]!.id },
      body: { tenant_id: tenant },
    });
    expect(again).toMatchObject({ id: r.deliveries[0]!.id, status: 'pending' });
    await until(
      'the redelivery',
      () => r.deliveries.length,
      (n) => n === 9,
    );
    expect(r.deliveries[8]!.body).toBe(r.deliveries[0]!.body);
  }, 60_000);

  it('a slow receiver holds only its own slots: at most WEBHOOK_ENDPOINT_CONCURRENCY at once, others flow meanwhile', async () => {
    const tenant = randomUUID();
    const slow = await receiver(() => ({ status: 200, delayMs: 1_000 }));
    const fast = await receiver(ok);
    await endpoint(tenant, slow.url, ['request.completed']);
    await endpoint(tenant, fast.url, ['request.completed']);
    for (let i = 0; i < 9; i++) await requestEvent(tenant, 'request.completed');
    await until(
      'the fast receiver has all',
      () => fast.deliveries.length,
      (n) => n === 9,
      10_000,
    );
    expect(slow.deliveries.length).toBeLessThan(9);
    await until(
      'the slow receiver has all',
      () => slow.deliveries.length,
      (n) => n === 9,
      20_000,
    );
    expect(slow.maxConcurrent()).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
    expect(slow.maxConcurrent()).toBeGreaterThan(1);
  }, 40_000);

  it('SIGKILL mid-burst, then restart: nothing lost, nothing re-sent after its 2xx was recorded', async () => {
    const tenant = randomUUID();
    const r = await receiver(() => ({ status: 200, delayMs: 20 }));
    const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
    const events = 150;
    await Promise.all(Array.from({ length: events }, () => requestEvent(tenant, 'request.completed')));
    await until(
      'deliveries under way',
      () => r.deliveries.length,
      (n) => n >= 20,
      30_000,
    );
    await stack.dispatcher.kill('SIGKILL');
    const atKill = r.deliveries.length;
    const recorded = new Set(
      (
        await sql<{ id: string }>(
          `SELECT 'msg_' || replace(id::text, '-', '') AS id FROM webhook_messages WHERE endpoint_id = $1::uuid AND status = 'delivered'`,
          [ep.id],
        )
      ).map((m) => m.id),
    );
    expect(recorded.size).toBeGreaterThan(0);
    expect(recorded.size).toBeLessThan(events); // killed mid-burst, not after it
    await stack.dispatcher.restart();
    // Messages held when the process died are due again when their lease ends: moved here, not waited for.
    await advance(60_000);
    await until(
      'every event delivered',
      async () =>
        (
          await sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_messages WHERE endpoint_id = $1::uuid AND status = 'delivered'`,
            [ep.id],
          )
        )[0]!.n,
      (n) => n === events,
      60_000,
    );
    const answered = new Set(r.deliveries.filter((d) => d.answered === 200).map((d) => d.id));
    expect(answered.size).toBe(events);
    const afterKill = r.deliveries.slice(atKill);
    expect(afterKill.filter((d) => recorded.has(d.id))).toEqual([]);
  }, 120_000);
});
