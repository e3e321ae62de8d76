import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { prismaClientOptions } from '@wdr/kit/db';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { purgeFinishedMessages } from '../src/domain/retention.js';

/** Retention of webhook messages against the real database: finished and old go (with their attempts), the rest stays. */
let db: TestDatabase;
let prisma: PrismaClient;

beforeAll(async () => {
  db = await createTestDatabase('webhook-dispatcher');
  prisma = new PrismaClient(prismaClientOptions(db.url));
}, 60_000);

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const exec = (q: string, ...v: unknown[]) => prisma.$executeRawUnsafe(q, ...v);
const count = async (q: string, ...v: unknown[]) => Number((await prisma.$queryRawUnsafe<{ n: bigint }[]>(q, ...v))[0]!.n);

it('deletes finished messages older than the retention with their attempts, in batches; keeps pending and recent ones', async () => {
  const endpoint = randomUUID();
  const tenant = randomUUID();
  await exec(
    `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, updated_at)
     VALUES ($1::uuid, $2::uuid, 'sealed', 'http://127.0.0.1', ARRAY['request.completed'], 'sealed', now())`,
    endpoint,
    tenant,
  );
  const message = async (status: string, ageHours: number) => {
    const id = randomUUID();
    await exec(
      `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, status, next_attempt_at, created_at)
       VALUES ($1::uuid, $2::uuid, $3::uuid, gen_random_uuid(), 'request.completed', '{}', $4, CASE WHEN $4 = 'pending' THEN now() END, now() - $5 * interval '1 hour')`,
      id,
      endpoint,
      tenant,
      status,
      ageHours,
    );
    await exec(
      `INSERT INTO webhook_attempts (id, message_id, endpoint_id, attempt, outcome, status_code, latency_ms) VALUES (gen_random_uuid(), $1::uuid, $2::uuid, 1, 'delivered', 200, 5)`,
      id,
      endpoint,
    );
    return id;
  };
  const old: string[] = [];
  for (let i = 0; i < 7; i++) old.push(await message(i % 2 ? 'failed' : 'delivered', 800));
  const oldPending = await message('pending', 800);
  const recent = await message('delivered', 10);

  const purged = await purgeFinishedMessages(prisma, new Date(Date.now() - 720 * 3_600_000), 3);
  expect(purged).toBe(7);
  expect(await count('SELECT count(*) AS n FROM webhook_messages WHERE id = ANY($1::uuid[])', old)).toBe(0);
  expect(await count('SELECT count(*) AS n FROM webhook_attempts WHERE message_id = ANY($1::uuid[])', old)).toBe(0);
  expect(await count('SELECT count(*) AS n FROM webhook_messages WHERE id = ANY($1::uuid[])', [oldPending, recent])).toBe(2);
  expect(await count('SELECT count(*) AS n FROM webhook_attempts WHERE message_id = ANY($1::uuid[])', [oldPending, recent])).toBe(2);
  expect(await purgeFinishedMessages(prisma, new Date(Date.now() - 720 * 3_600_000), 3)).toBe(0);
});
