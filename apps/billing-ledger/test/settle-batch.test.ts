import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Envelope } from '@wdr/contracts';
import { createTestDatabase, eventually, identityEnvOf, uniqueTopicPrefix, withDatabase } from '@wdr/testkit';
import { createLedgerService } from '../src/app.js';
import { createLedgerDeps } from '../src/deps.js';
import { loadLedgerEnv } from '../src/env.js';
import { fund } from '../src/domain/funding.js';
import { reserveBatch } from '../src/domain/reservations.js';
import {
  balance,
  HEALTHY,
  invariants,
  newTenant,
  outboxEvents,
  reserveBody,
  settlementEnvelope,
  startLedger,
  type LedgerHarness,
} from './support.js';

/** Settlement commands settled a Kafka batch at a time (settleBatch, the consumer's batch handler). */
const count = (url: string, sql: string, params: unknown[] = []) =>
  withDatabase(url, async (c) => (await c.query<{ n: number }>(sql, params)).rows[0]!.n);

async function metric(h: { service: { metricsApp: unknown } } & LedgerHarness, name: string, label: string): Promise<number> {
  const text = await h.deps.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(label));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('batch settlement', () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedger({ KAFKA_CONSUMER_MAX_ATTEMPTS: '2' });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  it('settles a batch with a bad command in it: the others once each, the bad one dead-lettered, no token moved twice', async () => {
    const tenant = await newTenant(h, 1_000);
    const bodies = Array.from({ length: 12 }, () => reserveBody(tenant));
    for (const b of bodies) await h.api().post('/internal/v1/reservations').send(b).expect(201);
    const good = bodies.map((b, i) =>
      settlementEnvelope(tenant, {
        request_id: b.request_id,
        outcome: i % 4 === 0 ? 'failed' : 'completed',
        route_mode: 'http',
        captcha_tokens: 0,
      }),
    );
    // A command for a request the ledger never reserved: it can never settle.
    const bad = settlementEnvelope(tenant, { request_id: randomUUID(), outcome: 'completed', route_mode: 'http', captcha_tokens: 0 });
    // Redeliveries and a contradicting replay ride along, all on one partition (one key): one batch.
    const replay = settlementEnvelope(tenant, {
      request_id: bodies[1]!.request_id,
      outcome: 'failed',
      route_mode: 'http',
      captcha_tokens: 0,
    });
    const burst: Envelope[] = [...good.slice(0, 5), bad, good[2]!, replay, ...good.slice(5), good[7]!];
    const fellBack = await metric(h as never, 'wdr_kafka_batches_total', 'outcome="fell_back"');
    await h.deps.bus.send(
      h.deps.bus.topic('billingCommands'),
      burst.map((envelope) => ({ key: 'one-partition', envelope })),
    );
    const ids = bodies.map((b) => b.request_id);
    await eventually(
      () =>
        count(h.database.url, `SELECT count(*)::int AS n FROM reservations WHERE request_id = ANY($1::uuid[]) AND state <> 'reserved'`, [
          ids,
        ]),
      (n) => n === ids.length,
      60_000,
      50,
    );
    // Every command but the bad one is recorded as processed; the bad one went to the DLQ (not recorded).
    const goodIds = [...new Set([...good, replay].map((e) => e.id))];
    await eventually(
      () => count(h.database.url, `SELECT count(*)::int AS n FROM processed_messages WHERE event_id = ANY($1::uuid[])`, [goodIds]),
      (n) => n === goodIds.length,
      60_000,
    );
    const admin = h.deps.bus.kafka.admin();
    await admin.connect();
    await eventually(
      async () => (await admin.fetchTopicOffsets(h.deps.bus.dlq('billingCommands'))).reduce((n, p) => n + Number(p.high), 0),
      (n) => n === 1,
      60_000,
    );
    await admin.disconnect();
    expect(await count(h.database.url, 'SELECT count(*)::int AS n FROM processed_messages WHERE event_id = $1::uuid', [bad.id])).toBe(0);
    expect(await metric(h as never, 'wdr_kafka_batches_total', 'outcome="fell_back"')).toBeGreaterThan(fellBack);

    // 3 refunded (0, 4, 8), 9 charged 1 token each; good[1] completed (its replay came later).
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 1_000 - 9, reserved_tokens: 0 });
    expect(
      await count(h.database.url, `SELECT count(*)::int AS n FROM reservations WHERE request_id = ANY($1::uuid[]) AND state = 'refunded'`, [
        ids,
      ]),
    ).toBe(3);
    const resolved = (await outboxEvents(h.database.url, 'billing.reservation_resolved')).filter((e) =>
      (ids as string[]).includes((e.data as { request_id: string }).request_id),
    );
    expect(resolved).toHaveLength(ids.length);
    expect(new Set(resolved.map((e) => (e.data as { request_id: string }).request_id)).size).toBe(ids.length);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 120_000);

  it('settles on connections that plan each statement at its execution (arrays of request ids over growing tables)', async () => {
    expect(await h.deps.sql.$queryRawUnsafe('SHOW plan_cache_mode')).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
  });

  it('settles a burst in one transaction per batch, as settling one by one would', async () => {
    const tenant = await newTenant(h, 1_000);
    const bodies = Array.from({ length: 40 }, (_, i) => reserveBody(tenant, i % 2 ? { route_mode: 'browser' } : {}));
    for (const b of bodies) await h.api().post('/internal/v1/reservations').send(b).expect(201);
    const committed = await metric(h as never, 'wdr_kafka_batches_total', 'outcome="committed"');
    const fellBack = await metric(h as never, 'wdr_kafka_batches_total', 'outcome="fell_back"');
    const burst = bodies.map((b, i) =>
      settlementEnvelope(tenant, {
        request_id: b.request_id,
        outcome: i % 5 === 0 ? 'cancelled' : 'completed',
        route_mode: b.route_mode,
        captcha_tokens: 0,
        captcha_solves: i % 3 === 0 ? 1 : 0,
      }),
    );
    await h.deps.bus.send(
      h.deps.bus.topic('billingCommands'),
      burst.map((envelope) => ({ key: 'one-partition', envelope })),
    );
    const ids = bodies.map((b) => b.request_id);
    await eventually(
      () =>
        count(h.database.url, `SELECT count(*)::int AS n FROM processed_messages WHERE event_id = ANY($1::uuid[])`, [
          burst.map((e) => e.id),
        ]),
      (n) => n === burst.length,
      60_000,
      50,
    );
    const batches = (await metric(h as never, 'wdr_kafka_batches_total', 'outcome="committed"')) - committed;
    // Fewer transactions than commands (the burst sat on one partition), and no fallback.
    expect(batches).toBeGreaterThan(0);
    expect(batches).toBeLessThan(burst.length);
    expect(await metric(h as never, 'wdr_kafka_batches_total', 'outcome="fell_back"')).toBe(fellBack);
    // The charge: completed http 1, browser 5, +10 per CAPTCHA solve; cancelled nothing.
    const expected = bodies.reduce((s, b, i) => s + (i % 5 === 0 ? 0 : (b.route_mode === 'browser' ? 5 : 1) + (i % 3 === 0 ? 10 : 0)), 0);
    expect(await balance(h, tenant)).toEqual({ balance_tokens: 1_000 - expected, reserved_tokens: 0 });
    const charged = await withDatabase(
      h.database.url,
      async (c) =>
        (
          await c.query<{ n: string }>(
            `SELECT COALESCE(sum(charged_tokens), 0)::text AS n FROM reservations WHERE request_id = ANY($1::uuid[])`,
            [ids],
          )
        ).rows[0]!.n,
    );
    expect(Number(charged)).toBe(expected);
    expect(await invariants(h.database.url)).toEqual(HEALTHY);
  }, 120_000);
});

