-- Retention (domain/retention.ts): finished messages (delivered or failed) and their attempts are
-- deleted WEBHOOK_RETENTION_HOURS after they were created, oldest first, in bounded batches.
CREATE INDEX "webhook_messages_finished_created_idx" ON "webhook_messages"("created_at") WHERE "status" <> 'pending';
