-- The retention pass (domain/retention.ts, every minute in every replica) read the whole of
-- data_requests and of request_results at each pass, history included. Its purge statements now
-- read an index holding only what they can touch (the sealing step has had its own since
-- 20261126100000_sealed_inputs):
-- requests whose sealed target or inputs still wait for their purge time (rows leave it when purged),
CREATE INDEX "data_requests_purge_due_idx" ON "data_requests" ("target_purge_at")
  WHERE "target_sealed" IS NOT NULL OR "secrets_sealed" IS NOT NULL;
-- and results by their expiry.
CREATE INDEX "request_results_expires_at_idx" ON "request_results" ("expires_at");
