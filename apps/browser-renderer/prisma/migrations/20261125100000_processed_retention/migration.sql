-- processed_messages is purged after PROCESSED_RETENTION_HOURS (see purgeProcessed in @wdr/kit):
-- the purge finds old records by this index instead of scanning the table.
CREATE INDEX "processed_messages_processed_at_idx" ON "processed_messages"("processed_at");
