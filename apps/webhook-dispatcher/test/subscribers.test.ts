import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { prismaClientOptions } from '@wdr/kit/db';
import { createLogger } from '@wdr/kit/log';
import { createTestDatabase, eventually, startTcpProxy, type TestDatabase } from '@wdr/testkit';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { Subscribers } from '../src/domain/subscribers.js';

/**
 * Who listens (the enabled endpoints of each tenant, their types and scope), against the real
 * database: two instances stand for two dispatcher replicas; an endpoint written by another
 * replica (plain SQL here) reaches them through the table's notification, and an instance that
 * stops hearing notifications answers "may receive" for everyone until it has read the table again.
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

const insertEndpoint = (
  tenantId: string,
  status = 'enabled',
  opts: { types?: string[]; projectId?: string | null; environmentId?: string | null } = {},
) =>
  prisma.$executeRawUnsafe(
    `INSERT INTO webhook_endpoints (id, tenant_id, url_sealed, url_origin, event_types, secret_sealed, status, updated_at, project_id, environment_id)
     VALUES ($1::uuid, $2::uuid, 'sealed', 'http://127.0.0.1', $4::text[], 'sealed', $3, now(), $5, $6)`,
    randomUUID(),
    tenantId,
    status,
    opts.types ?? ['request.completed'],
    opts.projectId ?? null,
    opts.environmentId ?? null,
  );

it('knows the tenants with enabled endpoints, learns new ones from the notification, and skips the others', async () => {
  const early = randomUUID();
  await insertEndpoint(early);
  await insertEndpoint(randomUUID(), 'disabled');
  const [a, b] = [subscribers(), subscribers()];
  const stranger = randomUUID();
  // Loaded: a tenant with an endpoint may receive, one without is skipped.
  await eventually(
    async () => [a.mayReceive(stranger, 'request.completed', null), b.mayReceive(stranger, 'request.completed', null)],
    (v) => v.every((x) => !x),
    10_000,
  );
  expect([a.mayReceive(early, 'request.completed', null), b.mayReceive(early, 'request.completed', null)]).toEqual([true, true]);
  // Any message of a tenant without an enabled endpoint may go unread (the consumer's skipTenant).
  expect([a.mayReceiveAny(early), a.mayReceiveAny(stranger)]).toEqual([true, false]);
  // Before its first load an instance skips nothing (fails closed).
  const fresh = new Subscribers(prisma, db.url, createLogger('test', 'silent'), 600_000);
  expect(fresh.mayReceiveAny(stranger)).toBe(true);

  // Another replica commits an endpoint: both hear it.
  const late = randomUUID();
  expect(a.mayReceive(late, 'request.completed', null)).toBe(false);
  await insertEndpoint(late);
  await eventually(
    async () => [a.mayReceive(late, 'request.completed', null), b.mayReceive(late, 'request.completed', null)],
    (v) => v.every(Boolean),
    10_000,
  );
  expect(b.mayReceiveAny(late)).toBe(true);

  // A disabled endpoint is announced too, read again, and still skipped; re-enabling it is heard.
  const quiet = randomUUID();
  await insertEndpoint(quiet, 'disabled');
  await new Promise((resolve) => setTimeout(resolve, 300));
  await eventually(
    async () => a.mayReceive(quiet, 'request.completed', null),
    (v) => !v,
    10_000,
  );
  await prisma.$executeRawUnsafe(`UPDATE webhook_endpoints SET status = 'enabled' WHERE tenant_id = $1::uuid`, quiet);
  await eventually(async () => a.mayReceive(quiet, 'request.completed', null), Boolean, 10_000);

  // Disabling announces the tenant too: it is skipped again without waiting for a reload.
  await prisma.$executeRawUnsafe(`UPDATE webhook_endpoints SET status = 'disabled' WHERE tenant_id = $1::uuid`, quiet);
  await eventually(
    async () => b.mayReceive(quiet, 'request.completed', null),
    (v) => !v,
    10_000,
  );
  // Both have heard it before the reload: a notification arriving during a reload is read again
  // after it (the tenant receives everything meanwhile), which an exact answer right after would race.
  await eventually(
    async () => a.mayReceive(quiet, 'request.completed', null),
    (v) => !v,
    10_000,
  );
  await a.reload();
  expect(a.mayReceive(quiet, 'request.completed', null)).toBe(false);
  expect(a.mayReceive(late, 'request.completed', null)).toBe(true);
}, 30_000);

it("skips the types and scopes no endpoint of the tenant takes, and follows another replica's changes and deletions", async () => {
  const s = subscribers();
  const tenant = randomUUID();
  const [p, e, other] = ['project-a', 'env-prod', 'env-staging'];
  await insertEndpoint(tenant, 'enabled', { types: ['request.completed', 'request.failed'], projectId: p, environmentId: e });
  await insertEndpoint(tenant, 'enabled', { types: ['batch.completed'], projectId: p });
  await s.reload();
  const may = (type: string, scope: { projectId: string; environmentId: string } | null | 'tenant') => s.mayReceive(tenant, type, scope);
  await eventually(
    async () => may('request.running', null),
    (v) => !v,
    10_000,
  );
  // The project-and-environment endpoint: its types, its project and environment only.
  expect(may('request.completed', { projectId: p, environmentId: e })).toBe(true);
  expect(may('request.failed', { projectId: p, environmentId: e })).toBe(true);
  expect(may('request.completed', { projectId: p, environmentId: other })).toBe(false);
  expect(may('request.completed', { projectId: 'project-b', environmentId: e })).toBe(false);
  expect(may('request.completed', null)).toBe(false); // a request of no project reaches tenant-wide endpoints only
  expect(may('request.running', { projectId: p, environmentId: e })).toBe(false);
  // The project-wide endpoint takes its type in any environment of the project; a tenant-level fact reaches every endpoint.
  expect(may('batch.completed', { projectId: p, environmentId: other })).toBe(true);
  expect(may('batch.completed', 'tenant')).toBe(true);
  expect(may('billing.balance_low', 'tenant')).toBe(false);

  // Another replica makes the first endpoint tenant-wide for request.running: heard through the notification.
  await prisma.$executeRawUnsafe(
    `UPDATE webhook_endpoints SET project_id = NULL, environment_id = NULL, event_types = ARRAY['request.running'] WHERE tenant_id = $1::uuid AND environment_id = $2`,
    tenant,
    e,
  );
  await eventually(async () => may('request.running', null), Boolean, 10_000);
  await eventually(
    async () => may('request.completed', { projectId: p, environmentId: e }),
    (v) => !v,
    10_000,
  );
  // Deleted: nothing of the tenant is fanned out any more.
  await prisma.$executeRawUnsafe(`DELETE FROM webhook_endpoints WHERE tenant_id = $1::uuid`, tenant);
  await eventually(
    async () => [may('request.running', null), may('batch.completed', 'tenant')],
    (v) => v.every((x) => !x),
    10_000,
  );
}, 30_000);

it('while its listening connection is down it skips nobody, and it reads the table again when it is back', async () => {
  const url = new URL(db.url);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(url.port || 5432) });
  url.port = String(proxy.port);
  const s = subscribers(url.toString());
  const stranger = randomUUID();
  await eventually(
    async () => s.mayReceive(stranger, 'request.completed', null),
    (v) => !v,
    10_000,
  );

  proxy.cut();
  await eventually(async () => s.mayReceive(stranger, 'request.completed', null), Boolean, 10_000);
  // An endpoint committed while it cannot hear: after the reconnection it is known from the reload.
  const missed = randomUUID();
  await insertEndpoint(missed);
  proxy.restore();
  await eventually(
    async () => [s.mayReceive(stranger, 'request.completed', null), s.mayReceive(missed, 'request.completed', null)],
    (v) => v[0] === false && v[1] === true,
    15_000,
  );
  await proxy.close();
}, 40_000);
