-- The outbox relay deletes the rows it published instead of marking them (`published_at`) and
-- purging them a day later (@wdr/kit OutboxRelay): the mark was a non-HOT update, since the column
-- was indexed for the relay's read, and the purge a third write. The table now holds only what
-- waits, which the relay reads in primary-key order, so the index goes, and with it the rows
-- already published. `published_at` stays for one release: relays of the previous version still
-- mark during a rolling upgrade, and the new relay skips and deletes what they mark.
DELETE FROM "outbox_messages" WHERE "published_at" IS NOT NULL;
DROP INDEX "outbox_messages_published_at_id_idx";
