-- Credit leases (issue 24, item 2): a block of a tenant's tokens granted to fetch-orchestrator, which
-- admits common requests from it without a ledger call each. The tokens sit on the lease's own
-- account (`lease:<id>`, no overdraft); every move is a posted transfer: `lease:<id>:grant:<n>`
-- tenant -> lease, `use:<request id>` lease -> revenue:usage, `lease:<id>:return` lease -> tenant.
CREATE TABLE "leases" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "plan_id" TEXT NOT NULL,
    "pricing_version" INTEGER NOT NULL,
    "granted" BIGINT NOT NULL DEFAULT 0,
    "used" BIGINT NOT NULL DEFAULT 0,
    "returned" BIGINT NOT NULL DEFAULT 0,
    "state" TEXT NOT NULL DEFAULT 'open',
    "admit_until" TIMESTAMPTZ(3) NOT NULL,
    "return_after" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "returned_at" TIMESTAMPTZ(3),

    CONSTRAINT "leases_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "leases_state_check" CHECK ("state" IN ('open', 'returned')),
    -- granted = used + returned + what the lease's account still has, and that is never negative.
    CONSTRAINT "leases_amounts_check" CHECK ("used" >= 0 AND "returned" >= 0 AND "granted" >= "used" + "returned")
);

CREATE INDEX "leases_tenant_id_state_idx" ON "leases"("tenant_id", "state");
CREATE INDEX "leases_state_return_after_idx" ON "leases"("state", "return_after");
