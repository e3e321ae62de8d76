-- Paid LLM operations of recipe generation and repair (issue 11): the preflight hold and its resolution.
CREATE TABLE "llm_charges" (
    "operation_id" TEXT NOT NULL,
    "tenant_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "held_tokens" BIGINT NOT NULL,
    "charged_tokens" BIGINT NOT NULL DEFAULT 0,
    "uncollected_tokens" BIGINT NOT NULL DEFAULT 0,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "provider_cost_nano_usd" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "llm_charges_pkey" PRIMARY KEY ("operation_id"),
    CONSTRAINT "llm_charges_state_check" CHECK ("state" IN ('held', 'charged', 'released')),
    CONSTRAINT "llm_charges_amounts_check" CHECK ("held_tokens" >= 0 AND "charged_tokens" >= 0 AND "uncollected_tokens" >= 0)
);

CREATE INDEX "llm_charges_tenant_id_created_at_idx" ON "llm_charges"("tenant_id", "created_at");
