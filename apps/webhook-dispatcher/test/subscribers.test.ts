import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { prismaClientOptions } from '@wdr/kit/db';
import { createLogger } from '@wdr/kit/log';
import { createTestDatabase, eventually, startTcpProxy, type TestDatabase } from '@wdr/testkit';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { Subscribers } from '../src/domain/subscribers.js';

/**
 * The set of tenants with an enabled endpoint, against the real database: two instances stand for
 * two dispatcher replicas; an endpoint written by another replica (a plain INSERT here) reaches
 * them through the table's notification, and an instance that stops hearing notifications answers
 * "may receive" for everyone until it has read the table again.
 */
let db: TestDatabase;
let prisma: PrismaClient;
const instances: Subscribers[] = [];

beforeAll(async () => {
  db = await createTestDatabase('webhook-dispatcher');
  prisma = new PrismaClient(prismaClientOptions(db.url));
}, 60_000);

afterAll(async () => {
  for (const s of instances) await s.stop();
  await prisma?.$disconnect();
  await db?.drop();
});

function subscribers(databaseUrl = db.url): Subscribers {
  const s = new Subscribers(prisma, databaseUrl, createLogger('test', 'silent'), 600_000);
  s.start();
  instances.push(s);
  return s;
}

const insertEndpoint = (tenantId: string, status = 'enabled') =>
  prisma.$executeRawUnsafe(
    `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, status, updated_at)
     VALUES ($1::uuid, $2::uuid, 'sealed', 'http://127.0.0.1', ARRAY['request.completed'], 'sealed', $3, now())`,
    randomUUID(),
    tenantId,
    status,
  );

it('knows the tenants with enabled endpoints, learns new ones from the notification, and skips the others', async () => {
  const early = randomUUID();
  await insertEndpoint(early);
  await insertEndpoint(randomUUID(), 'disabled');
  const [a, b] = [subscribers(), subscribers()];
  const stranger = randomUUID();
  // Loaded: a tenant with an endpoint may receive, one without is skipped.
  await eventually(
    async () => [a.mayReceive(stranger), b.mayReceive(stranger)],
    (v) => v.every((x) => !x),
    10_000,
  );
  expect([a.mayReceive(early), b.mayReceive(early)]).toEqual([true, true]);

  // Another replica commits an endpoint: both hear it.
  const late = randomUUID();
  expect(a.mayReceive(late)).toBe(false);
  await insertEndpoint(late);
  await eventually(
    async () => [a.mayReceive(late), b.mayReceive(late)],
    (v) => v.every(Boolean),
    10_000,
  );

  // A disabled endpoint announces nothing; re-enabling it does.
  const quiet = randomUUID();
  await insertEndpoint(quiet, 'disabled');
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(a.mayReceive(quiet)).toBe(false);
  await prisma.$executeRawUnsafe(`UPDATE webhook_endpoints SET status = 'enabled' WHERE tenant_id = $1::uuid`, quiet);
  await eventually(async () => a.mayReceive(quiet), Boolean, 10_000);

  // A reload drops a tenant whose endpoints are all disabled.
  await prisma.$executeRawUnsafe(`UPDATE webhook_endpoints SET status = 'disabled' WHERE tenant_id = $1::uuid`, quiet);
  await a.reload();
  expect(a.mayReceive(quiet)).toBe(false);
  expect(a.mayReceive(late)).toBe(true);
}, 30_000);

it('while its listening connection is down it skips nobody, and it reads the table again when it is back', async () => {
  const url = new URL(db.url);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(url.port || 5432) });
  url.port = String(proxy.port);
  const s = subscribers(url.toString());
  const stranger = randomUUID();
  await eventually(
    async () => s.mayReceive(stranger),
    (v) => !v,
    10_000,
  );

  proxy.cut();
  await eventually(async () => s.mayReceive(stranger), Boolean, 10_000);
  // An endpoint committed while it cannot hear: after the reconnection it is known from the reload.
  const missed = randomUUID();
  await insertEndpoint(missed);
  proxy.restore();
  await eventually(
    async () => [s.mayReceive(stranger), s.mayReceive(missed)],
    (v) => v[0] === false && v[1] === true,
    15_000,
  );
  await proxy.close();
}, 40_000);
