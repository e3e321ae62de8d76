import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { Envelope } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { makeEnvelope } from '@wdr/kit/kafka';
import {
  createTestDatabase,
  eventually,
  identityEnvOf,
  internalAgent,
  uniqueTopicPrefix,
  withDatabase,
  type TestDatabase,
} from '@wdr/testkit';
import { createLedgerService } from '../src/app.js';
import { createLedgerDeps, type LedgerDeps } from '../src/deps.js';
import { loadLedgerEnv } from '../src/env.js';
import { fund, type FundingKind } from '../src/domain/funding.js';
import type { SettlementCommand } from '../src/domain/settlement.js';

/** The ledger in-process against the real Postgres and Kafka, with the helpers its suites share. */
export interface LedgerHarness {
  database: TestDatabase;
  deps: LedgerDeps;
  service: ReturnType<typeof createLedgerService>;
  /** The internal API, each call signed as the first service its route names (testkit internalAgent). */
  api: () => ReturnType<typeof request>;
  stop: () => Promise<void>;
}

export async function startLedger(env: Record<string, string> = {}): Promise<LedgerHarness> {
  const database = await createTestDatabase('billing-ledger');
  const deps = createLedgerDeps(
    loadLedgerEnv({
      ...identityEnvOf('billing-ledger'),
      DATABASE_URL: database.url,
      KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
      LOG_LEVEL: 'silent',
      OUTBOX_POLL_MS: '50',
      ...env,
    }),
  );
  const service = createLedgerService(deps);
  await service.start();
  // The service serves without Kafka and connects in the background; these tests produce at once.
  await service.kafkaConnected();
  return {
    database,
    deps,
    service,
    api: () => internalAgent(request(service.app), 'billing-ledger'),
    stop: async () => {
      await service.stop();
      await database.drop();
    },
  };
}

export async function newTenant(h: LedgerHarness, credits: number, plan?: string): Promise<string> {
  const tenant = randomUUID();
  if (plan) {
    await withDatabase(h.database.url, (c) =>
      c.query(`INSERT INTO accounts (id, kind, tenant_id, no_overdraft, plan_id) VALUES ($1, 'tenant', $2, true, $3)`, [
        `tenant:${tenant}`,
        tenant,
        plan,
      ]),
    );
  }
  if (credits > 0) {
    const moved = await operatorMovement(h.deps.db, 'top_up', tenant, { amount: credits, reference: `t-${tenant}` });
    if (moved.status !== 201) throw new Error(`top-up of a new tenant answered ${moved.status}`);
  }
  return tenant;
}

/**
 * A top-up, grant or correction as the operator's admin command makes it (top-ups and corrections
 * have no HTTP route): `fund` on the ledger's database, answered like a route would (201 created,
 * 200 replayed, or the PublicError's status).
 */
export async function operatorMovement(
  db: LedgerDeps['db'],
  kind: FundingKind,
  tenant: string,
  body: { amount: number; reference: string; memo?: string },
): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    const result = await fund(db, kind, { tenant_id: tenant, amount: body.amount, reference: body.reference, memo: body.memo ?? null });
    return { status: result.created ? 201 : 200, body: result as unknown as Record<string, unknown> };
  } catch (err) {
    if (err instanceof PublicError) return { status: err.status, body: { code: err.code } };
    throw err;
  }
}

export const reserveBody = (tenant: string, extra: Record<string, unknown> = {}) => ({
  request_id: randomUUID(),
  tenant_id: tenant,
  route_mode: 'http',
  proxy_type: null,
  max_credits: null,
  ...extra,
});

export async function balance(h: LedgerHarness, tenant: string): Promise<{ balance_tokens: number; reserved_tokens: number }> {
  const b = (await h.api().get(`/internal/v1/accounts/${tenant}/balance`).expect(200)).body as {
    balance_tokens: number;
    reserved_tokens: number;
  };
  return { balance_tokens: b.balance_tokens, reserved_tokens: b.reserved_tokens };
}

export function settlementEnvelope(tenant: string, cmd: SettlementCommand): Envelope {
  return makeEnvelope('billingCommands', 'billing.settlement_requested', tenant, cmd);
}

