-- HTTP stages run where they were admitted (domain/local-runs.ts): a request admitted into a free
-- local slot is stored claimed until this deadline, without a fetch.jobs message; the running
-- instance renews it, and any instance sweeps a claim that ran out into a job on the outbox.
-- Cleared by the move that ends the stage (or hands it to the browser), so the partial index holds
-- only the stages running now.
ALTER TABLE "data_requests" ADD COLUMN "claimed_until" TIMESTAMPTZ(3);
CREATE INDEX "data_requests_claimed_until_idx" ON "data_requests" ("claimed_until") WHERE "claimed_until" IS NOT NULL;
