import { randomUUID } from 'node:crypto';
import { expect, it } from '@jest/globals';
import { withDatabase } from '@wdr/testkit';
import { CLEAR_INPUTS_SQL } from '../src/domain/requests/sealed-inputs.js';
import { PURGE_RESULTS_SQL, PURGE_TARGETS_SQL } from '../src/domain/retention.js';
import { orchestratorDatabase } from './database.js';

/**
 * What the retention pass reads, every minute in every replica: each of its statements over the
 * request tables reads an index of only what it can touch, not the tables' history (before, two
 * scans of `data_requests` and one of `request_results` per pass).
 */
const testDb = orchestratorDatabase();

it('reads the rows due for purge, sealing or expiry from their indexes, never the whole request tables', async () => {
  const plans = await withDatabase(testDb.url, async (c) => {
    const tenant = randomUUID();
    // History: requests whose target and inputs were purged long ago, each with a stored result
    // still kept; and live requests, target sealed and purged tomorrow, their inputs sealed.
    await c.query(
      `INSERT INTO data_requests (id, tenant_id, url_origin, target_purge_at, status, route_mode, pricing_version, base_tokens, token_state, options, created_at)
       SELECT gen_random_uuid(), $1::uuid, 'http://127.0.0.1:9', now() - interval '30 days', 'completed', 'http', 2, 1, 'settled', '{"header_names": ["x-a"]}'::jsonb, now() - interval '40 days'
         FROM generate_series(1, 5000)`,
      [tenant],
    );
    await c.query(
      `INSERT INTO request_results (request_id, status_code, content_type, body, bytes, expires_at)
       SELECT id, 200, 'text/html', '\\x00'::bytea, 1, now() + interval '1 day' FROM data_requests`,
    );
    await c.query(
      `INSERT INTO data_requests (id, tenant_id, url_origin, target_sealed, target_purge_at, status, route_mode, pricing_version, base_tokens, token_state, options, created_at)
       SELECT gen_random_uuid(), $1::uuid, 'http://127.0.0.1:9', 'sealed', now() + interval '1 day', 'completed', 'http', 2, 1, 'settled', '{}'::jsonb, now()
         FROM generate_series(1, 500)`,
      [tenant],
    );
    await c.query('ANALYZE data_requests');
    await c.query('ANALYZE request_results');
    const explain = async (sql: string, params: unknown[]) =>
      JSON.stringify((await c.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows[0]!['QUERY PLAN']);
    return {
      targets: await explain(PURGE_TARGETS_SQL, [new Date()]),
      results: await explain(PURGE_RESULTS_SQL, [new Date()]),
      clearInputs: await explain(CLEAR_INPUTS_SQL, [500]),
    };
  });
  expect(plans.targets).toContain('"Index Name":"data_requests_purge_due_idx"');
  expect(plans.results).toContain('"Index Name":"request_results_expires_at_idx"');
  expect(plans.clearInputs).toContain('"Index Name":"data_requests_clear_inputs_idx"');
  for (const plan of Object.values(plans)) expect(plan).not.toContain('Seq Scan');
}, 60_000);
