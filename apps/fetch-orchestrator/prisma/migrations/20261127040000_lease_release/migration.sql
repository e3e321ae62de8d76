-- Credit leases: the early return of what a lease that stopped admitting never held. A slot whose
-- lease is replaced writes the old lease and its final holds here (release_*) before asking for the
-- new one; a pass sends each to the ledger (idempotent per lease) and then clears it, recording
-- the lease in released_lease_id so an expired lease left in its slot is released once.
ALTER TABLE "tenant_leases"
    ADD COLUMN "release_lease_id" UUID,
    ADD COLUMN "release_held" BIGINT,
    ADD COLUMN "released_lease_id" UUID;
