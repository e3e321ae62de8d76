import { randomUUID } from 'node:crypto';
import { expect, it } from '@jest/globals';
import { withDatabase } from '@wdr/testkit';
import { orchestratorDatabase } from './database.js';

/**
 * The index of a batch's jobs holds the jobs of batches only: a single request (batch_id NULL,
 * most of them) writes no entry into it on its insert nor on its status moves, and every reader of
 * a batch's jobs (`batch_id = $1`, a parameter, as the statements and Prisma send it) still reads it.
 */
const testDb = orchestratorDatabase();

it('indexes the jobs of batches only, and reads a batch through it with its id as a parameter', async () => {
  const found = await withDatabase(testDb.url, async (c) => {
    const tenant = randomUUID();
    const batch = randomUUID();
    const insertRequests = (n: number, batchId: string | null) =>
      c.query(
        `INSERT INTO data_requests (id, tenant_id, url_origin, target_purge_at, status, route_mode, pricing_version, base_tokens, token_state, options, batch_id, batch_index)
         SELECT gen_random_uuid(), $1::uuid, 'http://127.0.0.1:9', now(), 'completed', 'http', 2, 1, 'settled', '{}'::jsonb, $2::uuid,
                CASE WHEN $2::uuid IS NULL THEN NULL ELSE i - 1 END
           FROM generate_series(1, $3::int) AS i`,
        [tenant, batchId, n],
      );
    await c.query(
      `INSERT INTO batches (id, tenant_id, input_hash, route_mode, pricing_version, total_jobs, charged_tokens) VALUES ($1, $2, 'h', 'http', 2, 3, 3)`,
      [batch, tenant],
    );
    await insertRequests(5000, null);
    await insertRequests(3, batch);
    // A status move of every single request (not HOT: the status is indexed) adds nothing to it either.
    await c.query(`UPDATE data_requests SET status = 'failed' WHERE batch_id IS NULL`);
    await c.query('VACUUM (ANALYZE) data_requests');
    const entries = await c.query<{ n: string }>(
      `SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'data_requests_batch_id_batch_index_idx'`,
    );
    // The plan a prepared statement keeps for any batch id (a generic plan), as drivers run it.
    await c.query('SET plan_cache_mode = force_generic_plan');
    await c.query('PREPARE jobs(uuid) AS SELECT id, status FROM data_requests WHERE batch_id = $1 ORDER BY batch_index');
    const plan = JSON.stringify((await c.query(`EXPLAIN (FORMAT JSON) EXECUTE jobs('${batch}')`)).rows[0]);
    const jobs = await c.query(`EXECUTE jobs('${batch}')`);
    return { entries: Number(entries.rows[0]!.n), plan, jobs: jobs.rowCount };
  });
  expect(found.entries).toBe(3);
  expect(found.plan).toContain('"Index Name":"data_requests_batch_id_batch_index_idx"');
  expect(found.plan).not.toContain('Seq Scan');
  expect(found.jobs).toBe(3);
}, 60_000);
