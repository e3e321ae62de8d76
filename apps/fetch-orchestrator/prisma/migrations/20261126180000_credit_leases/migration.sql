-- Credit leases (issue 24, item 2): blocks of a tenant's tokens granted by the ledger, spread over
-- LEASE_SLOTS rows per tenant; admission takes a request's hold from a slot in the statement that
-- stores the request. `pending_lease_id`/`pending_n` name a grant asked for and not yet answered:
-- written before the call, cleared with the credit, so a crash on either side re-asks the same ids.
CREATE TABLE "tenant_leases" (
    "tenant_id" UUID NOT NULL,
    "slot" INTEGER NOT NULL,
    "lease_id" UUID,
    "n" INTEGER NOT NULL DEFAULT 0,
    "granted" BIGINT NOT NULL DEFAULT 0,
    "held" BIGINT NOT NULL DEFAULT 0,
    "admit_until" TIMESTAMPTZ(3) NOT NULL DEFAULT '-infinity',
    "plan_id" TEXT,
    "pricing_version" INTEGER,
    "policy" TEXT,
    "prices" JSONB,
    "pending_lease_id" UUID,
    "pending_n" INTEGER,
    "retry_after" TIMESTAMPTZ(3) NOT NULL DEFAULT '-infinity',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_leases_pkey" PRIMARY KEY ("tenant_id", "slot"),
    -- The orchestrator never holds more than was granted.
    CONSTRAINT "tenant_leases_held_check" CHECK ("held" >= 0 AND "held" <= "granted")
);

CREATE INDEX "tenant_leases_lease_id_idx" ON "tenant_leases"("lease_id");

-- A request admitted from a lease: the lease and the plan it was priced with (its hold is base_tokens).
ALTER TABLE "data_requests" ADD COLUMN "lease_id" UUID, ADD COLUMN "lease_plan_id" TEXT;
