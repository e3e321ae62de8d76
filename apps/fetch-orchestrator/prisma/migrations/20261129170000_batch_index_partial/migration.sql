-- The index of a batch's jobs held an entry for every request, batch or not (batch_id NULL for
-- single requests, most of them), written on every insert and again on every update that cannot
-- be HOT (each status move changes the indexed status): two or three index entries per request
-- that no query reads. Every reader of it asks for one batch (`batch_id = $1`, the jobs of a
-- batch, its end, the foreign key's check), which implies the predicate, so a partial index
-- serves them all. Same name, same columns.
DROP INDEX "data_requests_batch_id_batch_index_idx";
CREATE INDEX "data_requests_batch_id_batch_index_idx" ON "data_requests" ("batch_id", "batch_index")
  WHERE "batch_id" IS NOT NULL;
