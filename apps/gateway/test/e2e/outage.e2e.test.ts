// Own fleet (not the shared one of ./shared/): it reaches Postgres through a proxy it cuts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { applyKafkajsIdleLoopFix } from '@wdr/kit/kafka';
import request from 'supertest';
import { dlqName, TOPICS, type TopicKey } from '@wdr/contracts';
import {
  KAFKA_BROKERS,
  PG_ADMIN_URL,
  adminCommand,
  eventually,
  startFixtureSite,
  startFleet,
  startTcpProxy,
  withDatabase,
  type FixtureSite,
  type Fleet,
  type TcpProxy,
} from '@wdr/testkit';

// Kit's kafkajs fixes in this process too (the services have them): stock 2.2.4 spins a 1 ms timer per idle connection.
applyKafkajsIdleLoopFix();

/**
 * Postgres unreachable for 20 s under load. Every service of the fleet reaches Postgres through a
 * TCP relay this test owns; cutting it resets every open connection and refuses new ones (the
 * shared server itself is never touched). Submissions keep coming throughout. Afterwards: nothing
 * went to a dead-letter queue, and every request the gateway accepted ends terminal and settled.
 */
let fleet: Fleet;
let site: FixtureSite;
let proxy: TcpProxy;
let apiKey: string;

beforeAll(async () => {
  const pg = new URL(PG_ADMIN_URL);
  proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  site = await startFixtureSite();
  fleet = await startFleet({ postgresPort: proxy.port });
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'outage', '--credits', '100000']);
  apiKey = tenant['api_key'] as string;
}, 180_000);

afterAll(async () => {
  proxy?.restore();
  await fleet?.stop();
  await site?.close();
  await proxy?.close();
}, 60_000);

async function dlqMessages(prefix: string): Promise<number> {
  const kafka = new Kafka({ clientId: 'outage-test', brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    let total = 0;
    for (const key of Object.keys(TOPICS) as TopicKey[]) {
      const name = dlqName(key, prefix);
      if (!existing.has(name)) continue;
      for (const p of await admin.fetchTopicOffsets(name)) total += Number(p.high);
    }
    return total;
  } finally {
    await admin.disconnect();
  }
}

describe('Postgres unreachable for 20 s under load', () => {
  it('dead-letters nothing, and every accepted request ends terminal and settled once the database is back', async () => {
    const accepted: string[] = [];
    const statuses = new Map<number, number>();
    let loading = true;
    const worker = async () => {
      while (loading) {
        const res = await request(fleet.url('gateway'))
          .post('/api/v1/data/requests')
          .set('X-API-Key', apiKey)
          .timeout(15_000)
          .send({ url: `${site.url}/page`, mode: 'http' })
          .catch(() => undefined);
        if (!res) continue;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 202) accepted.push((res.body as { id: string }).id);
        else await sleep(100);
      }
    };
    const workers = Array.from({ length: 4 }, worker);

    await sleep(3_000);
    const acceptedBeforeCut = accepted.length;
    proxy.cut();
    // The cut is real: the orchestrator reports its database unreachable.
    const readyz = async () =>
      (
        await request(fleet.url('fetch-orchestrator'))
          .get('/readyz')
          .catch((err: Error) => ({ status: err.message }))
      ).status;
    await eventually(readyz, (s) => s === 503, 10_000, 250).catch((err: Error) => {
      throw new Error(`${err.message}\n${fleet.logs('fetch-orchestrator')}`);
    });
    await sleep(20_000);
    proxy.restore();
    await sleep(4_000);
    loading = false;
    await Promise.all(workers);

    // Every service lived through it (an error event of a broken idle connection must not kill one).
    for (const s of [
      'gateway',
      'fetch-orchestrator',
      'billing-ledger',
      'browser-renderer',
      'recipe-extractor',
      'webhook-dispatcher',
    ] as const) {
      const res = await request(fleet.url(s))
        .get('/healthz')
        .catch((err: Error) => ({ status: `${err.message}\n${fleet.logs(s)}` }));
      expect(`${s}: ${res.status}`).toBe(`${s}: 200`);
    }
    expect(acceptedBeforeCut).toBeGreaterThan(0);
    expect(accepted.length).toBeGreaterThan(acceptedBeforeCut); // admission resumed after the outage
    // Refusals while the database was away were 503s, never 500s.
    expect(statuses.get(500) ?? 0).toBe(0);

    const open = async () => {
      const rows = await withDatabase(
        fleet.databases['fetch-orchestrator'].url,
        async (c) =>
          (
            await c.query<{ status: string; token_state: string; n: number }>(
              'SELECT status, token_state, count(*)::int AS n FROM data_requests WHERE id = ANY($1::uuid[]) GROUP BY 1, 2',
              [accepted],
            )
          ).rows,
      );
      return rows;
    };
    const final = await eventually(
      open,
      (rows) => rows.length === 1 && rows[0]!.status === 'completed' && rows[0]!.token_state === 'settled',
      180_000,
      1_000,
    );
    expect(final[0]!.n).toBe(accepted.length);
    // Each accepted request was charged once.
    const holds = await withDatabase(
      fleet.databases['billing-ledger'].url,
      async (c) =>
        (
          await c.query<{ state: string; n: number }>(
            'SELECT state, count(*)::int AS n FROM reservations WHERE request_id = ANY($1::uuid[]) GROUP BY 1',
            [accepted],
          )
        ).rows,
    );
    expect(holds).toEqual([{ state: 'settled', n: accepted.length }]);
    expect(await dlqMessages(fleet.topicPrefix)).toBe(0);
  }, 360_000);
});
