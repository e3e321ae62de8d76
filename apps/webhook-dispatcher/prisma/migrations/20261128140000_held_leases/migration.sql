-- Held leases apart from the due messages (domain/claim.ts). A claim counts an endpoint's held
-- leases to know how many more it may take; it read them as the future range of the due index,
-- which also holds every message waiting for a retry: an endpoint whose receiver had been failing
-- made each claim of it read its whole retry backlog. A message carries a claim token exactly while
-- a sender holds it (or held it, until the lease is swept once it ran out), so:
--   the due index holds the pending messages no sender holds (a claim takes a message out of it),
--   the leases' index holds the held ones, by endpoint and the end of their lease.
-- A message moves from one to the other instead of taking a second entry in the due index: no
-- index more per delivery than before.
-- Both indexes are built under a lock that holds writes to the table back for the build; and until
-- every replica runs the code that names `claim_token IS NULL`, an older replica's claims cannot use
-- the new due index (deploy the dispatcher whole: one Deployment rollout, then old pods are gone).
DROP INDEX "webhook_messages_due_idx";
CREATE INDEX "webhook_messages_due_idx" ON "webhook_messages"("endpoint_id", "next_attempt_at") WHERE "status" = 'pending' AND "claim_token" IS NULL;
CREATE INDEX "webhook_messages_leased_idx" ON "webhook_messages"("endpoint_id", "claimed_until") WHERE "claim_token" IS NOT NULL;
