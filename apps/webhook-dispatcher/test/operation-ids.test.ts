import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { webhooksApi } from '@wdr/contracts';
import { prismaClientOptions } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import { createServiceClient, type ServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { Sealer } from '@wdr/kit/sealing';
import {
  createTestDatabase,
  startServiceProcess,
  withDatabase,
  type ServiceProcess,
  type TestDatabase,
  testCallerCredentials,
} from '@wdr/testkit';
import { sealedSecretAad } from '../src/deps.js';
import { purgeEndpointOperations } from '../src/domain/operations.js';
import { PrismaClient } from '../src/generated/prisma/client.js';

/**
 * Endpoint writes under an `operation_id` (the gateway's, derived from tenant + Idempotency-Key),
 * through the dispatcher's internal API as a real process: a repeat answers the first answer and
 * changes nothing, another write under the id is IDEMPOTENCY_CONFLICT. This is what makes a gateway
 * retry safe when the dispatcher applied a write and the gateway's own transaction did not commit.
 */
const SECRET_KEY = Buffer.alloc(32, 23).toString('base64');
let database: TestDatabase;
let dispatcher: ServiceProcess;
let client: ServiceClient;
let prisma: PrismaClient;
const sealer = Sealer.fromBase64(SECRET_KEY);

beforeAll(async () => {
  database = await createTestDatabase('webhook-dispatcher');
  dispatcher = await startServiceProcess('webhook-dispatcher', {
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    TARGET_ALLOWLIST: '127.0.0.1',
    WEBHOOK_SECRET_KEY: SECRET_KEY,
  });
  client = createServiceClient({ name: 'webhook-dispatcher', baseUrl: dispatcher.url, identity: testCallerCredentials('gateway') });
  prisma = new PrismaClient(prismaClientOptions(database.url));
}, 120_000);

afterAll(async () => {
  await dispatcher?.kill('SIGTERM');
  await prisma?.$disconnect();
  await database?.drop();
}, 60_000);

const SCOPE = { project_id: 'p-1', environment_id: 'production' };

async function endpoint(tenant = randomUUID(), scope = SCOPE) {
  const created = await callInternal(client, webhooksApi.createEndpoint, {
    body: { tenant_id: tenant, ...scope, url: 'http://127.0.0.1:9/hook', event_types: ['request.completed'] },
  });
  return { tenant, id: created.endpoint.id, secret: created.secret };
}

const sql = <T>(query: string, params: unknown[] = []) =>
  withDatabase(database.url, async (c) => (await c.query(query, params)).rows as T[]);

/** The endpoint's current and previous secrets, opened as the sender opens them. */
async function secretsOf(endpointId: string): Promise<{ current: string; previous: string | null } | undefined> {
  const [row] = await sql<{ secret_sealed: string; previous_secret_sealed: string | null }>(
    'SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints WHERE id = $1::uuid',
    [endpointId],
  );
  if (!row) return undefined;
  const aad = sealedSecretAad(endpointId);
  return {
    current: sealer.open(row.secret_sealed, aad),
    previous: row.previous_secret_sealed ? sealer.open(row.previous_secret_sealed, aad) : null,
  };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('operation ids', () => {
  it('a rotation repeated under its operation id answers the same secret and rotates once: the previous secret is still the original', async () => {
    const e = await endpoint();
    const operation_id = randomUUID();
    const rotate = () =>
      callInternal(client, webhooksApi.rotateSecret, {
        params: { endpointId: e.id },
        body: { tenant_id: e.tenant, operation_id, in_scope: SCOPE, previous_valid_seconds: 3600 },
      });
    const first = await rotate();
    const again = await rotate();
    expect(first.secret).toMatch(/^whsec_/);
    expect(first.secret).not.toBe(e.secret);
    expect(again).toEqual(first);
    expect(await secretsOf(e.id)).toEqual({ current: first.secret, previous: e.secret });
    // The recorded secret is sealed, never in clear.
    const [op] = await sql<{ secret_sealed: string; kind: string }>(
      'SELECT secret_sealed, kind FROM endpoint_operations WHERE id = $1::uuid',
      [operation_id],
    );
    expect(op?.kind).toBe('rotate_secret');
    expect(op?.secret_sealed).not.toContain(first.secret);
    // Without an operation id every rotation is new.
    const plain = { tenant_id: e.tenant, previous_valid_seconds: 3600 };
    const a = await callInternal(client, webhooksApi.rotateSecret, { params: { endpointId: e.id }, body: plain });
    const b = await callInternal(client, webhooksApi.rotateSecret, { params: { endpointId: e.id }, body: plain });
    expect(a.secret).not.toBe(b.secret);
    expect(await secretsOf(e.id)).toEqual({ current: b.secret, previous: a.secret });
  });

  it('concurrent repeats of one rotation make one secret', async () => {
    const e = await endpoint();
    const operation_id = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        callInternal(client, webhooksApi.rotateSecret, {
          params: { endpointId: e.id },
          body: { tenant_id: e.tenant, operation_id, previous_valid_seconds: 60 },
        }),
      ),
    );
    expect(new Set(answers.map((a) => a.secret)).size).toBe(1);
    expect(await secretsOf(e.id)).toEqual({ current: answers[0]!.secret, previous: e.secret });
  });

  it('a deletion repeated under its operation id answers {deleted: true} again; without one a second delete is NOT_FOUND', async () => {
    const e = await endpoint();
    const body = { tenant_id: e.tenant, operation_id: randomUUID(), in_scope: SCOPE };
    expect(await callInternal(client, webhooksApi.deleteEndpoint, { params: { endpointId: e.id }, body })).toEqual({ deleted: true });
    expect(await secretsOf(e.id)).toBeUndefined();
    expect(await callInternal(client, webhooksApi.deleteEndpoint, { params: { endpointId: e.id }, body })).toEqual({ deleted: true });

    const f = await endpoint();
    await callInternal(client, webhooksApi.deleteEndpoint, { params: { endpointId: f.id }, body: { tenant_id: f.tenant } });
    const err = await failure(
      callInternal(client, webhooksApi.deleteEndpoint, { params: { endpointId: f.id }, body: { tenant_id: f.tenant } }),
    );
    expect(err).toBeInstanceOf(PublicError);
    expect(err).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('an update or a disable repeated answers its first answer and undoes nothing done since', async () => {
    const e = await endpoint();
    const params = { endpointId: e.id };
    const first = { tenant_id: e.tenant, operation_id: randomUUID(), description: 'first' };
    const updated = await callInternal(client, webhooksApi.updateEndpoint, { params, body: first });
    expect(updated.description).toBe('first');
    await callInternal(client, webhooksApi.updateEndpoint, { params, body: { tenant_id: e.tenant, description: 'second' } });
    expect(await callInternal(client, webhooksApi.updateEndpoint, { params, body: first })).toEqual(updated);
    expect((await callInternal(client, webhooksApi.readEndpoint, { params, query: { tenant_id: e.tenant } })).description).toBe('second');

    const disable = { tenant_id: e.tenant, operation_id: randomUUID() };
    const disabled = await callInternal(client, webhooksApi.disableEndpoint, { params, body: disable });
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'manual' });
    await callInternal(client, webhooksApi.updateEndpoint, { params, body: { tenant_id: e.tenant, enabled: true } });
    expect(await callInternal(client, webhooksApi.disableEndpoint, { params, body: disable })).toEqual(disabled);
    expect((await callInternal(client, webhooksApi.readEndpoint, { params, query: { tenant_id: e.tenant } })).status).toBe('enabled');
  });

  it('the same operation id with another write is IDEMPOTENCY_CONFLICT: another body, kind, endpoint or tenant', async () => {
    const e = await endpoint();
    const other = await endpoint(e.tenant);
    const operation_id = randomUUID();
    await callInternal(client, webhooksApi.rotateSecret, {
      params: { endpointId: e.id },
      body: { tenant_id: e.tenant, operation_id, previous_valid_seconds: 0 },
    });
    const after = await secretsOf(e.id);
    const attempts = [
      callInternal(client, webhooksApi.rotateSecret, {
        params: { endpointId: e.id },
        body: { tenant_id: e.tenant, operation_id, previous_valid_seconds: 60 },
      }),
      callInternal(client, webhooksApi.rotateSecret, {
        params: { endpointId: e.id },
        body: { tenant_id: e.tenant, operation_id, previous_valid_seconds: 0, in_scope: SCOPE },
      }),
      callInternal(client, webhooksApi.deleteEndpoint, { params: { endpointId: e.id }, body: { tenant_id: e.tenant, operation_id } }),
      callInternal(client, webhooksApi.rotateSecret, {
        params: { endpointId: other.id },
        body: { tenant_id: e.tenant, operation_id, previous_valid_seconds: 0 },
      }),
      callInternal(client, webhooksApi.rotateSecret, {
        params: { endpointId: e.id },
        body: { tenant_id: randomUUID(), operation_id, previous_valid_seconds: 0 },
      }),
    ];
    for (const attempt of attempts) {
      const err = await failure(attempt);
      expect(err).toBeInstanceOf(PublicError);
      expect(err).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
    }
    expect(await secretsOf(e.id)).toEqual(after);
    expect(await secretsOf(other.id)).toEqual({ current: other.secret, previous: null });
  });

  it('in_scope: an endpoint of another project or environment is NOT_FOUND to every write, and a write that failed records nothing', async () => {
    const e = await endpoint();
    const params = { endpointId: e.id };
    for (const in_scope of [
      { project_id: 'p-2', environment_id: 'production' },
      { project_id: 'p-1', environment_id: 'staging' },
    ]) {
      const base = { tenant_id: e.tenant, in_scope };
      const failures = [
        callInternal(client, webhooksApi.updateEndpoint, { params, body: { ...base, operation_id: randomUUID(), description: 'x' } }),
        callInternal(client, webhooksApi.disableEndpoint, { params, body: { ...base, operation_id: randomUUID() } }),
        callInternal(client, webhooksApi.deleteEndpoint, { params, body: { ...base, operation_id: randomUUID() } }),
        callInternal(client, webhooksApi.rotateSecret, {
          params,
          body: { ...base, operation_id: randomUUID(), previous_valid_seconds: 0 },
        }),
      ];
      for (const f of failures) expect(await failure(f)).toMatchObject({ code: 'NOT_FOUND' });
    }
    const [{ n }] = (await sql<{ n: string }>('SELECT count(*) AS n FROM endpoint_operations WHERE endpoint_id = $1::uuid', [e.id])) as [
      { n: string },
    ];
    expect(Number(n)).toBe(0);
    const view = await callInternal(client, webhooksApi.readEndpoint, { params, query: { tenant_id: e.tenant } });
    expect(view).toMatchObject({ status: 'enabled', description: null });
    expect(await secretsOf(e.id)).toEqual({ current: e.secret, previous: null });
    // A retry of the failed write under the same id, now in scope, is applied (nothing was recorded).
    const operation_id = randomUUID();
    await failure(
      callInternal(client, webhooksApi.deleteEndpoint, {
        params,
        body: { tenant_id: e.tenant, operation_id, in_scope: { project_id: 'p-2', environment_id: 'production' } },
      }),
    );
    await expect(
      callInternal(client, webhooksApi.deleteEndpoint, { params, body: { tenant_id: e.tenant, operation_id, in_scope: SCOPE } }),
    ).resolves.toEqual({ deleted: true });
  });

  it('operations older than the retention are purged in batches; the id is then a new write', async () => {
    const e = await endpoint();
    const ids = Array.from({ length: 5 }, () => randomUUID());
    for (const operation_id of ids) {
      await callInternal(client, webhooksApi.updateEndpoint, {
        params: { endpointId: e.id },
        body: { tenant_id: e.tenant, operation_id, description: operation_id },
      });
    }
    await sql(`UPDATE endpoint_operations SET created_at = now() - interval '25 hours' WHERE id = ANY($1::uuid[])`, [ids.slice(0, 4)]);
    expect(await purgeEndpointOperations(prisma, new Date(Date.now() - 24 * 3_600_000), 3)).toBe(4);
    const left = await sql<{ id: string }>('SELECT id::text FROM endpoint_operations WHERE id = ANY($1::uuid[])', [ids]);
    expect(left.map((r) => r.id)).toEqual([ids[4]]);
    // Forgotten: the same id with another write is applied instead of refused.
    const again = await callInternal(client, webhooksApi.updateEndpoint, {
      params: { endpointId: e.id },
      body: { tenant_id: e.tenant, operation_id: ids[0]!, description: 'new' },
    });
    expect(again.description).toBe('new');
  });
});
