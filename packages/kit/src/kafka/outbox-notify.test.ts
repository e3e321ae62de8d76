import { describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, SERVICE_NAMES, withDatabase } from '@wdr/testkit';
import { OUTBOX_CHANNEL } from './outbox.js';

/**
 * The outbox's insert trigger, as every service's migrations leave it: a commit wakes the relays
 * (NOTIFY wdr_outbox, '<schema>') only when one of its statements inserted rows. Statements that
 * insert none (a move's lifecycle mirror without a listener, an admission refused inside its
 * statement) used to notify as well, and every replica's relay ran a round that found nothing.
 */
describe('outbox insert trigger, every service with an outbox', () => {
  it('notifies at the commit of a statement that inserted rows, once per transaction, never for one that inserted none', async () => {
    const checked: string[] = [];
    for (const service of SERVICE_NAMES) {
      const database = await createTestDatabase(service);
      try {
        await withDatabase(database.url, async (listener) => {
          const [{ outbox } = { outbox: false }] = (
            await listener.query<{ outbox: boolean }>(`SELECT to_regclass('outbox_messages') IS NOT NULL AS outbox`)
          ).rows;
          if (!outbox) return;
          checked.push(service);
          const schema = (await listener.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
          const heard: string[] = [];
          listener.on('notification', (n) => {
            if (n.channel === OUTBOX_CHANNEL) heard.push(n.payload ?? '');
          });
          await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
          const insert = (where: string) =>
            `INSERT INTO outbox_messages (topic, message_key, envelope) SELECT 'renderJobs', 'k', '{}'::jsonb FROM generate_series(1, 2) WHERE ${where}`;
          await withDatabase(database.url, async (c) => {
            // Nothing inserted: in a transaction of its own, and in a CTE as the services write it.
            await c.query(insert('false'));
            await c.query(`WITH o AS (${insert('false')}) SELECT 1`);
            // Rows inserted, then rolled back: no notification either.
            await c.query('BEGIN');
            await c.query(insert('true'));
            await c.query('ROLLBACK');
            // Two statements with rows and one without, committed together: one notification.
            await c.query('BEGIN');
            await c.query(insert('true'));
            await c.query(insert('false'));
            await c.query(`WITH o AS (${insert('true')}) SELECT 1`);
            await c.query('COMMIT');
          });
          // Notifications reach the listener in commit order: a probe committed after them marks the end.
          await listener.query(`NOTIFY ${OUTBOX_CHANNEL}, 'probe'`);
          await eventually(
            async () => heard,
            (h) => h.includes('probe'),
            5_000,
            20,
          );
          expect({ service, heard }).toEqual({ service, heard: [schema, 'probe'] });
        });
      } finally {
        await database.drop();
      }
    }
    expect(checked).toEqual(['billing-ledger', 'fetch-orchestrator', 'browser-renderer', 'recipe-extractor', 'webhook-dispatcher']);
  }, 60_000);
});
