import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase, pgRawSql, type TestDatabase } from '@wdr/testkit';
import { createLogger } from '../log.js';
import { createMetrics } from '../metrics.js';
import { processedPurger, purgeProcessed } from './processed-retention.js';

/** The idempotent consumers' memory is purged past its retention, and only that (real Postgres). */
let database: TestDatabase;
let db: ReturnType<typeof pgRawSql>;

beforeAll(async () => {
  database = await createTestDatabase('webhook-dispatcher');
  db = pgRawSql(database.url);
}, 60_000);

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

it('deletes processed-event records older than the retention, in batches, and keeps the rest', async () => {
  const insert = (n: number, ageHours: number) =>
    db.$executeRawUnsafe(
      `INSERT INTO processed_messages (consumer, event_id, processed_at)
       SELECT 'retention-test', gen_random_uuid(), now() - ($2::int * interval '1 hour') FROM generate_series(1, $1::int)`,
      n,
      ageHours,
    );
  await insert(1_250, 200); // past a 192 h retention
  await insert(30, 191); // within it
  const keep = randomUUID();
  await db.$executeRawUnsafe(`INSERT INTO processed_messages (consumer, event_id) VALUES ('retention-test', $1::uuid)`, keep);

  expect(await purgeProcessed(db, 192, 500)).toBe(1_250);
  const left = await db.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM processed_messages WHERE consumer = 'retention-test'`,
  );
  expect(left[0]!.n).toBe(31);
  expect(await purgeProcessed(db, 192, 500)).toBe(0);
  // The purge finds old rows through an index, so it does not read the whole table each hour.
  const indexes = await db.$queryRawUnsafe<{ indexdef: string }[]>(
    `SELECT indexdef FROM pg_indexes WHERE tablename = 'processed_messages'`,
  );
  expect(indexes.map((i) => i.indexdef).join('\n')).toMatch(/\(processed_at\)/);
});

it('counts the rows each purge deletes and the time it takes, as metrics', async () => {
  await db.$executeRawUnsafe(
    `INSERT INTO processed_messages (consumer, event_id, processed_at)
     SELECT 'retention-metrics', gen_random_uuid(), now() - interval '300 hours' FROM generate_series(1, 40)`,
  );
  const metrics = createMetrics('kit-retention');
  const purge = processedPurger({ db, metrics, log: createLogger('kit-retention', 'silent'), retainHours: 192 });
  const value = async (name: string) =>
    Number(new RegExp(`^wdr_${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(await metrics.registry.metrics())?.[1]);
  expect(await purge()).toBe(40);
  expect(await purge()).toBe(0);
  expect(await value('processed_messages_purged_total')).toBe(40);
  expect(await value('processed_messages_purge_seconds_total')).toBeGreaterThan(0);
});
