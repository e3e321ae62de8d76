import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { webhooksApi, type WebhookEventType } from '@wdr/contracts';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { KafkaBus, makeEnvelope } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import {
  createTestDatabase,
  KAFKA_BROKERS,
  startServiceProcess,
  testCallerCredentials,
  uniqueTopicPrefix,
  withDatabase,
  type ServiceProcess,
  type TestDatabase,
} from '@wdr/testkit';

/**
 * What the dispatcher's process tests share: receivers as HTTP servers on 127.0.0.1, endpoints
 * through the internal API, events produced onto the real topics, and the schedule moved in
 * Postgres ("advancing the clock": a schedule kept in the database has no timer to wait for).
 */
export interface Stack {
  database: TestDatabase;
  bus: KafkaBus;
  dispatcher: ServiceProcess;
  client: ServiceClient;
}

export interface Delivery {
  id: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  answered: number;
  at: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Requests that reached it, answered or not yet. */
  arrived: () => number;
  /** Largest number of requests it held at once. */
  maxConcurrent: () => number;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

export const ok = (): Answer => ({ status: 204 });

/** `stack()` is read at each call, so a test may replace its dispatcher (restart with other settings). */
export function harness(stack: () => Stack) {
  const servers: http.Server[] = [];

  /** A receiver answering each request with `answer(delivery, nth attempt of its webhook-id)`. */
  async function receiver(answer: (d: Delivery, nth: number) => Answer): Promise<Receiver> {
    const deliveries: Delivery[] = [];
    const seen = new Map<string, number>();
    let open = 0;
    let max = 0;
    let arrived = 0;
    const server = http.createServer((req, res) => {
      arrived++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        open++;
        max = Math.max(max, open);
        const id = String(req.headers['webhook-id']);
        const nth = (seen.get(id) ?? 0) + 1;
        seen.set(id, nth);
        const d: Delivery = { id, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: 0, at: Date.now() };
        const a = answer(d, nth);
        setTimeout(() => {
          open--;
          d.answered = a.status;
          deliveries.push(d);
          res.writeHead(a.status, a.headers ?? {}).end(a.body ?? '');
        }, a.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/in?token=s3cret`,
      deliveries,
      arrived: () => arrived,
      maxConcurrent: () => max,
    };
  }

  function closeReceivers(): void {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
  }

  const endpoint = (tenantId: string, url: string, eventTypes: WebhookEventType[]) =>
    callInternal(stack().client, webhooksApi.createEndpoint, { body: { tenant_id: tenantId, url, event_types: eventTypes } });

  /** One request event on request.lifecycle, as the orchestrator publishes it. */
  async function requestEvent(
    tenantId: string,
    kind: string,
    requestId = randomUUID(),
    seq = 3,
    scope?: { project_id: string; environment_id: string },
  ) {
    const status = kind.split('.')[1] ?? 'running';
    const envelope = makeEnvelope('requestLifecycle', 'request.event_appended', tenantId, {
      request_id: requestId,
      event_id: seq,
      kind,
      status,
      payload:
        kind === 'request.completed'
          ? {
              result: { stage: 'http', status_code: 200, bytes: 10 },
              final_url: 'https://example.com/private/path?q=1',
              proxy_vendor: 'acme',
            }
          : {},
      created_at: new Date().toISOString(),
      ...(scope ? { scope } : {}),
    });
    const { bus } = stack();
    await bus.send(bus.topic('requestLifecycle'), [{ key: requestId, envelope }]);
    return envelope;
  }

  const sql = <T>(query: string, params: unknown[] = []) =>
    withDatabase(stack().database.url, async (c) => (await c.query(query, params)).rows as T[]);

  /** "Advance the clock": every pending schedule and lease moves `ms` earlier, and the senders are woken. */
  async function advance(ms: number) {
    await sql(
      `UPDATE webhook_messages SET next_attempt_at = next_attempt_at - $1 * interval '1 millisecond',
         claimed_until = claimed_until - $1 * interval '1 millisecond' WHERE status = 'pending'`,
      [ms],
    );
    await sql(`SELECT pg_notify('wdr_webhooks', 'webhooks')`);
  }

  async function until<T>(what: string, probe: () => Promise<T> | T, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (done(v)) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}\n${stack().dispatcher.logs()}`);
      await sleep(100);
    }
  }

  const messagesOf = (endpointId: string) =>
    sql<{ id: string; status: string; attempts: number; next_attempt_at: Date | null; delay_s: number | null }>(
      `SELECT id::text, status, attempts, next_attempt_at, EXTRACT(EPOCH FROM next_attempt_at - now())::float AS delay_s
       FROM webhook_messages WHERE endpoint_id = $1::uuid ORDER BY created_at, id`,
      [endpointId],
    );

  /**
   * Each pending message's delay after its last attempt, in seconds: the schedule's own step (its
   * jitter included), independent of when the test looks.
   */
  const delaysAfterLastAttempt = async (endpointId: string) =>
    (
      await sql<{ delay_s: number }>(
        `SELECT EXTRACT(EPOCH FROM m.next_attempt_at - (SELECT max(a.created_at) FROM webhook_attempts a WHERE a.message_id = m.id))::float AS delay_s
         FROM webhook_messages m WHERE m.endpoint_id = $1::uuid AND m.status = 'pending' ORDER BY m.created_at, m.id`,
        [endpointId],
      )
    ).map((r) => r.delay_s);

  /** The attempts recorded for an endpoint, oldest first. */
  const attemptsOf = (endpointId: string) =>
    sql<{ attempt: number; outcome: string; status_code: number | null; error: string | null; response_excerpt: string | null }>(
      `SELECT attempt, outcome, status_code, error, response_excerpt FROM webhook_attempts WHERE endpoint_id = $1::uuid ORDER BY created_at, attempt`,
      [endpointId],
    );

  return { receiver, closeReceivers, endpoint, requestEvent, sql, advance, until, messagesOf, attemptsOf, delaysAfterLastAttempt };
}

/**
 * A test file's stack, owned here: a fresh database, the dispatcher's topics under a fresh prefix,
 * a dispatcher process (started, and restarted with other settings, by `start`) and a client for its
 * internal API; with the harness's helpers bound to it.
 */
export function processStack(clientId: string) {
  const stack = {} as Stack & { prefix: string };
  const h = harness(() => stack);
  return {
    ...h,
    stack,
    setUp: async (): Promise<void> => {
      stack.database = await createTestDatabase('webhook-dispatcher');
      stack.prefix = uniqueTopicPrefix();
      stack.bus = new KafkaBus({ clientId, brokers: KAFKA_BROKERS, prefix: stack.prefix, log: createLogger('test', 'silent') });
      await stack.bus.ensureTopics(['requestLifecycle', 'billingAlerts']);
      await stack.bus.connect();
    },
    /** Stops the running dispatcher (SIGTERM) and starts one with the tests' usual settings and `env`. */
    start: async (env: Record<string, string>): Promise<void> => {
      await stack.dispatcher?.kill('SIGTERM');
      stack.dispatcher = await startServiceProcess('webhook-dispatcher', {
        DATABASE_URL: stack.database.url,
        KAFKA_TOPIC_PREFIX: stack.prefix,
        KAFKA_SESSION_TIMEOUT_MS: '10000',
        OUTBOX_POLL_MS: '100',
        LOG_LEVEL: 'warn',
        TARGET_ALLOWLIST: '127.0.0.1',
        WEBHOOK_POLL_MS: '200',
        WEBHOOK_TIMEOUT_MS: '3000',
        ...env,
      });
      stack.client = createServiceClient({
        name: 'webhook-dispatcher',
        baseUrl: stack.dispatcher.url,
        identity: testCallerCredentials('gateway'),
      });
    },
    tearDown: async (): Promise<void> => {
      await stack.dispatcher?.kill('SIGTERM');
      h.closeReceivers();
      await stack.bus?.disconnect();
      await stack.database?.drop();
    },
  };
}
