import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { Envelope } from '@wdr/contracts';
import { KafkaBus, makeEnvelope } from '@wdr/kit/kafka';
import { createLogger } from '@wdr/kit/log';
import {
  createTestDatabase,
  eventually,
  internalAgent,
  KAFKA_BROKERS,
  startServiceProcess,
  uniqueTopicPrefix,
  withDatabase,
  type ServiceProcess,
  type TestDatabase,
} from '@wdr/testkit';
import { HEALTHY, invariants } from './support.js';

/** The ledger as a real process (dist/main.js, dist/admin.js): crash safety and the operator's command line. */
const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
let database: TestDatabase;
let ledger: ServiceProcess;
let bus: KafkaBus;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase('billing-ledger');
  const prefix = uniqueTopicPrefix();
  env = {
    DATABASE_URL: database.url,
    KAFKA_TOPIC_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    OUTBOX_POLL_MS: '100',
    SHUTDOWN_GRACE_MS: '5000',
    KAFKA_SESSION_TIMEOUT_MS: '6000',
  };
  ledger = await startServiceProcess('billing-ledger', env);
  bus = new KafkaBus({ clientId: 'ledger-crash-test', brokers: KAFKA_BROKERS, prefix, log: createLogger('test', 'silent') });
  await bus.connect();
}, 90_000);

afterAll(async () => {
  await bus?.disconnect();
  await ledger?.kill('SIGTERM');
  await database?.drop();
}, 60_000);

/** The internal API as the services that call it (testkit internalAgent). */
const api = () => internalAgent(request(ledger.url), 'billing-ledger');
const count = (sql: string, params: unknown[] = []) =>
  withDatabase(database.url, async (c) => (await c.query<{ n: number }>(sql, params)).rows[0]!.n);

