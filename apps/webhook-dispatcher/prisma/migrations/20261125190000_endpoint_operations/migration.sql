-- Applied endpoint writes by operation id (domain/operations.ts): update, disable, delete and secret
-- rotation sent with an `operation_id` (the gateway's, from tenant + Idempotency-Key) answer a repeat
-- with the recorded result. No foreign key: a deletion's record outlives its endpoint. Purged after
-- OPERATION_RETENTION_HOURS, oldest first (created_at index).
CREATE TABLE "endpoint_operations" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "input_hash" TEXT NOT NULL,
    "result" JSONB,
    "secret_sealed" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "endpoint_operations_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "endpoint_operations_created_idx" ON "endpoint_operations"("created_at");
