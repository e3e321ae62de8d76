import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PgSql } from '@wdr/kit/pg-sql';
import { Sealer } from '@wdr/kit/sealing';
import { Prisma } from '../src/generated/prisma/client.js';
import { requestRow } from '../src/domain/requests/read.js';
import { orchestratorDatabase, requestRowOf } from './database.js';

/**
 * requestRow (domain/requests/read.ts) against the real Postgres: the row it reads on node-postgres
 * is the row Prisma's findUnique answers, field for field and value for value, with every field of
 * the model set and with every nullable one null.
 */
const testDb = orchestratorDatabase();
const sealer = Sealer.fromKeys({ id: 'k1', key: Buffer.alloc(32, 7) });
let sql: PgSql | undefined;
const pgSql = () => (sql ??= new PgSql(testDb.url, { max: 1 }));

afterAll(async () => {
  await sql?.end();
});

describe('requestRow', () => {
  it('answers what Prisma answers, with every field of the model set', async () => {
    const id = randomUUID();
    const at = (s: number) => new Date(Date.UTC(2026, 10, 28, 8, 0, s, 123));
    const batch = await testDb.db.batch.create({
      data: {
        id: randomUUID(),
        tenantId: randomUUID(),
        inputHash: 'h',
        routeMode: 'browser',
        pricingVersion: 4,
        totalJobs: 4,
        chargedTokens: 20,
      },
    });
    const data = requestRowOf(sealer, batch.tenantId, {
      id,
      url: 'https://shop.example/p?q=1',
      batchId: batch.id,
      batchIndex: 3,
      retriedFromId: randomUUID(),
      secretsSealed: sealer.seal('{"headers":{"x":"y"}}', `inputs:${id}`),
      status: 'completed',
      routeMode: 'browser',
      proxyType: 'residential',
      pricingVersion: 4,
      baseTokens: 5,
      protectedTokens: 2,
      captchaTokens: 10,
      captchaType: 'recaptcha_v2',
      tokenState: 'settled',
      cached: true,
      protected: true,
      options: { timeout_ms: 30000, header_names: ['x'], nested: { list: [1, 'two', null, true] } },
      error: { code: 'X', message: 'm' },
      userError: { code: 'Y', message: 'n' },
      resultMeta: { stage: 'browser', status_code: 200, bytes: 1234 },
      proxyUsed: 'exit-1',
      debugArtifacts: [{ name: 'screenshot.png', bytes: 10 }],
      lastEventSeq: 7,
      attempts: 2,
      createdAt: at(1),
      startedAt: at(2),
      finishedAt: at(3),
      resultExpiresAt: at(4),
      trafficCarried: { proxy_type: 'residential', bytes: 99, measured: true },
      projectId: randomUUID(),
      environmentId: randomUUID(),
      workflowId: randomUUID(),
      workflowVersionId: randomUUID(),
      budgetCommitted: 12,
      leaseId: randomUUID(),
      leasePlanId: 'plan-a',
      claimedUntil: at(5),
    });
    await testDb.db.dataRequest.create({ data });
    const prisma = await testDb.db.dataRequest.findUnique({ where: { id } });
    // Every scalar field of the model is set in this row: none is compared as a pair of nulls.
    for (const field of Object.values(Prisma.DataRequestScalarFieldEnum)) expect([field, prisma?.[field]]).not.toEqual([field, null]);
    expect(await requestRow(pgSql(), id)).toEqual(prisma);
  });

  it('answers what Prisma answers with every nullable field null, and null for no such request', async () => {
    const id = randomUUID();
    await testDb.db.dataRequest.create({ data: requestRowOf(sealer, randomUUID(), { id, proxyType: null }) });
    const prisma = await testDb.db.dataRequest.findUnique({ where: { id } });
    expect(prisma?.error).toBeNull();
    expect(await requestRow(pgSql(), id)).toEqual(prisma);
    expect(await requestRow(pgSql(), randomUUID())).toBeNull();
  });
});