/** Send commands over Kafka and wait until the ledger's consumer has processed every one of them. */
export async function sendAndWait(h: LedgerHarness, envelopes: Envelope[], timeoutMs = 30_000): Promise<void> {
  await h.deps.bus.send(
    h.deps.bus.topic('billingCommands'),
    envelopes.map((envelope) => ({ key: (envelope.data as { request_id: string }).request_id, envelope })),
  );
  const ids = [...new Set(envelopes.map((e) => e.id))];
  await eventually(
    () =>
      withDatabase(
        h.database.url,
        async (c) =>
          (
            await c.query(
              `SELECT count(*)::int AS n FROM processed_messages WHERE consumer = 'billing-ledger' AND event_id = ANY($1::uuid[])`,
              [ids],
            )
          ).rows[0].n as number,
      ),
    (n) => n === ids.length,
    timeoutMs,
    25,
  );
}

export interface LedgerInvariants {
  /** sum over all accounts of credits_posted - debits_posted: must be 0. */
  postedSum: string;
  /** sum of credits_pending - debits_pending: must be 0. */
  pendingSum: string;
  /** Accounts that forbid overdraft and are below zero: must be none. */
  overdrawn: string[];
  /** Pending transfers resolved more than once, or resolutions without a pending: must be none. */
  doubleResolved: string[];
  /** Reservations whose held_tokens differ from their unresolved holds or that hold after resolution: must be none. */
  holdMismatch: string[];
  /** Credit leases whose granted differs from used + returned + their account's balance, or whose account is below zero: must be none. */
  leaseMismatch: string[];
}

export async function invariants(url: string): Promise<LedgerInvariants> {
  return withDatabase(url, async (c) => {
    const sums = (
      await c.query<{ posted: string; pending: string }>(
        'SELECT COALESCE(sum(credits_posted - debits_posted), 0)::text AS posted, COALESCE(sum(credits_pending - debits_pending), 0)::text AS pending FROM accounts',
      )
    ).rows[0]!;
    const overdrawn = (
      await c.query<{ id: string }>('SELECT id FROM accounts WHERE no_overdraft AND credits_posted - debits_posted - debits_pending < 0')
    ).rows.map((r) => r.id);
    const doubleResolved = (
      await c.query<{ pending_id: string }>(
        `SELECT r.pending_id FROM transfers r LEFT JOIN transfers p ON p.id = r.pending_id AND p.kind = 'pending'
          WHERE r.kind IN ('post_pending', 'void_pending') GROUP BY r.pending_id, p.id HAVING count(*) > 1 OR p.id IS NULL`,
      )
    ).rows.map((r) => r.pending_id);
    const holdMismatch = (
      await c.query<{ request_id: string }>(
        `SELECT r.request_id FROM reservations r
           LEFT JOIN LATERAL (
             SELECT COALESCE(sum(p.amount), 0) AS open FROM transfers p
              WHERE p.request_id = r.request_id AND p.kind = 'pending' AND NOT EXISTS (SELECT 1 FROM transfers x WHERE x.pending_id = p.id)
           ) h ON true
          WHERE (r.state = 'reserved' AND h.open <> r.held_tokens) OR (r.state <> 'reserved' AND h.open <> 0)`,
      )
    ).rows.map((r) => r.request_id);
    const leaseMismatch = (
      await c.query<{ id: string }>(
        `SELECT l.id FROM leases l LEFT JOIN accounts a ON a.id = 'lease:' || l.id::text
          WHERE a.id IS NULL OR l.granted <> l.used + l.returned + (a.credits_posted - a.debits_posted - a.debits_pending)
             OR a.credits_posted - a.debits_posted - a.debits_pending < 0 OR a.credits_posted <> l.granted
             OR (l.state = 'returned' AND a.credits_posted - a.debits_posted <> 0)
             OR l.used <> COALESCE((SELECT sum(t.amount) FROM transfers t WHERE t.debit_account_id = a.id AND t.code = 'lease_use'), 0)`,
      )
    ).rows.map((r) => r.id);
    return { postedSum: sums.posted, pendingSum: sums.pending, overdrawn, doubleResolved, holdMismatch, leaseMismatch };
  });
}

export const HEALTHY: LedgerInvariants = {
  postedSum: '0',
  pendingSum: '0',
  overdrawn: [],
  doubleResolved: [],
  holdMismatch: [],
  leaseMismatch: [],
};

/** Envelopes the ledger wrote to its outbox, in order; `type` is a LIKE pattern. */
export async function outboxEvents(url: string, type: string): Promise<Envelope[]> {
  return withDatabase(url, async (c) =>
    (
      await c.query<{ envelope: Envelope }>("SELECT envelope FROM outbox_messages WHERE envelope->>'type' LIKE $1 ORDER BY id", [type])
    ).rows.map((r) => r.envelope),
  );
}
