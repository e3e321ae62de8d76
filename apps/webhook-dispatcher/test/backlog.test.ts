import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { prismaClientOptions } from '@wdr/kit/db';
import { createTestDatabase, type TestDatabase } from '@wdr/testkit';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { readBacklog } from '../src/domain/backlog.js';

/** The delivery backlog the metrics export (webhook_messages_pending, webhook_oldest_due_age_seconds), against the real database. */
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

it('counts due and scheduled pending messages and the age of the longest-waiting due one; finished ones do not count', async () => {
  expect(await readBacklog(prisma)).toEqual({ due: 0, scheduled: 0, oldestDueAgeSeconds: 0 });
  const endpoint = randomUUID();
  const tenant = randomUUID();
  await prisma.$executeRawUnsafe(
    `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, updated_at)
     VALUES ($1::uuid, $2::uuid, 'sealed', 'http://127.0.0.1', ARRAY['request.completed'], 'sealed', now())`,
    endpoint,
    tenant,
  );
  const message = (status: string, dueInSeconds: number) =>
    prisma.$executeRawUnsafe(
      `INSERT INTO webhook_messages (id, endpoint_id, tenant_id, event_id, event_type, body, status, next_attempt_at)
       VALUES (gen_random_uuid(), $1::uuid, $2::uuid, gen_random_uuid(), 'request.completed', '{}', $3, now() + $4 * interval '1 second')`,
      endpoint,
      tenant,
      status,
      dueInSeconds,
    );
  await message('pending', -600); // due for 10 minutes: the sender is behind
  await message('pending', -5);
  await message('pending', 3_600); // a retry in an hour
  await message('delivered', -7_200);
  await message('failed', -7_200);
  const b = await readBacklog(prisma);
  expect(b.due).toBe(2);
  expect(b.scheduled).toBe(1);
  expect(b.oldestDueAgeSeconds).toBeGreaterThanOrEqual(599);
  expect(b.oldestDueAgeSeconds).toBeLessThan(700);
});