describe('a crash between the batch commit and the offset commit', () => {
  it('repeats nothing: every reservation resolved once, announced once, and the redelivered batch left alone', async () => {
    const database = await createTestDatabase('billing-ledger');
    const prefix = uniqueTopicPrefix();
    const deps = createLedgerDeps(
      loadLedgerEnv({
        ...identityEnvOf('billing-ledger'),
        DATABASE_URL: database.url,
        KAFKA_TOPIC_PREFIX: prefix,
        LOG_LEVEL: 'silent',
        OUTBOX_POLL_MS: '50',
        KAFKA_SESSION_TIMEOUT_MS: '6000',
      }),
    );
    const service = createLedgerService(deps);
    let started = false;
    try {
      await deps.bus.ensureTopics(['billingCommands', 'billingEvents']);
      await deps.bus.connect();
      const tenant = randomUUID();
      await fund(deps.db, 'top_up', { tenant_id: tenant, amount: 10_000, reference: `crash-${tenant}`, memo: null });
      const items = Array.from({ length: 30 }, () => ({
        request_id: randomUUID(),
        route_mode: 'http',
        proxy_type: null,
        max_credits: null,
      }));
      await reserveBatch(deps.db, 2, { tenant_id: tenant, items });
      const commands = items.map((it, i) =>
        settlementEnvelope(tenant, {
          request_id: it.request_id,
          outcome: i % 3 === 0 ? 'failed' : 'completed',
          route_mode: 'http',
          captcha_tokens: 0,
        }),
      );
      // One partition, all there before the consumer starts: its first fetch, its first batch.
      await deps.bus.send(
        deps.bus.topic('billingCommands'),
        commands.map((envelope) => ({ key: 'one-partition', envelope })),
      );
      const ids = items.map((it) => it.request_id);
      const resolvedCount = () =>
        count(database.url, `SELECT count(*)::int AS n FROM reservations WHERE request_id = ANY($1::uuid[]) AND state <> 'reserved'`, [
          ids,
        ]);
      const committedOffset = async () => {
        const admin = deps.bus.kafka.admin();
        await admin.connect();
        try {
          const o = await admin.fetchOffsets({ groupId: `${prefix}billing-ledger`, topics: [deps.bus.topic('billingCommands')] });
          return o[0]!.partitions.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
        } finally {
          await admin.disconnect();
        }
      };

      const fixture = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'crash-settler.mjs');
      const child = spawn(process.execPath, [fixture, database.url, prefix], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      let atKill = 0;
      let settledAtKill = 0;
      try {
        // The first batch committed its settlements; its handler never returned: no offset moved past it.
        await eventually(
          () => Promise.resolve(output),
          (o) => o.includes('settled a batch'),
          60_000,
        );
        settledAtKill = await resolvedCount();
        atKill = await committedOffset();
        expect(settledAtKill).toBeGreaterThan(1);
        expect(atKill).toBe(0);
      } catch (err) {
        throw new Error(`${String(err)}\nsettler output:\n${output}`);
      } finally {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }
      const announcedAtKill = await count(
        database.url,
        `SELECT count(*)::int AS n FROM outbox_messages WHERE envelope->>'type' = 'billing.reservation_resolved'`,
      );
      expect(announcedAtKill).toBe(settledAtKill);

      // The ledger proper takes over the group: the batch comes again, and settles nothing twice.
      await service.start();
      started = true;
      await eventually(committedOffset, (n) => n === commands.length, 90_000, 200);
      expect(await resolvedCount()).toBe(ids.length);
      const text = await deps.metrics.registry.metrics();
      const redelivered = Number(
        text
          .split('\n')
          .find((l) => l.startsWith('billing_ledger_settlements_total{') && l.includes('outcome="redelivered"'))
          ?.split(' ')
          .pop() ?? 0,
      );
      expect(redelivered).toBe(settledAtKill);
      const expectedCharge = items.reduce((s, _it, i) => s + (i % 3 === 0 ? 0 : 1), 0);
      const b = await withDatabase(
        database.url,
        async (c) =>
          (
            await c.query<{ a: string }>(
              `SELECT (credits_posted - debits_posted - debits_pending)::text AS a FROM accounts WHERE id = $1`,
              [`tenant:${tenant}`],
            )
          ).rows[0]!.a,
      );
      expect(Number(b)).toBe(10_000 - expectedCharge);
      expect(
        await count(
          database.url,
          `SELECT count(*)::int AS n FROM outbox_messages WHERE envelope->>'type' = 'billing.reservation_resolved'`,
        ),
      ).toBe(ids.length);
      expect(
        await count(
          database.url,
          `SELECT count(DISTINCT envelope->'data'->>'request_id')::int AS n FROM outbox_messages WHERE envelope->>'type' = 'billing.reservation_resolved'`,
        ),
      ).toBe(ids.length);
      expect(
        await count(
          database.url,
          `SELECT count(*)::int AS n FROM transfers WHERE request_id = ANY($1::uuid[]) AND kind IN ('post_pending', 'void_pending')`,
          [ids],
        ),
      ).toBe(ids.length);
      expect(await invariants(database.url)).toEqual(HEALTHY);
    } finally {
      if (started) await service.stop();
      else {
        await deps.bus.disconnect().catch(() => undefined);
        await deps.db.$disconnect();
      }
      await database.drop();
    }
  }, 240_000);
});
