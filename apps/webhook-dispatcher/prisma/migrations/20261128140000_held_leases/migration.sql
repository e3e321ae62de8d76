-- The leases senders hold (domain/claim.ts): a claim counts an endpoint's held leases to know how
-- many more it may take. It read them as the future range of the due index, which also holds every
-- message waiting for a retry: an endpoint whose receiver had been failing for an hour made each
-- claim of it read its whole retry backlog. A claim token is set only while a sender holds (or held,
-- until a claim or a result clears it) a pending message, so this index holds the leases alone.
CREATE INDEX "webhook_messages_leased_idx" ON "webhook_messages"("endpoint_id", "claimed_until") WHERE "claim_token" IS NOT NULL;
