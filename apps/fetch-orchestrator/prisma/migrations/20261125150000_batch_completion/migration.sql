-- A batch is announced complete (`batch.completed` on request.lifecycle) once, by the transaction
-- that ends its last job: `finished_at` marks that it was.
ALTER TABLE "batches" ADD COLUMN "finished_at" TIMESTAMPTZ(3);