describe('crash safety', () => {
  it('loses nothing and charges nothing twice when SIGKILLed in the middle of a settlement burst', async () => {
    const tenant = randomUUID();
    // Funded by a grant (the gateway's route): no service may call the top-up route.
    await api()
      .post(`/internal/v1/accounts/${tenant}/grants`)
      .send({ amount: 100_000, reference: `crash-${tenant}` })
      .expect(201);
    const N = 400;
    const ids = Array.from({ length: N }, () => randomUUID());
    const items = ids.map((request_id) => ({ request_id, route_mode: 'http', proxy_type: null, max_credits: null }));
    await api().post('/internal/v1/reservations/batch').send({ tenant_id: tenant, items }).expect(201);

    // Every third request fails (refunded); the others complete, every other one with a CAPTCHA solve (1 + 10).
    const commands = ids.map((request_id, i) =>
      makeEnvelope('billingCommands', 'billing.settlement_requested', tenant, {
        request_id,
        outcome: i % 3 === 0 ? 'failed' : 'completed',
        route_mode: 'http',
        captcha_tokens: 0,
        captcha_solves: i % 2,
      }),
    );
    const expectedCharge = ids.reduce((s, _id, i) => s + (i % 3 === 0 ? 0 : 1 + 10 * (i % 2)), 0);
    // Redeliveries and contradicting replays ride along.
    const replays = commands
      .filter((_c, i) => i % 10 === 0)
      .flatMap((c) => [
        c,
        makeEnvelope('billingCommands', 'billing.settlement_requested', tenant, {
          ...(c.data as { request_id: string }),
          outcome: 'cancelled',
          route_mode: 'http',
          captcha_tokens: 0,
        }),
      ]);
    const burst: Envelope[] = [...commands, ...replays];
    await bus.send(
      bus.topic('billingCommands'),
      burst.map((envelope) => ({ key: (envelope.data as { request_id: string }).request_id, envelope })),
    );

    const resolvedCount = () => count(`SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1 AND state <> 'reserved'`, [tenant]);
    // Kill it mid-burst: some settled, most not.
    await eventually(resolvedCount, (n) => n >= 20, 60_000, 10);
    await ledger.kill('SIGKILL');
    const atKill = await resolvedCount();
    expect(atKill).toBeLessThan(N);
    expect(await invariants(database.url)).toEqual(HEALTHY);

    await ledger.restart();
    await eventually(resolvedCount, (n) => n === N, 120_000, 200);
    const uniqueIds = [...new Set(burst.map((e) => e.id))];
    await eventually(
      () => count(`SELECT count(*)::int AS n FROM processed_messages WHERE event_id = ANY($1::uuid[])`, [uniqueIds]),
      (n) => n === uniqueIds.length,
      60_000,
    );

    const balance = (await api().get(`/internal/v1/accounts/${tenant}/balance`).expect(200)).body;
    expect(balance).toMatchObject({ balance_tokens: 100_000 - expectedCharge, reserved_tokens: 0 });
    expect(await invariants(database.url)).toEqual(HEALTHY);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM transfers WHERE request_id = ANY($1::uuid[]) AND kind IN ('post_pending', 'void_pending')`,
        [ids],
      ),
    ).toBe(N);
    expect(await count(`SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1 AND state = 'refunded'`, [tenant])).toBe(
      Math.ceil(N / 3),
    );
    // One billing.reservation_resolved per request, however often its command arrived.
    expect(
      await count(
        `SELECT count(DISTINCT envelope->'data'->>'request_id')::int AS n FROM outbox_messages WHERE envelope->>'type' = 'billing.reservation_resolved'`,
      ),
    ).toBe(N);
    expect(await count(`SELECT count(*)::int AS n FROM outbox_messages WHERE envelope->>'type' = 'billing.reservation_resolved'`)).toBe(N);
  }, 240_000);
});

function admin(args: string[]): Promise<{ code: number | null; out: unknown; err: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [join(APP, 'dist', 'admin.js'), ...args], {
      env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (err += b.toString()));
    proc.on('exit', (code) => resolve({ code, out: out.trim() ? (JSON.parse(out.trim().split('\n').pop()!) as unknown) : null, err }));
  });
}

describe('admin command line', () => {
  it('tops up, grants and corrects with new transfers only, idempotent per reference', async () => {
    const tenant = randomUUID();
    expect(await admin(['top-up', '--tenant', tenant, '--amount', '500', '--reference', `inv-${tenant}`])).toMatchObject({
      code: 0,
      out: { created: true, balance_tokens: 500 },
    });
    expect(await admin(['top-up', '--tenant', tenant, '--amount', '500', '--reference', `inv-${tenant}`])).toMatchObject({
      code: 0,
      out: { created: false, balance_tokens: 500 },
    });
    expect(
      await admin(['grant', '--tenant', tenant, '--amount', '50', '--reference', `promo-${tenant}`, '--memo', 'launch promo']),
    ).toMatchObject({ code: 0, out: { balance_tokens: 550 } });
    expect((await admin(['correct', '--tenant', tenant, '--amount=-100', '--reference', `fix-${tenant}`])).code).toBe(2); // a correction needs a reason
    expect(
      await admin(['correct', '--tenant', tenant, '--amount=-100', '--reference', `fix-${tenant}`, '--memo', 'invoice entered twice']),
    ).toMatchObject({ code: 0, out: { balance_tokens: 450 } });
    const tooMuch = await admin(['correct', '--tenant', tenant, '--amount=-1000', '--reference', `fix2-${tenant}`, '--memo', 'x']);
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.err).toContain('INSUFFICIENT_CREDITS');
    expect(await admin(['balance', '--tenant', tenant])).toMatchObject({
      code: 0,
      out: { balance_tokens: 450, reserved_tokens: 0, plan_id: 'standard' },
    });
    const statement = await admin(['statement', '--tenant', tenant]);
    expect(
      (statement.out as { items: { type: string; balance_effect_tokens: number; memo: string | null }[] }).items.map((i) => [
        i.type,
        i.balance_effect_tokens,
        i.memo,
      ]),
    ).toEqual([
      ['correction', -100, 'invoice entered twice'],
      ['grant', 50, 'launch promo'],
      ['top_up', 500, null],
    ]);
    expect(await admin(['set-plan', '--tenant', tenant, '--plan', 'business'])).toMatchObject({ code: 0, out: { plan_id: 'business' } });
    expect((await admin(['set-plan', '--tenant', tenant, '--plan', 'nope'])).code).toBe(1);
    expect(await admin(['plan', '--tenant', tenant])).toMatchObject({ code: 0, out: { plan_id: 'business', guarded_pricing: true } });
    expect(((await admin(['plans'])).out as { plan_id: string }[]).map((p) => p.plan_id)).toEqual(['business', 'standard']);
    expect((await admin(['frobnicate'])).code).toBe(2);
  }, 180_000); // twelve processes, each starting Node and Prisma: about 1 s each when quiet, several on a loaded machine
});
