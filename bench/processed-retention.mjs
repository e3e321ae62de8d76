#!/usr/bin/env node
/**
 * What the hourly purge of processed-event records (`processed_messages`, the idempotent
 * consumers' memory; packages/kit/src/kafka/processed-retention.ts) costs: a fresh clone of a
 * service's template database on the real Postgres, `--keep` rows inside the retention and `--rows`
 * past it, then one purgeProcessed() timed (batches of `--batch` rows, as the service runs it),
 * reported as rows/s, beside the table's size before and after. See bench/README.md.
 *
 *   npx turbo run build && node packages/testkit/dist/prepare-templates.js   # once
 *   node bench/processed-retention.mjs [--rows 200000] [--keep 200000] [--batch 5000]
 */
import { parseArgs } from 'node:util';
import { createTestDatabase, pgRawSql } from '@wdr/testkit';
import { purgeProcessed } from '@wdr/kit/kafka';
import { benchReport } from './lib/report.mjs';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    keep: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '5000' },
  },
});
const rows = Number(values.rows);
const keep = Number(values.keep);
const batch = Number(values.batch);
const RETAIN_HOURS = 192;

const database = await createTestDatabase('browser-renderer');
// The kit's raw-SQL surface over node-postgres (it sets the template's schema as search_path).
const db = pgRawSql(database.url);
const query = (sql, params = []) => db.$queryRawUnsafe(sql, ...params);
try {
  const insert = (n, ageHours, consumer) =>
    db.$executeRawUnsafe(
      `INSERT INTO processed_messages (consumer, event_id, processed_at)
       SELECT $3, gen_random_uuid(), now() - ($2::int * interval '1 hour') - (g * interval '1 millisecond') FROM generate_series(1, $1::int) g`,
      n,
      ageHours,
      consumer,
    );
  // Two consumer groups, as a service with two consumers has; the old rows first, as time makes them.
  await insert(Math.ceil(rows / 2), RETAIN_HOURS + 24, 'bench-a');
  await insert(Math.floor(rows / 2), RETAIN_HOURS + 24, 'bench-b');
  await insert(keep, 1, 'bench-a');
  await db.$executeRawUnsafe('VACUUM ANALYZE processed_messages');
  const size = async () => (await query(`SELECT pg_size_pretty(pg_total_relation_size('processed_messages')) AS s`))[0].s;
  const before = await size();

  const t0 = performance.now();
  const deleted = await purgeProcessed(db, RETAIN_HOURS, batch);
  const seconds = (performance.now() - t0) / 1000;
  const left = Number((await query('SELECT count(*) AS n FROM processed_messages'))[0].n);
  const report = benchReport('processed-retention');
  report.check(
    'every row past the retention purged, every recent one kept',
    deleted === rows && left === keep,
    `purged ${deleted} of ${rows}, left ${left} of ${keep}`,
  );
  report.figure('processed-retention: purge rows/s', deleted / seconds, { unit: 'rows/s' });
  process.once('beforeExit', () => report.finish());
  // A purge right after, with nothing left past the retention (before autovacuum has cleaned the
  // index entries of the deleted rows, which it still walks).
  const t1 = performance.now();
  await purgeProcessed(db, RETAIN_HOURS, batch);
  const idleMs = performance.now() - t1;

  console.log(`processed_messages: ${rows} rows past the retention, ${keep} within it; batches of ${batch}`);
  console.log(
    `purge     ${deleted} rows in ${seconds.toFixed(2)} s = ${Math.round(deleted / seconds)} rows/s (${Math.ceil(deleted / batch)} statements)`,
  );
  console.log(`idle run  nothing to purge, right after (dead index entries not vacuumed yet): ${idleMs.toFixed(1)} ms`);
  console.log(
    `table     ${before} before, ${await size()} after (a DELETE does not shrink it: vacuum makes the space reusable by new rows)`,
  );
} finally {
  await db.$disconnect();
  await database.drop();
}
